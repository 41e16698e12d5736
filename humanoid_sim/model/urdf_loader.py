"""URDF in, RobotModel out.

The URDF is parsed with ``xml.etree`` (not urdf_parser_py, which prints a line
per unknown tag and fails on some public files), validated element by element
(every problem raises UrdfError naming the element), and turned into the
immutable :class:`RobotModel`:

- the root link gets a FREE joint, unless the URDF welds it to a link named
  ``world`` (then FIXED_TO_WORLD, the weld's origin being ``X_parent_joint[0]``)
  or the caller passes ``floating_base=False`` (FIXED_TO_WORLD at identity);
- revolute and continuous joints become REVOLUTE, prismatic PRISMATIC; fixed
  joints merge the child link into its parent body (mass, COM and inertia
  summed in the body frame), the child's frame staying addressable;
- each moving joint keeps its ``<limit>``, ``<dynamics damping friction>`` and
  ``<safety_controller k_velocity>`` (limits and JointDynamics); a fixed joint,
  or a mimic joint welded by ``mimic="fixed"``, has none;
- every link and every joint gets a named Frame (a joint's frame is its child
  link's frame; a joint named like a link leaves the name to the link);
- bodies are in depth-first order, children in document order, so
  ``parent[i] < i``.
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from humanoid_sim.model.collision_coverage import CollisionCoverageWarning, collision_coverage_warning
from humanoid_sim.model.errors import UrdfError
from humanoid_sim.model.mesh_hull import convex_hull_vertices
from humanoid_sim.model.resource_paths import resolve_uri
from humanoid_sim.model.robot_model import (
    CollisionShape,
    Frame,
    JointDynamics,
    JointLimits,
    JointType,
    RobotModel,
    ShapeKind,
    coordinate_indices,
    default_k_velocity,
)

WORLD_LINK = "world"
MimicPolicy = Literal["error", "independent", "fixed"]
_MOVING_TYPES = {
    "revolute": JointType.REVOLUTE,
    "continuous": JointType.REVOLUTE,
    "prismatic": JointType.PRISMATIC,
}
_KNOWN_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
# Relative tolerance for the inertia checks: public URDFs round their tensors.
_INERTIA_RTOL = 1e-6


# ---------------------------------------------------------------- parsed URDF


@dataclass
class _Inertial:
    mass: float
    com: np.ndarray  # (3,) in the link frame [m]
    inertia: np.ndarray  # (3, 3) about the COM, link axes [kg m^2]


@dataclass
class _Geometry:
    kind: ShapeKind
    X_link_shape: np.ndarray
    size: np.ndarray
    vertices: np.ndarray


@dataclass
class _Link:
    name: str
    inertial: _Inertial | None
    collisions: list[_Geometry] = field(default_factory=list)


@dataclass
class _Joint:
    name: str
    type: str
    parent: str
    child: str
    X_parent_joint: np.ndarray  # origin: child link frame in parent link frame
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float
    effort: float
    k_velocity: float | None  # <safety_controller k_velocity>; None when absent
    damping: float
    friction: float
    mimic: bool


# ---------------------------------------------------------------- small parsers


def _floats(text: str | None, n: int, what: str, default: Sequence[float] | None = None) -> np.ndarray:
    """``n`` finite floats from a space-separated attribute, or UrdfError naming ``what``."""
    if text is None:
        if default is None:
            raise UrdfError(f"{what}: missing")
        return np.array(default, dtype=float)
    parts = text.split()
    if len(parts) != n:
        raise UrdfError(f"{what}: expected {n} numbers, got {len(parts)} in {text!r}")
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise UrdfError(f"{what}: malformed number in {text!r}") from None
    if not np.all(np.isfinite(values)):
        raise UrdfError(f"{what}: non-finite number in {text!r}")
    return values


def _float(text: str | None, what: str, default: float | None = None) -> float:
    return float(_floats(text, 1, what, None if default is None else (default,))[0])


def rotation_from_rpy(rpy: np.ndarray) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll), shape (3, 3)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _origin(element: ET.Element, what: str) -> np.ndarray:
    """4x4 pose of an element's ``<origin>`` (identity when absent)."""
    X = np.eye(4)
    origin = element.find("origin")
    if origin is None:
        return X
    X[:3, 3] = _floats(origin.get("xyz"), 3, f"{what} <origin xyz>", (0.0, 0.0, 0.0))
    X[:3, :3] = rotation_from_rpy(_floats(origin.get("rpy"), 3, f"{what} <origin rpy>", (0.0, 0.0, 0.0)))
    return X


def _parse_inertial(link: ET.Element, name: str, lenient: list[str] | None = None) -> _Inertial | None:
    """The link's ``<inertial>``, inertia rotated into link axes; None when absent.

    Physically impossible inertias (zero mass with inertia, not positive
    semi-definite, principal moments breaking the triangle inequality) raise
    UrdfError, or, when ``lenient`` is a list, are kept and described there.
    """
    element = link.find("inertial")
    if element is None:
        return None
    what = f"link {name!r}"
    X = _origin(element, f"{what} <inertial>")
    mass_el = element.find("mass")
    if mass_el is None:
        raise UrdfError(f"{what}: <inertial> without <mass>")
    mass = _float(mass_el.get("value"), f"{what} <mass value>")
    if mass < 0.0:
        raise UrdfError(f"{what}: negative mass {mass}")
    inertia_el = element.find("inertia")
    I = np.zeros((3, 3))
    if inertia_el is not None:
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        ixx, ixy, ixz, iyy, iyz, izz = (_float(inertia_el.get(k), f"{what} <inertia {k}>", 0.0) for k in keys)
        I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    scale = max(float(np.abs(I).max()), 1e-12)
    eigenvalues = np.linalg.eigvalsh(I)
    a, b, c = eigenvalues
    problem = None
    if mass == 0.0 and np.abs(I).max() > 0.0:
        problem = f"{what}: zero mass with non-zero inertia"
    elif a < -_INERTIA_RTOL * scale:
        problem = f"{what}: inertia not positive semi-definite (principal moments {eigenvalues.tolist()})"
    elif a + b < c - _INERTIA_RTOL * scale - 1e-12:
        # A rigid body's principal moments obey the triangle inequality.
        problem = (
            f"{what}: inertia violates the triangle inequality (principal moments {eigenvalues.tolist()})"
        )
    if problem is not None:
        if lenient is None:
            raise UrdfError(problem + " (pass strict_inertia=False to load anyway)")
        lenient.append(problem)
    R = X[:3, :3]
    return _Inertial(mass=mass, com=X[:3, 3].copy(), inertia=R @ I @ R.T)


def _parse_geometry(
    element: ET.Element, what: str, base_dir: Path, package_paths: Sequence[str | os.PathLike[str]]
) -> _Geometry:
    X = _origin(element, what)
    geometry = element.find("geometry")
    if geometry is None or len(geometry) == 0:
        raise UrdfError(f"{what}: <geometry> missing or empty")
    shape = geometry[0]
    empty = np.zeros((0, 3))
    if shape.tag == "box":
        size = _floats(shape.get("size"), 3, f"{what} <box size>")
        kind = ShapeKind.BOX
    elif shape.tag == "sphere":
        size = np.array([_float(shape.get("radius"), f"{what} <sphere radius>")])
        kind = ShapeKind.SPHERE
    elif shape.tag in ("cylinder", "capsule"):
        size = np.array(
            [
                _float(shape.get("radius"), f"{what} <{shape.tag} radius>"),
                _float(shape.get("length"), f"{what} <{shape.tag} length>"),
            ]
        )
        kind = ShapeKind.CYLINDER if shape.tag == "cylinder" else ShapeKind.CAPSULE
    elif shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise UrdfError(f"{what}: <mesh> without filename")
        scale = _floats(shape.get("scale"), 3, f"{what} <mesh scale>", (1.0, 1.0, 1.0))
        try:
            path = resolve_uri(filename, base_dir, package_paths)
            vertices = convex_hull_vertices(path, scale)
        except UrdfError as exc:
            raise UrdfError(f"{what}: {exc}") from None
        return _Geometry(ShapeKind.MESH, X, scale, vertices)
    else:
        raise UrdfError(
            f"{what}: unknown geometry <{shape.tag}>; valid: box, sphere, cylinder, capsule, mesh"
        )
    if np.any(size < 0.0):
        raise UrdfError(f"{what}: negative size {size.tolist()} for <{shape.tag}>")
    return _Geometry(kind, X, size, empty)


def _parse_link(
    element: ET.Element,
    base_dir: Path,
    package_paths: Sequence[str | os.PathLike[str]],
    lenient: list[str] | None,
) -> _Link:
    name = element.get("name")
    if not name:
        raise UrdfError("a <link> has no name")
    link = _Link(name=name, inertial=_parse_inertial(element, name, lenient))
    for k, collision in enumerate(element.findall("collision")):
        label = collision.get("name") or str(k)
        what = f"link {name!r} collision {label!r}"
        link.collisions.append(_parse_geometry(collision, what, base_dir, package_paths))
    return link


def _parse_joint(element: ET.Element) -> _Joint:
    name = element.get("name")
    if not name:
        raise UrdfError("a <joint> has no name")
    what = f"joint {name!r}"
    jtype = element.get("type")
    if jtype not in _KNOWN_TYPES:
        raise UrdfError(f"{what}: unknown type {jtype!r}; valid types: {', '.join(_KNOWN_TYPES)}")
    if jtype in ("floating", "planar"):
        raise UrdfError(
            f"{what}: {jtype} joints are not supported (only the root link floats);"
            " supported: revolute, continuous, prismatic, fixed"
        )
    links = {}
    for role in ("parent", "child"):
        el = element.find(role)
        link = el.get("link") if el is not None else None
        if not link:
            raise UrdfError(f"{what}: missing <{role} link=...>")
        links[role] = link
    axis_el = element.find("axis")
    axis = _floats(
        axis_el.get("xyz") if axis_el is not None else None, 3, f"{what} <axis xyz>", (1.0, 0.0, 0.0)
    )
    norm = float(np.linalg.norm(axis))
    if jtype != "fixed":
        if norm < 1e-9:
            raise UrdfError(f"{what}: zero <axis xyz>")
        axis = axis / norm
    lower, upper, velocity, effort = -math.inf, math.inf, math.inf, math.inf
    limit = element.find("limit")
    if limit is not None and jtype != "fixed":
        # Absent lower/upper read as unbounded (URDF says 0, which would lock the joint).
        if jtype != "continuous":
            if limit.get("lower") is not None:
                lower = _float(limit.get("lower"), f"{what} <limit lower>")
            if limit.get("upper") is not None:
                upper = _float(limit.get("upper"), f"{what} <limit upper>")
            if lower > upper:
                raise UrdfError(f"{what}: <limit> lower {lower} > upper {upper}")
        if limit.get("velocity") is not None:
            velocity = _float(limit.get("velocity"), f"{what} <limit velocity>")
            if velocity < 0.0:
                raise UrdfError(f"{what}: negative <limit velocity> {velocity}")
        if limit.get("effort") is not None:
            effort = _float(limit.get("effort"), f"{what} <limit effort>")
            if effort < 0.0:
                raise UrdfError(f"{what}: negative <limit effort> {effort}")
    damping, friction, k_velocity = _parse_joint_dynamics(element, what)
    return _Joint(
        name=name,
        type=jtype,
        parent=links["parent"],
        child=links["child"],
        X_parent_joint=_origin(element, what),
        axis=axis,
        lower=lower,
        upper=upper,
        velocity=velocity,
        effort=effort,
        k_velocity=k_velocity,
        damping=damping,
        friction=friction,
        mimic=element.find("mimic") is not None,
    )


def _parse_joint_dynamics(element: ET.Element, what: str) -> tuple[float, float, float | None]:
    """(damping, friction, k_velocity) of a joint from ``<dynamics>`` and ``<safety_controller>``.

    damping [N m s/rad or N s/m] and friction [N m or N] default to 0 and must be >= 0;
    k_velocity [N m s/rad or N s/m] is None when absent and must be > 0 when given (0 would
    forbid every actuator effort). Other safety-controller attributes (soft position limits,
    k_position) are not used: position limits are constraint rows of the step.
    """
    values = {"damping": 0.0, "friction": 0.0}
    dynamics = element.find("dynamics")
    if dynamics is not None:
        for key in values:
            if dynamics.get(key) is not None:
                values[key] = _float(dynamics.get(key), f"{what} <dynamics {key}>")
                if values[key] < 0.0:
                    raise UrdfError(f"{what}: negative <dynamics {key}> {values[key]}; must be >= 0")
    k_velocity = None
    safety = element.find("safety_controller")
    if safety is not None and safety.get("k_velocity") is not None:
        k_velocity = _float(safety.get("k_velocity"), f"{what} <safety_controller k_velocity>")
        if k_velocity <= 0.0:
            raise UrdfError(f"{what}: <safety_controller k_velocity> {k_velocity}; must be > 0")
    return values["damping"], values["friction"], k_velocity


def _read_xml(source: str | os.PathLike[str]) -> tuple[ET.Element, Path]:
    """Root element and base directory (for relative resources) of a URDF file or string."""
    text: str | bytes
    if isinstance(source, str) and not source.strip():
        raise UrdfError("empty URDF: neither a file name nor XML")
    if isinstance(source, str) and source.lstrip().startswith("<"):
        text, base_dir, label = source, Path.cwd(), "URDF string"
    else:
        path = Path(source)
        try:
            text = path.read_bytes()  # bytes: the parser honours the declared encoding
        except OSError as exc:
            raise UrdfError(f"URDF file {str(path)!r}: cannot be read ({exc.strerror or exc})") from None
        base_dir, label = path.resolve().parent, f"URDF file {str(path)!r}"
        if not text.strip():
            raise UrdfError(f"{label}: empty file ({len(text)} bytes)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UrdfError(f"{label}: not valid XML ({exc})") from None
    if root.tag != "robot":
        raise UrdfError(f"{label}: root element is <{root.tag}>, expected <robot>")
    return root, base_dir


# ---------------------------------------------------------------- the tree


def _build_tree(
    links: dict[str, _Link], joints: list[_Joint]
) -> tuple[str, dict[str, list[_Joint]], dict[str, _Joint]]:
    """Root link, children joints per link (document order), parent joint per link."""
    children: dict[str, list[_Joint]] = {name: [] for name in links}
    parent_joint: dict[str, _Joint] = {}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise UrdfError(f"joint {joint.name!r}: {role} link {link!r} is not defined")
        if joint.child in parent_joint:
            raise UrdfError(
                f"link {joint.child!r}: has two parent joints,"
                f" {parent_joint[joint.child].name!r} and {joint.name!r}"
            )
        if joint.parent == joint.child:
            raise UrdfError(f"joint {joint.name!r}: link {joint.child!r} is its own parent")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise UrdfError(f"the links form a cycle: every link has a parent ({', '.join(links)})")
    if len(roots) > 1:
        raise UrdfError(f"the URDF has {len(roots)} root links ({', '.join(roots)}); expected one tree")
    reached, stack = set(), [roots[0]]
    while stack:
        name = stack.pop()
        reached.add(name)
        stack.extend(j.child for j in children[name])
    if len(reached) != len(links):
        cyclic = [name for name in links if name not in reached]
        raise UrdfError(f"links {', '.join(cyclic)} form a cycle, unreachable from root {roots[0]!r}")
    return roots[0], children, parent_joint


def _spatial_sum(parts: list[tuple[float, np.ndarray, np.ndarray]]) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia about the COM of rigidly joined parts (parallel axis theorem).

    parts: (mass [kg], com (3,), inertia about own com (3, 3)), all in one frame.
    """
    mass = sum(m for m, _, _ in parts)
    if mass <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - com
        inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, 0.5 * (inertia + inertia.T)


def load_urdf(
    source: str | os.PathLike[str],
    *,
    package_paths: Sequence[str | os.PathLike[str]] = (),
    floating_base: bool | None = None,
    mimic: MimicPolicy = "error",
    strict_inertia: bool = True,
) -> RobotModel:
    """Build a RobotModel from a URDF file path or a URDF XML string.

    source: a file path, or the URDF XML itself (a string starting with '<').
    package_paths: extra directories to resolve ``package://`` URIs (see
        :mod:`humanoid_sim.model.resource_paths` for the full search order).
    floating_base: None: FREE root unless the URDF welds it to a ``world``
        link; False: root FIXED_TO_WORLD at identity (any ``world`` weld is
        still honoured); True: FREE root even if the URDF welds it to ``world``.
    mimic: what to do with ``<mimic>`` joints, which this simulator cannot
        couple: "error" (UrdfError naming the joint), "independent" (an
        ordinary joint, as Pinocchio reads them by default) or "fixed" (welded
        at zero and merged into its parent).
    strict_inertia: True: a physically impossible inertia (zero mass with
        inertia, not positive semi-definite, triangle inequality broken) is a
        UrdfError; False: kept as written, with one warning listing them (many
        public URDFs round small inertias into such values).

    Raises UrdfError naming the offending element. Links without ``<inertial>``
    that own a body (not merged by a fixed joint) get mass 0 and one warning
    listing them all. A floating robot with mass below all its collision
    geometry (it would sink through the ground) gives one
    CollisionCoverageWarning naming the links
    (:mod:`humanoid_sim.model.collision_coverage`).
    """
    if mimic not in ("error", "independent", "fixed"):
        raise ValueError(f"mimic={mimic!r}; valid: 'error', 'independent', 'fixed'")
    root_el, base_dir = _read_xml(source)
    robot_name = root_el.get("name") or "robot"
    lenient: list[str] | None = None if strict_inertia else []
    links, joints = _parse_robot(root_el, robot_name, base_dir, package_paths, mimic, lenient)
    if lenient:
        warnings.warn(f"URDF {robot_name!r}: inertias kept as written: " + "; ".join(lenient), stacklevel=2)
    root, children, _ = _build_tree(links, joints)
    model = _assemble_model(robot_name, links, root, children, floating_base)
    coverage = collision_coverage_warning(model)
    if coverage is not None:
        warnings.warn(coverage, CollisionCoverageWarning, stacklevel=2)
    return model


def _parse_robot(
    root_el: ET.Element,
    robot_name: str,
    base_dir: Path,
    package_paths: Sequence[str | os.PathLike[str]],
    mimic: MimicPolicy,
    lenient: list[str] | None,
) -> tuple[dict[str, _Link], list[_Joint]]:
    """Links by name and joints in document order, each validated on its own."""
    links: dict[str, _Link] = {}
    for element in root_el.findall("link"):
        link = _parse_link(element, base_dir, package_paths, lenient)
        if link.name in links:
            raise UrdfError(f"link {link.name!r}: defined twice")
        links[link.name] = link
    if not links:
        raise UrdfError(f"robot {robot_name!r}: empty robot, no <link>")
    joints: list[_Joint] = []
    joint_names: set[str] = set()
    for element in root_el.findall("joint"):
        joint = _parse_joint(element)
        if joint.name in joint_names:
            raise UrdfError(f"joint {joint.name!r}: defined twice")
        joint_names.add(joint.name)
        if joint.mimic:
            if mimic == "error":
                raise UrdfError(
                    f"joint {joint.name!r}: <mimic> joints are not supported"
                    " (pass mimic='independent' or mimic='fixed' to load anyway)"
                )
            if mimic == "fixed":
                joint.type = "fixed"
        joints.append(joint)
    return links, joints


def _assemble_model(
    robot_name: str,
    links: dict[str, _Link],
    root: str,
    children: dict[str, list[_Joint]],
    floating_base: bool | None,
) -> RobotModel:
    """Walk the tree depth-first into bodies, merging fixed joints (see module docstring)."""
    # The world weld: "world" as root, its single fixed child becomes the root body.
    X_world_root = np.eye(4)
    fixed_to_world = floating_base is False
    world_frames: list[tuple[str, np.ndarray]] = []  # (frame name, X_root_frame)
    if root == WORLD_LINK:
        world_children = children[WORLD_LINK]
        if len(world_children) == 1 and world_children[0].type == "fixed":
            weld = world_children[0]
            root = weld.child
            if floating_base is not True:
                fixed_to_world = True
                X_world_root = weld.X_parent_joint
                world_frames = [(WORLD_LINK, np.linalg.inv(X_world_root)), (weld.name, np.eye(4))]
        elif floating_base is True:
            raise UrdfError(
                f"link {WORLD_LINK!r}: floating_base=True needs exactly one fixed joint from"
                f" {WORLD_LINK!r}, found {', '.join(f'{j.name} ({j.type})' for j in world_children) or 'none'}"
            )
        else:
            fixed_to_world = True  # the world link itself is the (massless) root body

    # Depth-first traversal: bodies for the root and every moving joint.
    body_names: list[str] = []
    parent: list[int] = []
    jtypes: list[int] = []
    axes: list[np.ndarray] = []
    X_parent_joint: list[np.ndarray] = []
    moving_joints: list[_Joint] = []
    parts: list[list[tuple[float, np.ndarray, np.ndarray]]] = []
    link_body: dict[str, tuple[int, np.ndarray]] = {}  # link -> (body, X_body_link)
    frames: dict[str, Frame] = {}
    shapes: list[CollisionShape] = []
    massless_bodies: list[str] = []

    def add_link(name: str, body: int, X_body_link: np.ndarray) -> None:
        link_body[name] = (body, X_body_link)
        frames[name] = Frame(name, body, X_body_link)
        link = links[name]
        if link.inertial is not None:
            R = X_body_link[:3, :3]
            com = X_body_link[:3, :3] @ link.inertial.com + X_body_link[:3, 3]
            parts[body].append((link.inertial.mass, com, R @ link.inertial.inertia @ R.T))
        for geometry in link.collisions:
            shapes.append(
                CollisionShape(
                    body=body,
                    kind=geometry.kind,
                    X_body_shape=X_body_link @ geometry.X_link_shape,
                    size=geometry.size,
                    vertices=geometry.vertices,
                    link_name=name,
                )
            )

    def add_joint_frame(name: str, body: int, X_body_joint: np.ndarray) -> None:
        # Links and joints have separate namespaces in URDF; on a clash the link keeps the name.
        if name not in links:
            frames[name] = Frame(name, body, X_body_joint)

    def new_body(name: str, parent_body: int, jtype: JointType, axis: np.ndarray, X: np.ndarray) -> int:
        body_names.append(name)
        parent.append(parent_body)
        jtypes.append(int(jtype))
        axes.append(axis)
        X_parent_joint.append(X)
        parts.append([])
        if links[name].inertial is None:
            massless_bodies.append(name)
        return len(body_names) - 1

    root_type = JointType.FIXED_TO_WORLD if fixed_to_world else JointType.FREE
    new_body(root, -1, root_type, np.zeros(3), X_world_root)
    add_link(root, 0, np.eye(4))
    for frame_name, X_root_frame in world_frames:
        frames[frame_name] = Frame(frame_name, 0, X_root_frame)
    stack = [(j, root) for j in reversed(children[root])]
    while stack:
        joint, parent_link = stack.pop()
        parent_body, X_body_parent = link_body[parent_link]
        X_body_child = X_body_parent @ joint.X_parent_joint
        if joint.type == "fixed":
            add_link(joint.child, parent_body, X_body_child)
            add_joint_frame(joint.name, parent_body, X_body_child)
        else:
            body = new_body(joint.child, parent_body, _MOVING_TYPES[joint.type], joint.axis, X_body_child)
            moving_joints.append(joint)
            add_link(joint.child, body, np.eye(4))
            add_joint_frame(joint.name, body, np.eye(4))
        stack.extend((j, joint.child) for j in reversed(children[joint.child]))

    nb = len(body_names)
    masses, coms, inertias = np.zeros(nb), np.zeros((nb, 3)), np.zeros((nb, 3, 3))
    for i in range(nb):
        masses[i], coms[i], inertias[i] = _spatial_sum(parts[i])

    _warn_about_missing_mass(robot_name, body_names, parent, jtypes, masses, massless_bodies)

    q_index, v_index, nq, nv = coordinate_indices(jtypes)

    velocity = np.array([j.velocity for j in moving_joints], dtype=float)
    effort = np.array([j.effort for j in moving_joints], dtype=float)
    k_velocity = default_k_velocity(effort, velocity)
    for i, joint in enumerate(moving_joints):
        if joint.k_velocity is not None:
            k_velocity[i] = joint.k_velocity
    limits = JointLimits(
        lower=np.array([j.lower for j in moving_joints], dtype=float),
        upper=np.array([j.upper for j in moving_joints], dtype=float),
        velocity=velocity,
        effort=effort,
        k_velocity=k_velocity,
    )
    joint_dynamics = JointDynamics(
        damping=np.array([j.damping for j in moving_joints], dtype=float),
        friction=np.array([j.friction for j in moving_joints], dtype=float),
    )
    return RobotModel(
        name=robot_name,
        body_names=tuple(body_names),
        parent=np.array(parent, dtype=np.int64),
        joint_type=np.array(jtypes, dtype=np.int64),
        joint_axis=np.array(axes, dtype=float).reshape(nb, 3),
        X_parent_joint=np.array(X_parent_joint, dtype=float).reshape(nb, 4, 4),
        mass=masses,
        com=coms,
        inertia_com=inertias,
        q_index=q_index,
        v_index=v_index,
        nq=nq,
        nv=nv,
        joint_names=tuple(j.name for j in moving_joints),
        limits=limits,
        frames=frames,
        collision_shapes=tuple(shapes),
        joint_dynamics=joint_dynamics,
    )


def _warn_about_missing_mass(
    robot_name: str,
    body_names: list[str],
    parent: list[int],
    jtypes: list[int],
    masses: np.ndarray,
    no_inertial: list[str],
) -> None:
    """One warning (at most) about bodies without mass.

    It lists the bodies whose own link has no ``<inertial>`` and that got no mass
    from merged links (mass taken as 0), and the moving bodies whose whole
    subtree is massless, which make the mass matrix singular. An explicit
    zero-mass ``<inertial>`` on an intermediate link with a massive subtree is
    intentional and not reported.
    """
    index = {name: i for i, name in enumerate(body_names)}
    missing = [name for name in no_inertial if name != WORLD_LINK and masses[index[name]] == 0.0]
    subtree_mass = masses.copy()
    for i in range(len(body_names) - 1, 0, -1):
        subtree_mass[parent[i]] += subtree_mass[i]
    singular = [
        name
        for i, name in enumerate(body_names)
        if subtree_mass[i] == 0.0 and jtypes[i] != JointType.FIXED_TO_WORLD
    ]
    problems = []
    if missing:
        problems.append(f"link(s) without <inertial>, mass taken as 0: {', '.join(missing)}")
    if singular:
        problems.append(
            f"moving bodies without mass in their whole subtree (singular mass matrix): {', '.join(singular)}"
        )
    if problems:
        warnings.warn(f"URDF {robot_name!r}: " + "; ".join(problems), stacklevel=4)  # load_urdf's caller
