"""An n-link pendulum of box links hinged to the world above the ground, built in code.

The scene of the relaxed-contact paper's benchmark (seed 002, section 3): n identical
boxes (4 cm x 4 cm x 10 cm, 0.3 kg each by default) joined end to end by revolute joints
with parallel axes, the first hinged to the world at a pivot ``pivot_height`` above the
ground plane z = 0. With the chain longer than the pivot height it strikes the floor when
released and folds onto it.

Frames: link ``link{k}`` (k = 1..n) has its frame at its joint ``joint{k}``; its box
hangs along the link's -z (COM ``link_length / 2`` below the joint), the joint axis is the
link's y axis. At zero joint angles the chain hangs straight down from the pivot
(``pivot`` frame = world translated by ``(0, 0, pivot_height)``). A positive angle of
``joint1`` turns the chain about +y: its free end moves toward -x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.model.urdf_builder import box_link_xml
from humanoid_sim.model.urdf_loader import load_urdf

__all__ = ["BoxPendulum", "box_pendulum", "box_pendulum_urdf"]


@dataclass(frozen=True)
class BoxPendulum:
    """The dimensions of the pendulum (validated on construction).

    links: number of box links n (>= 1). pivot_height: height of the first joint above the
    ground [m] (> 0). width, depth, length: edges of one box along the link's x (in the
    plane of motion), y (along the joint axes) and z (along the chain) [m] (> 0).
    link_mass: mass of one box [kg] (> 0), uniform density.
    """

    links: int = 10
    pivot_height: float = 0.55
    width: float = 0.04
    depth: float = 0.04
    length: float = 0.10
    link_mass: float = 0.3

    def __post_init__(self) -> None:
        if int(self.links) != self.links or self.links < 1:
            raise ValueError(f"BoxPendulum.links = {self.links!r}: must be an integer >= 1")
        for name in ("pivot_height", "width", "depth", "length", "link_mass"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"BoxPendulum.{name} = {value!r}: must be finite and > 0")

    def initial_configuration(self, first_joint: float = math.radians(60.0)) -> np.ndarray:
        """q (n,) [rad]: ``joint1`` at ``first_joint`` from the hanging vertical, the chain straight."""
        q = np.zeros(self.links)
        q[0] = first_joint
        return q


def box_pendulum_urdf(spec: BoxPendulum = BoxPendulum(), name: str = "box_pendulum") -> str:
    """URDF XML text of the pendulum ``spec`` (see the module docstring for its frames).

    The joints are ``continuous`` (no position, effort or velocity limit) about y; every
    link's box is both its inertia (solid cuboid) and its collision shape.
    """
    size = (spec.width, spec.depth, spec.length)
    parts = [
        f'<robot name="{name}"><link name="world"/>',
        '<link name="pivot"><inertial><mass value="0"/>'
        '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>',
        '<joint name="pivot_weld" type="fixed"><parent link="world"/><child link="pivot"/>'
        f'<origin xyz="0 0 {float(spec.pivot_height)!r}"/></joint>',
    ]
    for k in range(1, spec.links + 1):
        parts.append(box_link_xml(f"link{k}", spec.link_mass, size, com=(0.0, 0.0, -spec.length / 2)))
        parent = "pivot" if k == 1 else f"link{k - 1}"
        offset = 0.0 if k == 1 else -spec.length
        parts.append(
            f'<joint name="joint{k}" type="continuous"><parent link="{parent}"/><child link="link{k}"/>'
            f'<origin xyz="0 0 {float(offset)!r}"/><axis xyz="0 1 0"/></joint>'
        )
    parts.append("</robot>")
    return "".join(parts)


def box_pendulum(spec: BoxPendulum = BoxPendulum()) -> RobotModel:
    """The RobotModel of the pendulum ``spec``: base fixed to the world, n unlimited revolute
    (URDF ``continuous``) joints, nq = nv = n."""
    return load_urdf(box_pendulum_urdf(spec))
