"""The campaign file (YAML): robot, world, controller, duration, fall test and the parameter
space, as frozen dataclasses validated on load.

Layout (every key optional unless marked; examples/campaigns/*.yaml are complete examples)::

    campaign:
      name: walk_push_recovery        # required: names the results folder
      seed: 0                         # seeds the random samples and every run's sensor noise
      duration_s: 4.0                 # required: simulated time per run [s]
      robot:
        urdf: urdf/humanoid.urdf      # relative: to the campaign file, the working directory,
                                      # then the humanoid_sim source tree or installed share
        initial_pose: stand           # a pose of config/initial_poses.yaml
      world:
        physics_dt: 0.001             # [s]
        environment: null             # an environment YAML (config/environment.yaml format)
        terrains:                     # named box sets, chosen per run by the parameter terrain
          step: [{name: step, position_m: [0.6, 0, 0.02], size_m: [0.4, 1.0, 0.04]}]
      controller:
        kind: walk                    # stand | walk | python
        class: null                   # kind python: "package.module:ClassName" (see controllers.py)
        control_dt: null              # [s] controller tick; null: the walking config's, else 0.004
        command: [0.15, 0.0, 0.0]     # walk (and python controllers with set_command):
        command_time_s: 0.0           #   (vx [m/s], vy [m/s], yaw_rate [rad/s]) given at this time
        parameters: {}                # walk: config/walking.yaml keys (file: config/walking.yaml
                                      # by default); stand: kp, kd, bandwidth; python: keyword arguments
        walking_config: null          # walk: a walking YAML instead of the bundled one
      fall:
        min_base_height_m: null       # fell when the base goes below; null: 75 % of its start height
        allowed_contact_links: [l_foot, r_foot]   # any other link touching the ground is a fall
      parameters: {push_link: pelvis} # fixed scenario values (names: scenario.py)
      vary:
        mode: random                  # grid | random
        samples: 1000                 # random only
        parameters:                   # name: [values] | {values: [...]} | {linspace: [lo, hi, n]}
          push_direction_deg: {uniform: [0, 360]}   #   | {uniform: [lo, hi]} (random only)

Every error names the entry and lists the valid keys (CampaignFileError).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from humanoid_sim.campaign.parameter_space import Axis, ParameterSpace, RunSpec, axis_from_yaml, check_names
from humanoid_sim.campaign.scenario import SCENARIO_PARAMETERS, ScenarioError, scenario_from_values
from humanoid_sim.contact.environment import EnvironmentConfigError, StaticBox, environment_from_dict

__all__ = [
    "CONTROLLER_KINDS",
    "Campaign",
    "CampaignFileError",
    "ControllerSpec",
    "FallSpec",
    "RobotSpec",
    "WorldSpec",
    "campaign_from_dict",
    "load_campaign",
]

SOURCE_ROOT = Path(__file__).resolve().parents[2]
CONTROLLER_KINDS = ("stand", "walk", "python")


class CampaignFileError(ValueError):
    """A bad campaign file; the message names the entry and lists the valid keys."""


def _check_keys(raw: Any, where: str, valid: tuple[str, ...], required: tuple[str, ...] = ()) -> Mapping[str, Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise CampaignFileError(f"{where}: must be a mapping with keys {', '.join(valid)}; got {raw!r}")
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise CampaignFileError(f"{where}: unknown keys {unknown}; valid keys: {', '.join(valid)}")
    missing = [k for k in required if k not in raw]
    if missing:
        raise CampaignFileError(f"{where}: missing {', '.join(missing)}; valid keys: {', '.join(valid)}")
    return raw


def _number(raw: Any, where: str, positive: bool = False) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or (positive and raw <= 0):
        raise CampaignFileError(f"{where} = {raw!r}: must be a finite number{' > 0' if positive else ''}")
    return float(raw)


def _share_directory() -> list[Path]:
    """The installed package's share directory (ament index), when there is one."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return []
    try:
        return [Path(get_package_share_directory("humanoid_sim"))]
    except PackageNotFoundError:
        return []


def resolve_path(name: str, base_dir: Path) -> Path:
    """An existing file for `name`: absolute, or relative to base_dir, the working directory,
    the humanoid_sim source tree or its installed share directory (urdf/, config/). Raises
    CampaignFileError naming the places searched."""
    path = Path(os.path.expanduser(name))
    roots = [base_dir, Path.cwd(), SOURCE_ROOT] + _share_directory()
    candidates = [path] if path.is_absolute() else [root / path for root in roots]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    raise CampaignFileError(f"file {name!r} not found; searched: {', '.join(str(c) for c in candidates)}")


@dataclass(frozen=True)
class RobotSpec:
    """urdf: absolute path of the URDF; initial_pose: a named pose of config/initial_poses.yaml."""

    urdf: str
    initial_pose: str = "stand"


@dataclass(frozen=True)
class WorldSpec:
    """physics_dt [s]; environment: absolute path of an environment YAML or None (flat ground);
    terrains: named box sets as (name, boxes) pairs (world frame, StaticBox)."""

    physics_dt: float = 1e-3
    environment: str | None = None
    terrains: tuple[tuple[str, tuple[StaticBox, ...]], ...] = ()

    def terrain(self, name: str) -> tuple[StaticBox, ...]:
        """The boxes of a named terrain ("" = none); KeyError lists the valid names."""
        if name == "":
            return ()
        for terrain_name, boxes in self.terrains:
            if terrain_name == name:
                return boxes
        raise KeyError(f"unknown terrain {name!r}; valid terrains: {', '.join(n for n, _ in self.terrains) or '(none)'}")


@dataclass(frozen=True)
class ControllerSpec:
    """kind: stand | walk | python; class_path: "module:Class" for python; control_dt [s] or
    None (default of the kind); command: (vx [m/s], vy [m/s], yaw_rate [rad/s]) given at
    command_time_s [s]; parameters: (name, value) pairs; walking_config: a walking YAML;
    search_dir: a folder where the python controller's module is also looked for (the
    campaign file's)."""

    kind: str = "stand"
    class_path: str | None = None
    control_dt: float | None = None
    command: tuple[float, float, float] = (0.0, 0.0, 0.0)
    command_time_s: float = 0.0
    parameters: tuple[tuple[str, Any], ...] = ()
    walking_config: str | None = None
    search_dir: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in CONTROLLER_KINDS:
            raise CampaignFileError(f"controller.kind = {self.kind!r}; valid kinds: {', '.join(CONTROLLER_KINDS)}")
        if (self.kind == "python") != (self.class_path is not None):
            raise CampaignFileError("controller.class: required for kind python (\"package.module:ClassName\"), "
                                    "and only for it")


@dataclass(frozen=True)
class FallSpec:
    """min_base_height_m: the robot fell when the base origin goes below this height [m]
    (None: 75 % of its height at the start); allowed_contact_links: links allowed to touch
    the ground or the terrain (any other link touching them is a fall)."""

    min_base_height_m: float | None = None
    allowed_contact_links: tuple[str, ...] = ("l_foot", "r_foot")


@dataclass(frozen=True)
class Campaign:
    """A loaded campaign file (module docstring). base: the fixed scenario values; space: the
    varied ones. ``runs()`` lists every run."""

    name: str
    duration_s: float
    robot: RobotSpec
    world: WorldSpec = field(default_factory=WorldSpec)
    controller: ControllerSpec = field(default_factory=ControllerSpec)
    fall: FallSpec = field(default_factory=FallSpec)
    base: tuple[tuple[str, Any], ...] = ()
    space: ParameterSpace = field(default_factory=ParameterSpace)
    seed: int = 0

    def fingerprint(self) -> str:
        """Digest of the settings every run depends on besides its scenario (robot, world,
        controller, duration, fall test): a row of another fingerprint is not reused."""
        # files count by content, not by path (the same campaign in another checkout resumes)
        walking = self.controller.walking_config
        if walking is None and self.controller.kind == "walk":
            walking = str(resolve_path("config/walking.yaml", SOURCE_ROOT))
        files = {"urdf": self.robot.urdf, "environment": self.world.environment, "walking_config": walking}
        payload = {"duration_s": self.duration_s, "initial_pose": self.robot.initial_pose,
                   "controller": {**asdict(self.controller), "walking_config": None, "search_dir": None},
                   "fall": asdict(self.fall),
                   "physics_dt": self.world.physics_dt, "terrains": repr(self.world.terrains)}
        for what, path in files.items():
            payload[what] = None if path is None else hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def runs(self) -> list[RunSpec]:
        """Every run of the campaign, in run order."""
        return self.space.runs(dict(self.base), self.fingerprint())

    @property
    def varied_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.space.axes)


_TOP = ("name", "seed", "duration_s", "robot", "world", "controller", "fall", "parameters", "vary")
_ROBOT = ("urdf", "initial_pose")
_WORLD = ("physics_dt", "environment", "terrains")
_CONTROLLER = ("kind", "class", "control_dt", "command", "command_time_s", "parameters", "walking_config")
_FALL = ("min_base_height_m", "allowed_contact_links")
_VARY = ("mode", "samples", "parameters")


def _terrains(raw: Any, base_dir: Path) -> tuple[tuple[str, tuple[StaticBox, ...]], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise CampaignFileError("world.terrains: must be a mapping {terrain name: [box, ...]}")
    out = []
    for name, boxes in raw.items():
        try:
            env = environment_from_dict({"ground": None, "boxes": boxes or []})
        except EnvironmentConfigError as exc:
            raise CampaignFileError(f"world.terrains.{name}: {exc}") from None
        out.append((str(name), env.boxes))
    return tuple(out)


def campaign_from_dict(data: Mapping[str, Any], base_dir: Path | str = ".") -> Campaign:
    """A Campaign from the mapping under ``campaign:`` (paths relative to base_dir)."""
    base_dir = Path(base_dir)
    top = _check_keys(data, "campaign", _TOP, required=("name", "duration_s"))
    name = top["name"]
    if not isinstance(name, str) or not name or any(c in name for c in "/\\"):
        raise CampaignFileError(f"campaign.name = {name!r}: must be a non-empty name without slashes")
    seed = top.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CampaignFileError(f"campaign.seed = {seed!r}: must be an integer >= 0")
    duration = _number(top["duration_s"], "campaign.duration_s", positive=True)

    robot_raw = _check_keys(top.get("robot"), "campaign.robot", _ROBOT)
    robot = RobotSpec(urdf=str(resolve_path(str(robot_raw.get("urdf", "urdf/humanoid.urdf")), base_dir)),
                      initial_pose=str(robot_raw.get("initial_pose", "stand")))

    world_raw = _check_keys(top.get("world"), "campaign.world", _WORLD)
    environment = world_raw.get("environment")
    world = WorldSpec(
        physics_dt=_number(world_raw.get("physics_dt", 1e-3), "campaign.world.physics_dt", positive=True),
        environment=None if environment is None else str(resolve_path(str(environment), base_dir)),
        terrains=_terrains(world_raw.get("terrains"), base_dir),
    )

    c_raw = _check_keys(top.get("controller"), "campaign.controller", _CONTROLLER)
    command = c_raw.get("command", [0.0, 0.0, 0.0])
    if not isinstance(command, (list, tuple)) or len(command) != 3:
        raise CampaignFileError(f"campaign.controller.command = {command!r}: must be [vx, vy, yaw_rate]")
    params = c_raw.get("parameters") or {}
    if not isinstance(params, Mapping):
        raise CampaignFileError("campaign.controller.parameters: must be a mapping {name: value}")
    control_dt = c_raw.get("control_dt")
    walking_config = c_raw.get("walking_config")
    controller = ControllerSpec(
        kind=str(c_raw.get("kind", "stand")),
        class_path=None if c_raw.get("class") is None else str(c_raw["class"]),
        control_dt=None if control_dt is None else _number(control_dt, "campaign.controller.control_dt", positive=True),
        command=tuple(_number(x, "campaign.controller.command") for x in command),  # type: ignore[arg-type]
        command_time_s=_number(c_raw.get("command_time_s", 0.0), "campaign.controller.command_time_s"),
        parameters=tuple(sorted((str(k), v) for k, v in params.items())),
        walking_config=None if walking_config is None else str(resolve_path(str(walking_config), base_dir)),
        search_dir=str(base_dir.resolve()),
    )

    f_raw = _check_keys(top.get("fall"), "campaign.fall", _FALL)
    min_height = f_raw.get("min_base_height_m")
    links = f_raw.get("allowed_contact_links", ["l_foot", "r_foot"])
    if not isinstance(links, (list, tuple)) or not all(isinstance(x, str) for x in links):
        raise CampaignFileError(f"campaign.fall.allowed_contact_links = {links!r}: must be a list of link names")
    fall = FallSpec(None if min_height is None else _number(min_height, "campaign.fall.min_base_height_m"), tuple(links))

    base = top.get("parameters") or {}
    if not isinstance(base, Mapping):
        raise CampaignFileError("campaign.parameters: must be a mapping {parameter: value}")
    v_raw = _check_keys(top.get("vary"), "campaign.vary", _VARY)
    axes_raw = v_raw.get("parameters") or {}
    if not isinstance(axes_raw, Mapping):
        raise CampaignFileError("campaign.vary.parameters: must be a mapping {parameter: values}")
    try:
        scenario_from_values(base, where="campaign.parameters")
        axes: tuple[Axis, ...] = tuple(axis_from_yaml(str(k), v) for k, v in axes_raw.items())
        check_names(axes, SCENARIO_PARAMETERS)
        mode = str(v_raw.get("mode", "grid"))
        space = ParameterSpace(mode=mode, axes=axes, samples=v_raw.get("samples", 1) if mode == "random" else 1,
                               seed=seed)
        if mode == "grid" and "samples" in v_raw:
            raise ScenarioError("campaign.vary.samples: only for mode random (a grid runs every combination)")
    except ScenarioError as exc:
        raise CampaignFileError(str(exc)) from None
    campaign = Campaign(name=name, duration_s=duration, robot=robot, world=world, controller=controller, fall=fall,
                        base=tuple(sorted(base.items())), space=space, seed=seed)
    _check_terrain_names(campaign)
    try:
        campaign.runs()  # every combination is a valid scenario
    except ScenarioError as exc:
        raise CampaignFileError(str(exc)) from None
    return campaign


def _check_terrain_names(campaign: Campaign) -> None:
    names = [dict(campaign.base).get("terrain", "")]
    names += [v for a in campaign.space.axes if a.name == "terrain" for v in a.values]
    for terrain in names:
        try:
            campaign.world.terrain(terrain)
        except KeyError as exc:
            raise CampaignFileError(f"campaign: {exc.args[0]}") from None


def load_campaign(path: str | os.PathLike) -> Campaign:
    """Read a campaign file (top-level key ``campaign:``); relative paths in it are resolved
    from its folder first. Raises CampaignFileError (prefixed with the file name)."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as stream:
            data = yaml.safe_load(stream)
    except OSError as exc:
        raise CampaignFileError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise CampaignFileError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, Mapping) or set(data) != {"campaign"}:
        raise CampaignFileError(f"{path}: the top level must be one key, campaign")
    try:
        return campaign_from_dict(data["campaign"], path.resolve().parent)
    except CampaignFileError as exc:
        raise CampaignFileError(f"{path}: {exc}") from None

