"""The controller of a campaign run: the bundled stand or walking controller, or the user's own
class named by import path.

The interface (what the bundled HoldingController and WalkingController implement)::

    class MyController:
        def __init__(self, model: RobotModel, **parameters): ...
            # model: the nominal robot (the simulated one may be scaled); parameters: the
            # campaign's controller.parameters with the run's controller.<name> values on top
        control_dt: float                      # optional: tick [s] (else 0.004 s, or the file's)
        def reset(self, q, v, t) -> None: ...  # once, at the initial state
        def update(self, t, q, v, contact_info) -> np.ndarray: ...
            # every control_dt: the measured state -> joint torques (nj,) [N m] in
            # model.joint_names order. q (nq,): base position (world) [m], quaternion (x, y, z,
            # w), joint positions; v (nv,): base twist in the base frame, joint velocities
            # (docs/conventions.md); contact_info: {sole frame name: bool} for the two sole
            # frames ``l_sole``, ``r_sole`` (vertical force above 20 N)
        def set_command(self, vx, vy, yaw_rate) -> None: ...   # optional: the campaign's command

An exception raised by a controller ends that run with failure reason controller_error; the
campaign goes on.
"""

from __future__ import annotations

import copy
import importlib
import sys
from typing import Any, Mapping, Protocol

import numpy as np
import yaml

from humanoid_sim.campaign.campaign_file import SOURCE_ROOT, CampaignFileError, ControllerSpec, resolve_path
from humanoid_sim.campaign.scenario import Scenario
from humanoid_sim.control.holding_controller import HoldingController
from humanoid_sim.control.walking_controller import WalkingController, walking_config_from_dict
from humanoid_sim.model.robot_model import RobotModel

__all__ = ["DEFAULT_CONTROL_DT", "RunController", "SOLE_FRAMES", "build_controller", "import_controller_class"]

DEFAULT_CONTROL_DT = 0.004  # [s]
SOLE_FRAMES = ("l_sole", "r_sole")


class RunController(Protocol):
    """What a campaign run calls (module docstring)."""

    def reset(self, q: np.ndarray, v: np.ndarray, t: float) -> None: ...

    def update(self, t: float, q: np.ndarray, v: np.ndarray,
               contact_info: Mapping[str, bool] | None) -> np.ndarray: ...


def import_controller_class(path: str, search_dir: str | None = None) -> type:
    """The class named "package.module:ClassName" (or "package.module.ClassName"); a module in
    search_dir (the campaign file's folder) is found too. Raises CampaignFileError saying
    what could not be imported."""
    if search_dir is not None and search_dir not in sys.path:
        sys.path.append(search_dir)
    module_name, sep, class_name = path.partition(":")
    if not sep:
        module_name, _, class_name = path.rpartition(".")
    if not module_name or not class_name:
        raise CampaignFileError(f"controller.class = {path!r}: expected \"package.module:ClassName\"")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CampaignFileError(f"controller.class = {path!r}: cannot import {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        names = sorted(n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_"))
        raise CampaignFileError(f"controller.class = {path!r}: no class {class_name!r} in {module_name}; "
                                f"classes there: {', '.join(names) or '(none)'}")
    for method in ("reset", "update"):
        if not callable(getattr(cls, method, None)):
            raise CampaignFileError(f"controller.class = {path!r}: has no {method}() method (see the interface in "
                                    "humanoid_sim/campaign/controllers.py)")
    return cls


def _set_dotted(target: dict[str, Any], name: str, value: Any) -> None:
    keys = name.split(".")
    for key in keys[:-1]:
        node = target.get(key)
        if not isinstance(node, dict):
            node = target[key] = {}
        target = node
    target[keys[-1]] = value


def _walking_parameters(spec: ControllerSpec, overrides: Mapping[str, Any]) -> dict[str, Any]:
    path = spec.walking_config or str(resolve_path("config/walking.yaml", SOURCE_ROOT))
    with open(path, encoding="utf-8") as stream:
        data = yaml.safe_load(stream) or {}
    data = copy.deepcopy(data.get("walking", data))
    for name, value in overrides.items():
        _set_dotted(data, name, value)
    if spec.control_dt is not None:
        data["control_dt"] = spec.control_dt
    return data


def build_controller(spec: ControllerSpec, model: RobotModel, scenario: Scenario) -> tuple[RunController, float]:
    """(controller, control_dt [s]) for a run: spec's parameters with the scenario's
    controller.<name> values on top. ValueError/TypeError/KeyError for bad parameters."""
    parameters: dict[str, Any] = dict(spec.parameters)
    parameters.update(dict(scenario.controller))
    if spec.kind == "walk":
        config = walking_config_from_dict(_walking_parameters(spec, parameters))
        controller: Any = WalkingController(model, config)
        return controller, config.control_dt
    if spec.kind == "stand":
        valid = ("kp", "kd", "bandwidth")
        unknown = sorted(set(parameters) - set(valid))
        if unknown:
            raise KeyError(f"unknown stand controller parameters {unknown}; valid: {', '.join(valid)}")
        controller = HoldingController(model, SOLE_FRAMES, **{k: float(v) for k, v in parameters.items()})
        return controller, spec.control_dt or DEFAULT_CONTROL_DT
    assert spec.class_path is not None
    cls = import_controller_class(spec.class_path, spec.search_dir)
    controller = cls(model, **parameters)
    control_dt = spec.control_dt or float(getattr(controller, "control_dt", DEFAULT_CONTROL_DT))
    return controller, control_dt
