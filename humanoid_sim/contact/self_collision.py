"""Which collision shapes of one robot may touch each other (the self-collision pair filter).

As MoveIt users expect: shapes on the same body never collide (links joined by fixed
joints are one body), nor shapes of adjacent bodies (joined by a joint, or by a chain of
joints through links without collision geometry), nor shapes of
the link pairs an SRDF lists as ``<disable_collisions link1=".." link2=".."/>``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model.robot_model import RobotModel

__all__ = ["disabled_link_pairs", "self_collision_pairs"]


def disabled_link_pairs(srdf: str | os.PathLike) -> list[tuple[str, str]]:
    """The (link1, link2) pairs of an SRDF file's ``<disable_collisions>`` elements."""
    try:
        root = ET.parse(srdf).getroot()
    except (ET.ParseError, OSError) as exc:
        raise InvalidValueError(f"SRDF {str(srdf)!r}: cannot be read ({exc})") from None
    pairs = []
    for element in root.iter("disable_collisions"):
        a, b = element.get("link1"), element.get("link2")
        if not a or not b:
            raise InvalidValueError(f"SRDF {str(srdf)!r}: <disable_collisions> needs link1 and link2, got {element.attrib}")
        pairs.append((a, b))
    return pairs


def self_collision_pairs(model: RobotModel, srdf: str | os.PathLike | None = None) -> np.ndarray:
    """Pairs (i, j), i < j, of indices into ``model.collision_shapes`` that may collide:
    on different, non-adjacent bodies whose links the SRDF (if given) does not disable.
    Shape (k, 2) int64, sorted. An SRDF link the model does not have raises
    UnknownNameError listing the model's frames."""
    nb = len(model.body_names)
    blocked = np.eye(nb, dtype=bool)
    has_shape = np.zeros(nb, dtype=bool)
    has_shape[[s.body for s in model.collision_shapes]] = True
    for i in range(nb):
        # adjacent: joined by a joint, or by a chain of joints whose links between carry no
        # collision geometry (a hip or shoulder written as three revolute joints)
        k = model.parent[i]
        while k >= 0:
            blocked[i, k] = blocked[k, i] = True
            if has_shape[k]:
                break
            k = model.parent[k]
    if srdf is not None:
        for a, b in disabled_link_pairs(srdf):
            bodies = []
            for link in (a, b):
                if link not in model.frames:
                    raise UnknownNameError("link", link, model.frames, f"in SRDF {str(srdf)!r}")
                bodies.append(model.frames[link].body)
            blocked[bodies[0], bodies[1]] = blocked[bodies[1], bodies[0]] = True
    body = np.array([s.body for s in model.collision_shapes], dtype=np.int64)
    i, j = np.triu_indices(len(body), k=1)
    keep = ~blocked[body[i], body[j]]
    return np.stack([i[keep], j[keep]], axis=1).astype(np.int64).reshape(-1, 2)
