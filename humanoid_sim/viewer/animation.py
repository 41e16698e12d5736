"""A recorded run as an animated GIF (or a video: any format imageio writes by the suffix).

Frames are taken every ``1 / fps`` of simulated time (the animation plays at real time) and
drawn by the software renderer; imageio writes the file.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from humanoid_sim.contact.environment import Environment
from humanoid_sim.viewer.software_render import SoftwareRenderer
from humanoid_sim.viewer.triangles import VisualBatch
from humanoid_sim.viewer.view_frame import ViewFrame

__all__ = ["animation_frames", "sample_times", "write_animation"]


def sample_times(frames: Sequence[ViewFrame], fps: float) -> list[int]:
    """Indices of the frames to show at ``fps`` per second of simulated time: the first
    frame, then the first frame at or after each multiple of 1 / fps."""
    if not (math.isfinite(fps) and fps > 0.0):
        raise ValueError(f"fps = {fps!r}: must be finite and > 0")
    chosen: list[int] = []
    next_t = -math.inf
    for i, frame in enumerate(frames):
        if frame.t >= next_t - 1e-9:
            chosen.append(i)
            next_t = frames[chosen[0]].t + len(chosen) / fps
    return chosen


def animation_frames(
    frames: Sequence[ViewFrame], batches: Sequence[VisualBatch], environment: Environment, force_scale: float,
    fps: float = 10.0, size: tuple[int, int] = (480, 360),
) -> list[np.ndarray]:
    """The images (height, width, 3) uint8 of the animation of ``frames``."""
    renderer = SoftwareRenderer(batches, environment, force_scale, size)
    return [renderer.render(frames[i]) for i in sample_times(frames, fps)]


def write_animation(
    path: str | os.PathLike[str], frames: Sequence[ViewFrame], batches: Sequence[VisualBatch], environment: Environment,
    force_scale: float, fps: float = 10.0, size: tuple[int, int] = (480, 360),
) -> Path:
    """Write the animation of ``frames`` to ``path`` (.gif loops forever); returns the path."""
    import imageio.v3 as iio

    if not frames:
        raise ValueError("an animation needs at least one frame")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images = animation_frames(frames, batches, environment, force_scale, fps, size)
    if path.suffix.lower() == ".gif":
        iio.imwrite(path, np.stack(images), duration=1000.0 / fps, loop=0)
    else:
        iio.imwrite(path, np.stack(images), fps=fps)
    return path
