"""Tiny builders of URDF strings for tests and examples (pendulums, free boxes).

Each returns URDF XML text for :func:`humanoid_sim.model.urdf_loader.load_urdf`.
Bodies are uniform boxes (inertia of a solid cuboid) so closed-form answers
are easy to write down in tests.
"""

from __future__ import annotations

from collections.abc import Sequence


def box_inertia(mass: float, size: Sequence[float]) -> tuple[float, float, float]:
    """Principal moments (ixx, iyy, izz) of a solid box about its centre [kg m^2].

    size: full edge lengths (x, y, z) [m].
    """
    x, y, z = size
    return (mass * (y * y + z * z) / 12.0, mass * (x * x + z * z) / 12.0, mass * (x * x + y * y) / 12.0)


def _f(values: Sequence[float]) -> str:
    return " ".join(repr(float(v)) for v in values)


def box_link_xml(
    name: str,
    mass: float,
    size: Sequence[float],
    com: Sequence[float] = (0.0, 0.0, 0.0),
    collision: bool = True,
) -> str:
    """A ``<link>`` holding a uniform box of ``mass`` [kg] and ``size`` [m] centred at ``com``."""
    mass = float(mass)
    ixx, iyy, izz = (float(i) for i in box_inertia(mass, size))
    geometry = (
        f'<collision><origin xyz="{_f(com)}"/><geometry><box size="{_f(size)}"/></geometry></collision>'
        if collision
        else ""
    )
    return (
        f'<link name="{name}"><inertial><origin xyz="{_f(com)}"/><mass value="{mass!r}"/>'
        f'<inertia ixx="{ixx!r}" ixy="0" ixz="0" iyy="{iyy!r}" iyz="0" izz="{izz!r}"/></inertial>'
        f"{geometry}</link>"
    )


def free_box_urdf(mass: float = 1.0, size: Sequence[float] = (0.2, 0.1, 0.05), name: str = "box") -> str:
    """One free-floating uniform box (link ``name``), COM at the link origin."""
    return f'<robot name="{name}">{box_link_xml(name, mass, size)}</robot>'


def chain_urdf(
    n: int,
    *,
    link_length: float = 1.0,
    link_mass: float = 1.0,
    link_width: float = 0.05,
    axis: Sequence[float] = (0.0, 1.0, 0.0),
    joint_type: str = "revolute",
    fixed_base: bool = True,
    name: str = "chain",
    effort: float = 1000.0,
    velocity: float = 100.0,
    damping: float = 0.0,
    friction: float = 0.0,
    k_velocity: float | None = None,
) -> str:
    """A serial chain of ``n`` box links hanging down -z (an n-link pendulum).

    Link ``link{k}`` (k = 1..n) is a box of ``link_mass`` and edges
    (link_width, link_width, link_length), its COM ``link_length/2`` below its
    joint ``joint{k}``; joint k+1 sits ``link_length`` below joint k. With
    ``fixed_base`` the chain hangs from link ``world`` through a fixed joint
    (``base`` link, massless holder); otherwise ``base`` is a free 1 kg cube.
    Joints are ``joint_type`` (revolute without position limits,
    continuous, or prismatic) about ``axis``. Every joint but a continuous one
    gets ``<limit effort velocity>`` [N m or N, rad/s or m/s]; ``damping``
    [N m s/rad] and ``friction`` [N m] give every joint a ``<dynamics>``
    element when either is non-zero, ``k_velocity`` [N m s/rad] a
    ``<safety_controller>``.
    """
    if n < 1:
        raise ValueError(f"chain_urdf: n must be >= 1, got {n}")
    size = (link_width, link_width, link_length)
    parts = [f'<robot name="{name}">']
    if fixed_base:
        parts.append('<link name="world"/>')
        parts.append('<link name="base"><inertial><mass value="0"/></inertial></link>')
        parts.append(
            '<joint name="world_weld" type="fixed"><parent link="world"/><child link="base"/></joint>'
        )
    else:
        parts.append(box_link_xml("base", 1.0, (0.1, 0.1, 0.1)))
    limit = f'<limit effort="{float(effort)!r}" velocity="{float(velocity)!r}"/>'
    if joint_type == "continuous":
        limit = ""
    if damping or friction:
        limit += f'<dynamics damping="{float(damping)!r}" friction="{float(friction)!r}"/>'
    if k_velocity is not None:
        limit += f'<safety_controller k_velocity="{float(k_velocity)!r}"/>'
    for k in range(1, n + 1):
        parts.append(
            box_link_xml(f"link{k}", link_mass, size, com=(0.0, 0.0, -link_length / 2), collision=False)
        )
        parent = "base" if k == 1 else f"link{k - 1}"
        offset = 0.0 if k == 1 else -link_length
        parts.append(
            f'<joint name="joint{k}" type="{joint_type}"><parent link="{parent}"/><child link="link{k}"/>'
            f'<origin xyz="0 0 {float(offset)!r}"/><axis xyz="{_f(axis)}"/>{limit}</joint>'
        )
    parts.append("</robot>")
    return "".join(parts)
