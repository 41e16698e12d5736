"""Quantities read off a step's result for sensors and topics (no ROS): the contact wrench on
each link in the link's frame, and the acceleration of the base by finite difference.

Pure functions of StepResult fields and the body placements of the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.simulator.simulator import ContactReport

__all__ = ["LinkContact", "base_acceleration", "link_contacts"]


class LinkContact(NamedTuple):
    """The contacts of one link summed: wrench (f, n) on the link in the link's frame, moment
    about the link origin [N, N m], shape (6,); p_v: the centre of pressure (world) [m], (3,),
    of the contact carrying the largest vertical force f_z [N] (a link touching two surfaces)."""

    wrench: np.ndarray
    p_v: np.ndarray
    f_z: float


def link_contacts(contacts: Sequence[ContactReport], R: np.ndarray, p: np.ndarray) -> dict[str, LinkContact]:
    """Per link in contact (URDF name), its LinkContact.

    contacts: the step's ContactReports (wrench_world: world axes, moment about the contact's
    virtual-link origin); a contact between two bodies acts on both: its wrench on
    ``link``, the opposite on the second body (named by ``element``). R (nb, 3, 3),
    p (nb, 3): world rotation and origin of every body at the start of the step, where the
    wrenches act (DynamicsWorkspace.R, .p)."""
    per_link: dict[str, LinkContact] = {}

    def add(link: str, body: int, f_w: np.ndarray, n_w: np.ndarray, origin: np.ndarray, p_v: np.ndarray) -> None:
        R_b, p_b = R[body], p[body]
        moment = n_w + np.cross(origin - p_b, f_w)  # about the link origin
        wrench = np.concatenate([R_b.T @ f_w, R_b.T @ moment])
        previous = per_link.get(link)
        if previous is None:
            per_link[link] = LinkContact(wrench, p_v, float(f_w[2]))
            return
        heavier = f_w[2] > previous.f_z
        per_link[link] = LinkContact(previous.wrench + wrench, p_v if heavier else previous.p_v, max(previous.f_z, float(f_w[2])))

    for c in contacts:
        f_w, n_w = c.wrench_world[:3], c.wrench_world[3:]
        add(c.link, c.body, f_w, n_w, c.origin, c.p_v)
        if c.other_body >= 0:
            add(c.element, c.other_body, -f_w, -n_w, c.origin, c.p_v)
    return per_link


def base_acceleration(
    q: np.ndarray, v: np.ndarray, q_before: np.ndarray | None, v_before: np.ndarray | None, dt: float
) -> np.ndarray:
    """Acceleration of the base origin in world axes [m/s^2], (3,): the finite difference over
    one step dt [s] of its world velocity R(q) v[0:3]: the mean over the step, what an IMU
    integrating over the tick reads (StepResult.acceleration is the value at the step's start).
    q, v: floating-base state after the step (nq,), (nv,); q_before, v_before: the
    state a step earlier, None (no earlier step) gives zeros."""
    if q_before is None or v_before is None:
        return np.zeros(3)
    velocity = quaternion_to_rotation(q[3:7]) @ v[0:3]
    velocity_before = quaternion_to_rotation(q_before[3:7]) @ v_before[0:3]
    return (velocity - velocity_before) / dt
