"""The contacts topic's message: a step's contacts as humanoid_sim_interfaces/Contacts (no node).

Per contact the message carries what the virtual-link method (seed 000) knows of it: the link
and the environment element, its kind (point / line / surface), sticking / slipping /
spinning, the virtual-link frame, the wrench in world axes at the virtual-link origin, the
centre of pressure p_v and the contact points. Every geometric field is in the world frame
(``odom``), SI units. The message package is humanoid_sim's own
(interfaces/humanoid_sim_interfaces); ``contacts_message_type()`` says why it is missing where
it cannot be imported, and the node then leaves the topic out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from geometry_msgs.msg import Point, Pose, Quaternion, Vector3, Wrench

from humanoid_sim.ros.conversions import quaternion_from_rotation, stamp_from_nanoseconds
from humanoid_sim.simulator.simulator import ContactReport

__all__ = ["CONTACT_KIND_CONSTANTS", "contact_state_message", "contacts_message", "contacts_message_type"]

# ContactKind value -> the name of the ContactState constant that carries it.
CONTACT_KIND_CONSTANTS = {1: "KIND_POINT", 2: "KIND_LINE", 3: "KIND_SURFACE"}


def contacts_message_type() -> tuple[Any, Any] | str:
    """(Contacts, ContactState) message classes, or why they cannot be imported (a sentence)."""
    try:
        from humanoid_sim_interfaces.msg import Contacts, ContactState
    except ImportError as exc:
        return (
            f"the humanoid_sim_interfaces message package is not importable ({exc}); build it with colcon"
            " (interfaces/humanoid_sim_interfaces) or scripts/setup.sh"
        )
    return Contacts, ContactState


def _point(xyz: np.ndarray) -> Point:
    return Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def _vector(xyz: np.ndarray) -> Vector3:
    return Vector3(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def contact_state_message(contact_state_type: Any, nanoseconds: int, frame: str, contact: ContactReport) -> Any:
    """One ContactState of ``contact``.

    contact_state_type: the ContactState class (contacts_message_type()).
    nanoseconds: simulation time of the step's end [ns]; frame: the world frame's name.
    contact: its fields are read by name (link, element, kind, sticking, spinning, origin,
    R_world_vl (3, 3), wrench_world (6,) [N, N m] about origin, p_v (3,), points (m, 3)).
    """
    msg = contact_state_type()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    msg.body_a = contact.link
    msg.body_b = contact.element
    msg.kind = int(contact.kind)
    msg.sticking = bool(contact.sticking)
    msg.slipping = not msg.sticking
    msg.spinning = bool(contact.spinning)
    x, y, z, w = (float(c) for c in quaternion_from_rotation(np.asarray(contact.R_world_vl, dtype=float)))
    msg.virtual_link = Pose(position=_point(contact.origin), orientation=Quaternion(x=x, y=y, z=z, w=w))
    msg.wrench = Wrench(force=_vector(contact.wrench_world[:3]), torque=_vector(contact.wrench_world[3:]))
    msg.p_v = _point(contact.p_v)
    msg.points = [_point(p) for p in np.asarray(contact.points, dtype=float).reshape(-1, 3)]
    return msg


def contacts_message(
    message_types: tuple[Any, Any], nanoseconds: int, frame: str, contacts: Sequence[ContactReport]
) -> Any:
    """The Contacts message of a step: header (stamp of the step's end, ``frame``) and one
    ContactState per contact, in the step's order (empty when nothing touches).

    message_types: (Contacts, ContactState), from contacts_message_type().
    """
    contacts_type, contact_state_type = message_types
    msg = contacts_type()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    msg.contacts = [contact_state_message(contact_state_type, nanoseconds, frame, c) for c in contacts]
    return msg
