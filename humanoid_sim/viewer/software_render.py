"""A small software renderer of ViewFrames (numpy + Pillow), for animated GIFs and videos.

No browser, no GPU: flat-shaded triangles in perspective, drawn far to near (painter's
algorithm) at twice the size and scaled down (smooth edges). The camera looks at the
frame's centre of mass from the front right, above, as the live view starts. Drawn: the
ground (with a 0.5 m grid), the environment boxes, the robot's visuals in their colours,
and on top the contact overlay of the live view (support polygon, contact points, force
arrows, p_v, ZMP, CoM and its ground projection) and the simulated time.
World frame, z up, metres.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from humanoid_sim.contact.environment import Environment
from humanoid_sim.viewer.scene import CAMERA_OFFSET, COLORS, OVERLAY_LIFT
from humanoid_sim.viewer.triangles import VisualBatch, unit_box
from humanoid_sim.viewer.view_frame import ViewFrame

__all__ = ["SoftwareRenderer"]

FIELD_OF_VIEW = math.radians(50.0)  # vertical
NEAR = 0.05  # [m]
GRID_HALF_EXTENT = 4.0  # [m] of the drawn grid around the CoM projection
SUPERSAMPLE = 2
_LIGHT = np.array([0.35, -0.45, 0.82]) / np.linalg.norm([0.35, -0.45, 0.82])
_SKY = (250, 250, 252)


def _quat_rotations(wxyz: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) given as (w, x, y, z)."""
    w, x, y, z = (wxyz[:, i].astype(float) for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=1,
    )


class SoftwareRenderer:
    """Renders frames of one robot (its visual batches) in one environment to RGB images
    of ``size`` (width, height) pixels; force arrows force_scale [m/N] long per newton."""

    def __init__(
        self, batches: Sequence[VisualBatch], environment: Environment, force_scale: float, size: tuple[int, int] = (480, 360)
    ) -> None:
        width, height = (int(s) for s in size)
        if width < 16 or height < 16:
            raise ValueError(f"image size {size}: must be at least 16 x 16 pixels")
        self.size = (width, height)
        self.force_scale = float(force_scale)
        self.batches = tuple(batches)
        ground = environment.ground
        self.ground_height = float(ground.height) if ground is not None else None
        # static triangles: environment boxes, in world coordinates, with their colours
        vertices, faces = unit_box()
        static = []
        for box in environment.boxes:
            corners = (vertices * np.asarray(box.size)) @ box.rotation.T + np.asarray(box.position)
            static.append(corners[faces])
        self._static = np.concatenate(static) if static else np.zeros((0, 3, 3))
        self._static_colors = np.tile(np.array(COLORS["box"], dtype=float), (len(self._static), 1))

    # ------------------------------------------------------------------ camera
    def _camera(self, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(eye (3,), R_camera_world (3, 3): rows right, up, forward), focal length [px]."""
        look_at = np.array([target[0], target[1], 0.8 * target[2]])
        eye = np.asarray(target, dtype=float) + np.asarray(CAMERA_OFFSET)
        forward = look_at - eye
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        focal = 0.5 * self.size[1] * SUPERSAMPLE / math.tan(0.5 * FIELD_OF_VIEW)
        return eye, np.array([right, up, forward]), focal

    def _project(self, points: np.ndarray, eye: np.ndarray, R: np.ndarray, focal: float) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (..., 2) and depth (...) of world points (..., 3)."""
        c = (np.asarray(points, dtype=float) - eye) @ R.T
        depth = c[..., 2]
        safe = np.maximum(depth, NEAR)
        w, h = self.size[0] * SUPERSAMPLE, self.size[1] * SUPERSAMPLE
        px = np.stack([0.5 * w + focal * c[..., 0] / safe, 0.5 * h - focal * c[..., 1] / safe], axis=-1)
        return px, depth

    # ------------------------------------------------------------------ drawing
    def render(self, frame: ViewFrame) -> np.ndarray:
        """The image of ``frame``: uint8 (height, width, 3)."""
        from PIL import Image, ImageDraw

        w, h = self.size[0] * SUPERSAMPLE, self.size[1] * SUPERSAMPLE
        image = Image.new("RGB", (w, h), _SKY)
        draw = ImageDraw.Draw(image)
        eye, R, focal = self._camera(frame.com)
        if self.ground_height is not None:
            self._draw_ground(draw, frame.com, eye, R, focal)
        triangles, colors = self._robot_triangles(frame)
        triangles = np.concatenate([self._static, triangles])
        colors = np.concatenate([self._static_colors, colors])
        self._draw_triangles(draw, triangles, colors, eye, R, focal)
        self._draw_overlay(draw, frame, eye, R, focal)
        draw.text((8 * SUPERSAMPLE, 6 * SUPERSAMPLE), f"t = {frame.t:6.2f} s", fill=(30, 30, 30), font_size=12 * SUPERSAMPLE)
        return np.asarray(image.resize(self.size, Image.LANCZOS))

    def _robot_triangles(self, frame: ViewFrame) -> tuple[np.ndarray, np.ndarray]:
        triangles, colors = [], []
        for batch in self.batches:
            R = _quat_rotations(frame.wxyz[batch.members])
            scaled = batch.vertices[None, :, :] * batch.scales[:, None, :]
            world = np.einsum("nij,nvj->nvi", R, scaled) + frame.positions[batch.members][:, None, :]
            triangles.append(world[:, batch.faces].reshape(-1, 3, 3))
            colors.append(np.repeat(batch.colors.astype(float), len(batch.faces), axis=0))
        if not triangles:
            return np.zeros((0, 3, 3)), np.zeros((0, 3))
        return np.concatenate(triangles), np.concatenate(colors)

    def _draw_triangles(self, draw, triangles: np.ndarray, colors: np.ndarray, eye, R, focal) -> None:
        if len(triangles) == 0:
            return
        px, depth = self._project(triangles, eye, R, focal)
        visible = np.all(depth > NEAR, axis=1)
        normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
        lengths = np.linalg.norm(normals, axis=1)
        visible &= lengths > 1e-12
        normals = normals / np.maximum(lengths, 1e-12)[:, None]
        # light both sides alike (a triangle seen from behind is lit as seen from its front)
        toward_eye = np.sign(np.einsum("ij,ij->i", normals, eye - triangles.mean(axis=1)))
        normals *= np.where(toward_eye == 0.0, 1.0, toward_eye)[:, None]
        shade = 0.45 + 0.55 * np.clip(normals @ _LIGHT, 0.0, 1.0)
        shaded = np.clip(colors * shade[:, None], 0, 255).astype(np.uint8)
        order = np.argsort(-depth.mean(axis=1))
        for i in order[visible[order]]:
            color = tuple(int(c) for c in shaded[i])
            draw.polygon([tuple(p) for p in px[i]], fill=color, outline=color)

    def _draw_ground(self, draw, target: np.ndarray, eye, R, focal) -> None:
        z = self.ground_height
        cx, cy = round(float(target[0]) * 2) / 2, round(float(target[1]) * 2) / 2
        e = GRID_HALF_EXTENT
        corners = np.array([[cx - e, cy - e, z], [cx + e, cy - e, z], [cx + e, cy + e, z], [cx - e, cy + e, z]])
        px, depth = self._project(corners, eye, R, focal)
        if np.all(depth > NEAR):
            draw.polygon([tuple(p) for p in px], fill=COLORS["ground"])
        ticks = np.arange(-e, e + 1e-9, 0.5)
        for tick in ticks:
            for a, b in (((cx + tick, cy - e), (cx + tick, cy + e)), ((cx - e, cy + tick), (cx + e, cy + tick))):
                ends = np.array([[a[0], a[1], z], [b[0], b[1], z]])
                p, d = self._project(ends, eye, R, focal)
                if np.all(d > NEAR):
                    draw.line([tuple(p[0]), tuple(p[1])], fill=COLORS["grid"], width=SUPERSAMPLE)

    def _dot(self, draw, point: np.ndarray, radius_px: float, color, eye, R, focal) -> None:
        p, d = self._project(point, eye, R, focal)
        if d > NEAR and np.all(np.isfinite(p)):
            r = radius_px * SUPERSAMPLE
            draw.ellipse([p[0] - r, p[1] - r, p[0] + r, p[1] + r], fill=color)

    def _line(self, draw, a: np.ndarray, b: np.ndarray, color, width_px: float, eye, R, focal) -> None:
        p, d = self._project(np.array([a, b]), eye, R, focal)
        if np.all(d > NEAR) and np.all(np.isfinite(p)):
            draw.line([tuple(p[0]), tuple(p[1])], fill=color, width=max(1, int(width_px * SUPERSAMPLE)))

    def _draw_overlay(self, draw, frame: ViewFrame, eye, R, focal) -> None:
        ground = (self.ground_height or 0.0) + OVERLAY_LIFT
        polygon = frame.support_polygon
        for i in range(len(polygon) if len(polygon) >= 2 else 0):
            a, b = polygon[i], polygon[(i + 1) % len(polygon)]
            self._line(draw, np.array([a[0], a[1], ground]), np.array([b[0], b[1], ground]), COLORS["polygon"], 2, eye, R, focal)
        for point in frame.contact_points:
            self._dot(draw, point, 2, COLORS["contact"], eye, R, focal)
        for start, force in zip(frame.force_points, frame.forces):
            self._line(draw, start, start + force * self.force_scale, COLORS["force"], 2, eye, R, focal)
        for point in frame.p_v:
            self._dot(draw, point, 3, COLORS["p_v"], eye, R, focal)
        if np.all(np.isfinite(frame.zmp)):
            self._dot(draw, np.array([frame.zmp[0], frame.zmp[1], ground]), 4, COLORS["zmp"], eye, R, focal)
        com = frame.com
        projection = np.array([com[0], com[1], ground])
        self._line(draw, com, projection, COLORS["com"], 1, eye, R, focal)
        self._dot(draw, com, 4, COLORS["com"], eye, R, focal)
        self._dot(draw, projection, 3, COLORS["com"], eye, R, focal)
