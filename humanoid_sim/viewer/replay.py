"""A recorded run as one self-contained HTML file: the viser web client with the run inside.

The frames are drawn into a scene of a viser server of their own (loopback, any free port,
no browser needed), whose scene serializer records every change with the simulated time
between frames; ``as_html`` embeds that recording in viser's single-file client, which plays
it back in any browser, offline, with play, pause and seek.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Sequence
from pathlib import Path

from humanoid_sim.contact.environment import Environment
from humanoid_sim.viewer.scene import RobotScene
from humanoid_sim.viewer.triangles import VisualBatch
from humanoid_sim.viewer.view_frame import ViewFrame

__all__ = ["replay_html", "write_replay"]


def replay_html(frames: Sequence[ViewFrame], batches: Sequence[VisualBatch], environment: Environment, force_scale: float) -> str:
    """The HTML document of a replay of ``frames`` (in time order, at least one)."""
    import viser

    if not frames:
        raise ValueError("a replay needs at least one frame")
    with contextlib.redirect_stdout(io.StringIO()):  # viser prints its address: nobody connects to this one
        server = viser.ViserServer(host="127.0.0.1", port=0, label="humanoid_sim replay", verbose=False)
    try:
        scene = RobotScene(server, batches, environment, force_scale, frames[0])
        serializer = server.get_scene_serializer()
        for previous, frame in zip(frames, frames[1:]):
            serializer.insert_sleep(max(0.0, frame.t - previous.t))
            scene.draw(frame)
        return serializer.as_html()
    finally:
        server.stop()


def write_replay(
    path: str | os.PathLike[str], frames: Sequence[ViewFrame], batches: Sequence[VisualBatch], environment: Environment,
    force_scale: float,
) -> Path:
    """Write replay_html(...) to ``path`` (parent folders made); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(replay_html(frames, batches, environment, force_scale), encoding="utf-8")
    return path
