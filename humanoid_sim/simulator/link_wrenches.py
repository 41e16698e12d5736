"""External wrenches on named links turned into the generalized force they exert (Jᵀ F).

A wrench on a link: force f [N] and moment n [N m], world axes, the force acting at a point
fixed to the link (given in the link's frame [m]; default its origin). Its generalized force
(nv,) [N, N m] is J(q)ᵀ (f, n) with J the (6, nv) Jacobian of that point (linear rows) and of
the link's rotation (angular rows), world axes (``humanoid_sim.dynamics.point_jacobian``):
the force the equations of motion M v̇ + b = Sᵀ τ + Jᵀ F add to τ_G. Pure functions of the
model and q; ``Simulator.step(tau, link_wrenches=...)`` calls ``generalized_force``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Union

import numpy as np

from humanoid_sim.dynamics.kinematics import forward_kinematics, point_jacobian
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model.robot_model import RobotModel

__all__ = ["LinkWrench", "LinkWrenches", "check_link_wrench", "generalized_force"]

_ORIGIN = np.zeros(3)
_ORIGIN.setflags(write=False)


class LinkWrench(NamedTuple):
    """wrench: (f, n) [N, N m] in world axes, shape (6,), n a pure moment;
    point: where f acts, in the link's frame [m], shape (3,)."""

    wrench: np.ndarray
    point: np.ndarray = _ORIGIN


# link name -> LinkWrench, or a bare (6,) wrench acting at the link frame's origin
LinkWrenches = Mapping[str, Union[LinkWrench, Sequence[float], np.ndarray]]


def check_link_wrench(model: RobotModel, link: str, value: LinkWrench | Sequence[float] | np.ndarray) -> LinkWrench:
    """The wrench on ``link`` as a LinkWrench of float arrays. Raises UnknownNameError (listing
    the model's links and frames) for a name the model lacks, InvalidValueError for a wrench
    that is not 6 finite numbers or a point that is not 3 finite numbers."""
    if link not in model.frames:
        raise UnknownNameError("link", link, model.frames, f"of robot {model.name!r}")
    if isinstance(value, LinkWrench):
        wrench, point = value.wrench, value.point
    else:
        wrench, point = value, _ORIGIN
    wrench = np.asarray(wrench, dtype=float)
    point = np.asarray(point, dtype=float)
    if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
        raise InvalidValueError(f"wrench on link {link!r} must be 6 finite numbers (f, n) [N, N m], got {wrench.tolist()}")
    if point.shape != (3,) or not np.all(np.isfinite(point)):
        raise InvalidValueError(f"point of the wrench on link {link!r} must be 3 finite numbers [m], got {point.tolist()}")
    return LinkWrench(wrench, point)


def generalized_force(model: RobotModel, q: np.ndarray, wrenches: LinkWrenches) -> np.ndarray:
    """Σ Jᵀ (f, n) over ``wrenches`` (link name -> LinkWrench or (6,) wrench): shape (nv,) [N, N m].

    q: configuration (nq,). Every entry is checked first (check_link_wrench): nothing is
    computed for a call with one bad entry."""
    checked = [(link, check_link_wrench(model, link, value)) for link, value in wrenches.items()]
    total = np.zeros(model.nv)
    if not checked:
        return total
    placements = forward_kinematics(model, q)
    for link, (wrench, point) in checked:
        frame = model.frames[link]
        X_world_link = placements[frame.body] @ frame.X_body_frame
        point_world = X_world_link[:3, :3] @ point + X_world_link[:3, 3]
        total += point_jacobian(model, q, frame.body, point_world).T @ wrench
    return total
