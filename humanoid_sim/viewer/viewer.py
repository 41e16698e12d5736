"""The live 3D view of a simulator in a web browser, and its recording.

    sim = Simulator(model, SimulatorConfig(environment=environment))
    with Viewer(sim, urdf="urdf/humanoid.urdf", config=ViewerConfig(record=True)) as viewer:
        print("open", viewer.url)
        for _ in range(5000):
            viewer.update(sim.step(tau))
        viewer.save_replay("run.html")      # opens in a browser without the simulator
        viewer.save_animation("run.gif")

The view is a viser server (a websocket and the viser web client, on ``config.host``:
``config.port``; loopback by default). ``update`` runs on the simulation thread and costs
almost nothing: it keeps one step in ``1 / config.fps`` of simulated time, as a reference
(a StepResult stays valid after later steps), in a queue that holds only the newest one
(all of them while recording); a sender thread of its own computes the link poses and sends
them to the browser at most ``config.fps`` times per wall second. In ``playback="realtime"``
``update`` also holds the loop to real time (times ``real_time_factor``); ``"fast"`` lets it
run as fast as it simulates. The browser panel has a pause checkbox (``update`` then waits,
or ``on_pause`` is called, for a loop that pauses itself) and the playback choice.

The view only reads ``sim.model``, ``sim.q``, ``sim.t``, ``sim.config.environment`` and the
StepResults it is given.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_sim.simulator.simulator import Simulator, StepResult
from humanoid_sim.viewer.triangles import visual_batches
from humanoid_sim.viewer.view_frame import ViewFrame, ViewFrameBuilder
from humanoid_sim.viewer.visuals import VisualShape, collision_visuals, load_visuals

__all__ = ["PLAYBACK_MODES", "Viewer", "ViewerConfig"]

PLAYBACK_MODES = ("realtime", "fast")
_PLAYBACK_LABELS = {"realtime": "real time", "fast": "as fast as simulated"}
MAX_LAG_S = 0.25  # [s] a real-time playback further behind than this restarts its clock (no catching up)
CLOCK_TEXT_PERIOD_S = 0.2  # [s of wall time] between updates of the panel's time readout

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ViewerConfig:
    """host, port: where the view is served (port taken: the next free one).
    fps: frames kept per second of simulated time, and drawn at most per second of wall time.
    playback: "realtime" (update() holds the loop to real_time_factor x real time) or "fast".
    real_time_factor: simulated seconds per wall second in realtime playback.
    record: keep every frame for save_replay / save_animation, at most record_seconds of
        simulated time (the oldest go first).
    force_scale: arrow length per newton of contact force [m/N]; None: 0.5 m for the robot's weight.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    fps: float = 15.0
    playback: str = "realtime"
    real_time_factor: float = 1.0
    record: bool = False
    record_seconds: float = 600.0
    force_scale: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"ViewerConfig.port = {self.port}: must be in [0, 65535] (0: any free port)")
        if not (math.isfinite(self.fps) and 1.0 <= self.fps <= 240.0):
            raise ValueError(f"ViewerConfig.fps = {self.fps!r}: must be in [1, 240] [frames per second]")
        if self.playback not in PLAYBACK_MODES:
            raise ValueError(f"ViewerConfig.playback = {self.playback!r}; valid: {', '.join(PLAYBACK_MODES)}")
        if not (math.isfinite(self.real_time_factor) and self.real_time_factor > 0.0):
            raise ValueError(f"ViewerConfig.real_time_factor = {self.real_time_factor!r}: must be finite and > 0")
        if not (math.isfinite(self.record_seconds) and self.record_seconds > 0.0):
            raise ValueError(f"ViewerConfig.record_seconds = {self.record_seconds!r}: must be finite and > 0 [s]")
        if self.force_scale is not None and not (math.isfinite(self.force_scale) and self.force_scale > 0.0):
            raise ValueError(f"ViewerConfig.force_scale = {self.force_scale!r}: must be finite and > 0 [m/N] or None")


class Viewer:
    """A live browser view of ``sim``; see the module docstring.

    urdf: the robot's URDF (file path or XML) for its ``<visual>`` geometry; None: the
        model's collision shapes are drawn instead.
    package_paths: extra directories for ``package://`` mesh URIs (as load_urdf).
    on_pause: called with True / False when the panel's pause box changes, for a loop that
        pauses itself (a node); None: update() waits while paused.
    """

    def __init__(
        self,
        sim: Simulator,
        urdf: str | os.PathLike[str] | None = None,
        config: ViewerConfig | None = None,
        *,
        package_paths: Sequence[str | os.PathLike[str]] = (),
        on_pause: Callable[[bool], Any] | None = None,
    ) -> None:
        import viser  # here: importing humanoid_sim.viewer stays cheap

        self.config = config = config or ViewerConfig()
        self.model = model = sim.model
        self.environment = sim.config.environment
        self.visuals: tuple[VisualShape, ...] = (
            load_visuals(model, urdf, package_paths) if urdf is not None else collision_visuals(model)
        )
        self.batches = visual_batches(self.visuals)
        weight = model.total_mass * float(np.linalg.norm(model.gravity))
        self.force_scale = config.force_scale if config.force_scale is not None else 0.5 / max(weight, 1e-9)
        self._builder = ViewFrameBuilder(model, self.visuals)
        first = self._builder.build(sim.t, sim.q)

        self.server = viser.ViserServer(host=config.host, port=config.port, label="humanoid_sim", verbose=False)
        from humanoid_sim.viewer.scene import RobotScene

        self.scene = RobotScene(self.server, self.batches, self.environment, self.force_scale, first)

        self._period = 1.0 / config.fps
        self._next_t = -math.inf
        self._realtime = config.playback == "realtime"
        self._clock: tuple[float, float] | None = None  # (wall, sim) time of the real-time anchor
        self._paused = False
        self._resumed = threading.Event()
        self._resumed.set()
        self._on_pause = on_pause
        keep = int(math.ceil(config.record_seconds * config.fps)) + 1
        self._recorded: deque[ViewFrame] = deque([first] if config.record else (), maxlen=keep)
        # (t, q, contacts, zmp) of the steps to draw: only the newest unless recording
        self._inbox: deque[tuple] = deque(maxlen=None if config.record else 1)
        self._make_panel()
        self._closing = threading.Event()
        self._sender = threading.Thread(target=self._send_loop, name="humanoid_sim_viewer", daemon=True)
        self._sender.start()

    # ------------------------------------------------------------------ simulation thread
    def update(self, result: StepResult) -> None:
        """Take one step's result (call after every step, on the simulation thread)."""
        ahead = self._next_t - result.t
        if 0.0 < ahead <= self._period:
            return  # the hot path: not a frame
        t = result.t
        self._next_t = t + self._period - 1e-9
        if self._closing.is_set():
            return
        self._inbox.append((t, result.q, result.contacts, result.zmp))
        if self._paused and self._on_pause is None:
            self._resumed.wait()
            self._clock = None
        if self._realtime:
            self._hold_real_time(t)

    def _hold_real_time(self, t: float) -> None:
        now = time.perf_counter()
        if self._clock is None or t < self._clock[1]:
            self._clock = (now, t)
            return
        delay = self._clock[0] + (t - self._clock[1]) / self.config.real_time_factor - now
        if delay > 0.0:
            time.sleep(delay)
        elif delay < -MAX_LAG_S:
            self._clock = (now, t)

    # ------------------------------------------------------------------ controls
    @property
    def url(self) -> str:
        """Address to open in a browser."""
        host = self.server.get_host()
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.server.get_port()}"

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self, paused: bool) -> None:
        """Pause (True) or resume (False), as the panel's pause box does."""
        self._paused = bool(paused)
        if self._paused:
            self._resumed.clear()
        else:
            self._resumed.set()
        if self._pause_box.value != self._paused:
            self._pause_box.value = self._paused
        if self._on_pause is not None:
            self._on_pause(self._paused)

    def set_playback(self, playback: str) -> None:
        """"realtime" or "fast" (see ViewerConfig.playback)."""
        if playback not in PLAYBACK_MODES:
            raise ValueError(f"playback {playback!r}; valid: {', '.join(PLAYBACK_MODES)}")
        self._realtime = playback == "realtime"
        self._clock = None

    def _on_pause_box(self, _event: Any) -> None:
        if self._pause_box.value != self._paused:
            self.pause(self._pause_box.value)

    def _make_panel(self) -> None:
        gui = self.server.gui
        self._time_text = gui.add_text("Simulated time", initial_value="0.000 s", disabled=True)
        self._pause_box = gui.add_checkbox("Pause", initial_value=False)
        self._pause_box.on_update(self._on_pause_box)
        if self._on_pause is None:
            labels = tuple(_PLAYBACK_LABELS.values())
            playback = gui.add_dropdown("Playback", labels, initial_value=_PLAYBACK_LABELS[self.config.playback])
            by_label = {label: mode for mode, label in _PLAYBACK_LABELS.items()}
            playback.on_update(lambda _event: self.set_playback(by_label[playback.value]))

    # ------------------------------------------------------------------ sender thread
    def _send_loop(self) -> None:
        last_text = 0.0
        drawn_t = shown_t = math.nan
        failed = False
        while not self._closing.is_set():
            started = time.perf_counter()
            try:
                frame = self._take_frames()
                if frame is not None:
                    self.scene.draw(frame)
                    drawn_t = frame.t
                if drawn_t != shown_t and (started - last_text >= CLOCK_TEXT_PERIOD_S or frame is None):
                    last_text, shown_t = started, drawn_t
                    self._time_text.value = f"{drawn_t:.3f} s"
            except Exception as exc:  # noqa: BLE001 - the view must never stop the simulation
                if not failed:
                    _log.warning("the view could not draw a frame (%s); it keeps trying", exc)
                failed = True
            self._closing.wait(max(0.0, self._period - (time.perf_counter() - started)))

    def _take_frames(self) -> ViewFrame | None:
        """Build the frames waiting in the inbox (all are recorded when recording); the newest."""
        frame = None
        while True:
            try:
                item = self._inbox.popleft()
            except IndexError:
                return frame
            frame = self._builder.build(*item)
            if self.config.record:
                self._recorded.append(frame)

    # ------------------------------------------------------------------ recording
    @property
    def recording(self) -> tuple[ViewFrame, ...]:
        """The recorded frames so far (empty unless config.record)."""
        if self._sender.is_alive():
            raise RuntimeError("the recording is complete after close(); read it then")
        return tuple(self._recorded)

    def save_replay(self, path: str | os.PathLike[str]) -> Path:
        """Write the recorded run as one self-contained HTML file (the viser client with the
        run inside; it plays, pauses and seeks in any browser, offline). Closes the view."""
        from humanoid_sim.viewer.replay import write_replay

        self.close()
        return write_replay(path, self._recording_or_raise(), self.batches, self.environment, self.force_scale)

    def save_animation(self, path: str | os.PathLike[str], fps: float = 10.0, size: tuple[int, int] = (480, 360)) -> Path:
        """Write the recorded run as an animated GIF (or any format imageio writes by the
        suffix), drawn by a small software renderer. Closes the view."""
        from humanoid_sim.viewer.animation import write_animation

        self.close()
        return write_animation(path, self._recording_or_raise(), self.batches, self.environment, self.force_scale, fps, size)

    def _recording_or_raise(self) -> tuple[ViewFrame, ...]:
        if not self.config.record:
            raise RuntimeError("nothing recorded: construct the Viewer with ViewerConfig(record=True)")
        return self.recording

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Stop the sender thread and the server (idempotent); the recording stays readable."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._resumed.set()
        self._sender.join(timeout=10.0)
        try:
            self._take_frames()
        finally:
            self.server.stop()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
