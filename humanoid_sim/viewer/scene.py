"""The 3D scene of the view in a viser server: robot, ground, environment boxes and the
contact overlay, and ``draw`` to move it to a ViewFrame.

Scene layout (viser scene tree, world frame, z up, metres):
  /ground             the ground plane (a grid) at its height
  /environment/<box>  every static box of the environment
  /robot/batch_<i>    the robot's visuals, one instanced mesh per VisualBatch
  /contacts/points    contact points (blue)
  /contacts/forces    contact forces as arrows from their point of action (yellow)
  /balance/markers    each contact's centre of pressure p_v (orange), the ZMP (red), the
                      centre of mass and its ground projection (purple)
  /balance/lines      the support polygon (green) and the CoM's vertical (purple)

A frame costs two messages per batch and one or two per overlay node (its points, and its
colours when what it holds changes): a message costs the sender and the server ~0.1 ms of
CPU, so the overlay is four nodes, not one per item. viser sends nothing for a value that
did not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.viewer.triangles import VisualBatch, unit_box
from humanoid_sim.viewer.view_frame import ViewFrame

__all__ = ["COLORS", "RobotScene"]

COLORS = {
    "ground": (236, 236, 232),
    "grid": (190, 190, 186),
    "box": (120, 140, 170),
    "contact": (40, 90, 230),
    "force": (240, 200, 0),
    "p_v": (255, 130, 0),
    "zmp": (230, 20, 20),
    "polygon": (20, 170, 60),
    "com": (140, 40, 200),
}
OVERLAY_LIFT = 0.003  # [m] the ground overlay is drawn this high above the ground (no z-fighting)
CAMERA_OFFSET = (2.2, -2.6, 0.7)  # [m] of the initial camera from the CoM
ROBOT_OPACITY = 0.75  # the contact overlay (forces, p_v, ZMP, CoM) shows through the robot
ENVIRONMENT_LIGHT = 0.35  # intensity of the image-based light (viser default 1)
GROUND_EXTENT = 12.0  # [m] side of the drawn ground square around the origin
_HIDDEN = np.zeros((1, 3), dtype=np.float32)
_HIDDEN_SEGMENT = np.zeros((1, 2, 3), dtype=np.float32)


def _linear_rgb(srgb: np.ndarray) -> np.ndarray:
    """sRGB colours (n, 3) uint8 -> linear RGB uint8: the browser takes per-instance colours of
    a batched mesh as linear, and URDF colours (like every colour given to viser elsewhere) are sRGB."""
    c = np.asarray(srgb, dtype=float) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return np.round(linear * 255.0).astype(np.uint8)


def _wxyz(R: np.ndarray) -> np.ndarray:
    x, y, z, w = rotation_to_quaternion(R)
    return np.array([w, x, y, z])


class RobotScene:
    """Builds the scene in ``server`` (a viser.ViserServer) and draws ViewFrames into it.

    batches: the robot's visuals (humanoid_sim.viewer.triangles). force_scale: arrow length
    per newton [m/N]. first: the frame drawn first; the browser's initial camera looks at its
    CoM. The support polygon, ZMP and CoM projection are drawn on the ground (its height, or
    z = 0 without a ground)."""

    def __init__(
        self, server: Any, batches: Sequence[VisualBatch], environment: Environment, force_scale: float, first: ViewFrame
    ) -> None:
        self.server = server
        self.batches = tuple(batches)
        self.force_scale = float(force_scale)
        ground = environment.ground
        self.ground_height = float(ground.height) if ground is not None else 0.0
        scene = server.scene
        scene.set_up_direction("+z")
        # viser's default image-based light washes colours out to white; dimmer, they keep their hue
        scene.configure_environment_map("warehouse", environment_intensity=ENVIRONMENT_LIGHT)
        if ground is not None:
            scene.add_grid(
                "/ground", width=GROUND_EXTENT, height=GROUND_EXTENT, plane="xy", cell_size=0.25, section_size=1.0,
                cell_color=COLORS["grid"], section_color=COLORS["grid"], plane_color=COLORS["ground"], plane_opacity=1.0,
                position=(0.0, 0.0, self.ground_height),
            )
        box_vertices, box_faces = unit_box()
        for box in environment.boxes:
            scene.add_mesh_simple(
                f"/environment/{box.name}", box_vertices * np.asarray(box.size, dtype=np.float32), box_faces,
                color=COLORS["box"], position=tuple(box.position), wxyz=tuple(_wxyz(box.rotation)),
            )
        self._robot = []
        for i, batch in enumerate(self.batches):
            members = batch.members
            self._robot.append(
                scene.add_batched_meshes_simple(
                    f"/robot/batch_{i}", batch.vertices, batch.faces,
                    batched_wxyzs=first.wxyz[members], batched_positions=first.positions[members],
                    batched_scales=batch.scales, batched_colors=_linear_rgb(batch.colors),
                    opacity=ROBOT_OPACITY * batch.opacity, side="front" if np.all(batch.scales > 0) else "double",
                    lod="off",
                )
            )
        self._points = scene.add_point_cloud("/contacts/points", _HIDDEN, COLORS["contact"], point_size=0.025, visible=False)
        self._forces = scene.add_arrows(
            "/contacts/forces", _HIDDEN_SEGMENT, COLORS["force"], shaft_radius=0.008, head_radius=0.02, head_length=0.04,
            visible=False,
        )
        self._markers = scene.add_point_cloud("/balance/markers", _HIDDEN, COLORS["com"], point_size=0.05, point_shape="circle")
        self._lines = scene.add_line_segments("/balance/lines", _HIDDEN_SEGMENT, COLORS["com"], thickness=0.008)
        self.draw(first)
        self.aim_camera(first.com)

    def aim_camera(self, target: np.ndarray) -> None:
        """Point the browser's initial camera at ``target`` (3,) [m] from the front right, above."""
        x, y, z = (float(c) for c in target)
        camera = self.server.initial_camera
        camera.look_at = (x, y, 0.8 * z)
        camera.position = (x + CAMERA_OFFSET[0], y + CAMERA_OFFSET[1], z + CAMERA_OFFSET[2])
        camera.up = (0.0, 0.0, 1.0)

    def draw(self, frame: ViewFrame) -> None:
        """Move the scene to ``frame`` (call from one thread at a time)."""
        with self.server.atomic():
            for handle, batch in zip(self._robot, self.batches):
                handle.batched_positions = frame.positions[batch.members]
                handle.batched_wxyzs = frame.wxyz[batch.members]
            self._draw_contacts(frame)
            self._draw_balance(frame)

    def _draw_contacts(self, frame: ViewFrame) -> None:
        has_points = len(frame.contact_points) > 0
        if has_points:
            self._points.points = frame.contact_points.astype(np.float32)
        self._points.visible = has_points
        if len(frame.forces):
            ends = frame.force_points + frame.forces * self.force_scale
            self._forces.points = np.stack([frame.force_points, ends], axis=1).astype(np.float32)
        self._forces.visible = len(frame.forces) > 0

    def _draw_balance(self, frame: ViewFrame) -> None:
        """One point cloud (p_v, ZMP, CoM, CoM projection) and one set of lines (support
        polygon, CoM vertical): two messages, plus their colours when what they hold changes."""
        lift = self.ground_height + OVERLAY_LIFT
        points, colors = [frame.p_v], [np.tile(COLORS["p_v"], (len(frame.p_v), 1))]
        if np.all(np.isfinite(frame.zmp)):
            points.append([[frame.zmp[0], frame.zmp[1], lift]])
            colors.append([COLORS["zmp"]])
        com = frame.com
        projection = np.array([com[0], com[1], lift])
        points.append([com, projection])
        colors.append([COLORS["com"], COLORS["com"]])
        self._markers.colors = np.concatenate(colors).astype(np.uint8)
        self._markers.points = np.concatenate(points).astype(np.float32)
        polygon = frame.support_polygon
        segments, segment_colors = [[com, projection]], [COLORS["com"]]
        if len(polygon) >= 2:
            corners = np.column_stack([polygon, np.full(len(polygon), lift)])
            segments.extend(np.stack([corners, np.roll(corners, -1, axis=0)], axis=1))
            segment_colors.extend([COLORS["polygon"]] * len(polygon))
        self._lines.colors = np.repeat(np.array(segment_colors, dtype=np.uint8)[:, None, :], 2, axis=1)
        self._lines.points = np.array(segments, dtype=np.float32)
