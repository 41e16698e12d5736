"""Collision detection of a robot's collision shapes against the static environment.

Every collision shape is reduced once (``contact_geometry``) to *candidates*
fixed to its body: box vertices (8) and mesh convex-hull vertices; sphere
centres with a radius (spheres, and the two end spheres of a capsule); the two
end-disc centres of a cylinder with its axis and radius. Each step
(``ContactDetector.detect``, one compiled kernel: kernels.detect_points_nb) the
candidates are placed in the world with the bodies' poses and tested against the
ground plane and every static box, the round ones exactly: a sphere by its point
nearest the surface, an end disc by its support in the direction of the surface
(its lowest rim point; its rim when it lies flat), so that a cylinder on its
side touches along its lowest line and a sphere, capsule or cylinder rolls. A
candidate point within ``tolerance`` of a surface (or inside it) is a contact
point. Points of one body against one surface (the plane, or one face of a box)
form one ``ContactPatch`` (seed 000, 4.9 (1)).

Frames: world (z up). ``gap`` is the signed distance along the surface normal
[m]: negative = penetration.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.contact import kernels
from humanoid_sim.contact.environment import Environment
from humanoid_sim.model.robot_model import RobotModel, ShapeKind

class ContactGeometry(NamedTuple):
    """Contact candidates of all collision shapes, in body frames.

    body: body index per candidate, shape (n,) int.
    kind: kernels.VERTEX, SPHERE_CENTRE or DISC_CENTRE (a cylinder's end disc), shape (n,) int.
    local: the vertex, sphere centre or disc centre in its body frame [m], shape (n, 3).
    axis: a disc's unit axis in its body frame (zeros for the other kinds), shape (n, 3).
    radius: 0 for vertices, the sphere's or disc's radius otherwise [m], shape (n,).
    shape: index into model.collision_shapes, shape (n,) int.
    """

    body: np.ndarray
    kind: np.ndarray
    local: np.ndarray
    axis: np.ndarray
    radius: np.ndarray
    shape: np.ndarray


def _shape_candidates(kind: ShapeKind, size: np.ndarray, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Candidate points in the shape frame, their radii and their candidate kind."""
    if kind == ShapeKind.BOX:
        h = 0.5 * np.asarray(size, dtype=float)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return signs * h, np.zeros(8), kernels.VERTEX
    if kind == ShapeKind.SPHERE:
        return np.zeros((1, 3)), np.array([float(size[0])]), kernels.SPHERE_CENTRE
    if kind in (ShapeKind.CAPSULE, ShapeKind.CYLINDER):  # end spheres / end discs on the z axis
        r, length = float(size[0]), float(size[1])
        ends = np.array([[0.0, 0.0, -0.5 * length], [0.0, 0.0, 0.5 * length]])
        return ends, np.array([r, r]), kernels.SPHERE_CENTRE if kind == ShapeKind.CAPSULE else kernels.DISC_CENTRE
    if kind == ShapeKind.MESH:
        v = np.asarray(vertices, dtype=float).reshape(-1, 3)
        return v, np.zeros(len(v)), kernels.VERTEX
    raise ValueError(f"unknown collision shape kind {kind!r}; valid kinds: {[k.name for k in ShapeKind]}")


def contact_geometry(model: RobotModel) -> ContactGeometry:
    """Contact candidates of every collision shape of ``model`` (computed once per model)."""
    bodies, kinds, locals_, axes, radii, shapes = [], [], [], [], [], []
    for i, shape in enumerate(model.collision_shapes):
        pts, rad, kind = _shape_candidates(ShapeKind(shape.kind), shape.size, shape.vertices)
        X = np.asarray(shape.X_body_shape, dtype=float)
        locals_.append(pts @ X[:3, :3].T + X[:3, 3])
        z = X[:3, 2] / np.linalg.norm(X[:3, 2])
        axes.append(np.tile(z if kind == kernels.DISC_CENTRE else np.zeros(3), (len(pts), 1)))
        radii.append(rad)
        kinds.append(np.full(len(pts), kind, dtype=np.int64))
        bodies.append(np.full(len(pts), shape.body, dtype=np.int64))
        shapes.append(np.full(len(pts), i, dtype=np.int64))
    if not locals_:
        empty = np.zeros(0, np.int64)
        return ContactGeometry(empty, empty, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), empty)
    return ContactGeometry(
        np.concatenate(bodies), np.concatenate(kinds), np.ascontiguousarray(np.concatenate(locals_)),
        np.ascontiguousarray(np.concatenate(axes)), np.concatenate(radii), np.concatenate(shapes),
    )  # fmt: skip


def hit_capacity(geometry: ContactGeometry, environment: Environment) -> int:
    """The most contact points ``geometry`` can produce in ``environment`` in one step: a
    vertex or sphere one per element; a disc its rim (or a single point) per ground and per
    box face."""
    per_element = np.where(geometry.kind == kernels.DISC_CENTRE, kernels.RIM_POINTS, 1)
    per_box = np.where(geometry.kind == kernels.DISC_CENTRE, kernels.RIM_POINTS + 5, 1)
    return int(per_element.sum() * (environment.ground is not None) + per_box.sum() * len(environment.boxes))


class ContactPatch(NamedTuple):
    """Contact points of one body against one surface.

    body: body index. element: index into Environment.element_names().
    surface: 0 for the ground, box face 0..5 (+x, -x, +y, -y, +z, -z).
    normal: outward surface normal in the world, shape (3,).
    tangent: first tangent axis of the surface (world), shape (3,), orthogonal to normal.
    points: contact points on the body (deepest point of a sphere, support of a disc) in the
        world [m], shape (m, 3).
    local: the same points in the body frame [m], shape (m, 3).
    gap: signed distance of each point to the surface [m], negative = penetration, shape (m,).
    roll: how each point moves over the body's surface as the body turns (c, w), shape (m, 4):
        c = 0 for a point fixed to the body (kernels.detect_points_nb).
    """

    body: int
    element: int
    surface: int
    normal: np.ndarray
    tangent: np.ndarray
    points: np.ndarray
    local: np.ndarray
    gap: np.ndarray
    roll: np.ndarray

    @property
    def key(self) -> tuple[int, int, int]:
        """Identity of the contact across steps."""
        return (self.body, self.element, self.surface)


class _BoxFrame(NamedTuple):
    R: np.ndarray
    p: np.ndarray
    half: np.ndarray


class ContactDetector:
    """Detects ``ContactPatch`` es of one model in one environment (allocates its tables once)."""

    def __init__(
        self, model: RobotModel, environment: Environment, tolerance: float = 2e-4, flat_tolerance: float | None = None
    ) -> None:
        """tolerance: detection band [m]; flat_tolerance: an end disc whose rim spans at most
        this along a surface's normal lies flat on it (its rim touches) [m], None = tolerance."""
        flat_tolerance = tolerance if flat_tolerance is None else flat_tolerance
        for name, value in (("tolerance", tolerance), ("flat_tolerance", flat_tolerance)):
            if not (value >= 0 and np.isfinite(value)):
                raise ValueError(f"{name} = {value!r}: must be finite and >= 0 [m]")
        self.model = model
        self.environment = environment
        self.tolerance = float(tolerance)
        self.flat_tolerance = float(flat_tolerance)
        self.geometry = contact_geometry(model)
        self._boxes = [_BoxFrame(b.rotation, np.asarray(b.position, float), 0.5 * np.asarray(b.size, float)) for b in environment.boxes]
        self._ground_offset = 1 if environment.ground is not None else 0
        nbox = len(self._boxes)
        self._has_ground = environment.ground is not None
        self._ground_h = float(environment.ground.height) if self._has_ground else 0.0
        self._box_R = np.array([b.R for b in self._boxes]).reshape(nbox, 3, 3)
        self._box_p = np.array([b.p for b in self._boxes]).reshape(nbox, 3)
        self._box_half = np.array([b.half for b in self._boxes]).reshape(nbox, 3)
        self.hit_capacity = max(64, hit_capacity(self.geometry, environment) + 1)
        self._allocate(self.hit_capacity)

    def lowest_height(self, R_world_body: np.ndarray, p_world_body: np.ndarray) -> float:
        """Height z [m] of the lowest point of all collision shapes at the body poses
        (R_world_body (nb, 3, 3), p_world_body (nb, 3)); +inf without shapes."""
        g = self.geometry
        if len(g.body) == 0:
            return float("inf")
        R = R_world_body[g.body]
        z = np.einsum("nj,nj->n", R[:, 2, :], g.local) + p_world_body[g.body, 2]
        az = np.einsum("nj,nj->n", R[:, 2, :], g.axis)  # a disc's lowest rim point: r sqrt(1 - a_z^2) down
        down = np.where(g.kind == kernels.DISC_CENTRE, g.radius * np.sqrt(np.maximum(0.0, 1.0 - az * az)), g.radius)
        return float(np.min(z - down))

    def detect(self, R_world_body: np.ndarray, p_world_body: np.ndarray) -> list[ContactPatch]:
        """Contacts at the body poses (R_world_body (nb, 3, 3), p_world_body (nb, 3)).

        Patches come out sorted by (body, element, surface), so the result is
        deterministic.
        """
        g = self.geometry
        if len(g.body) == 0:
            return []
        k = kernels.detect_points_nb(
            g.body, g.kind, g.local, g.axis, g.radius, R_world_body, p_world_body, self._has_ground, self._ground_h,
            self._box_R, self._box_p, self._box_half, self.tolerance, self.flat_tolerance,
            self._idx, self._elem, self._face, self._gap, self._point, self._normal, self._tangent, self._roll,
            self._scratch,
        )  # fmt: skip
        if k == len(self._idx):  # the hit buffers are full: grow them and detect again
            self._allocate(2 * len(self._idx))
            return self.detect(R_world_body, p_world_body)
        if k == 0:
            return []
        bodies = g.body[self._idx[:k]]
        keys = (bodies * (len(self._boxes) + 1) + self._elem[:k]) * 8 + self._face[:k]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        starts = [0, *cut.tolist()]
        ends = [*cut.tolist(), k]
        patches = []
        for s0, s1 in zip(starts, ends):
            sel = order[s0:s1]
            j = sel[0]
            body = int(bodies[j])
            world = self._point[sel]
            R, p = R_world_body[body], p_world_body[body]
            patches.append(
                ContactPatch(
                    body, int(self._elem[j]), int(self._face[j]), self._normal[j].copy(), self._tangent[j].copy(),
                    world, (world - p) @ R, self._gap[sel], self._roll[sel],
                )  # fmt: skip
            )
        return patches

    def _allocate(self, cap: int) -> None:
        self._idx = np.zeros(cap, np.int64)
        self._elem = np.zeros(cap, np.int64)
        self._face = np.zeros(cap, np.int64)
        self._gap = np.zeros(cap)
        self._point = np.zeros((cap, 3))
        self._normal = np.zeros((cap, 3))
        self._tangent = np.zeros((cap, 3))
        self._roll = np.zeros((cap, 4))
        self._scratch = np.zeros((6, 3))  # detect_points_nb's
