"""The Viewer: decimation, recording, real-time playback, pause, replay and animation files."""

import threading
import time

import numpy as np
import pytest

from humanoid_sim.viewer import Viewer, ViewerConfig
from humanoid_sim.viewer.animation import sample_times
from standing_scene import URDF, run_steps


def test_recording_keeps_one_frame_per_period_of_simulated_time(standing):
    sim, controller = standing
    with Viewer(sim, URDF, ViewerConfig(port=0, fps=20.0, playback="fast", record=True)) as viewer:
        run_steps(sim, controller, viewer, 1000)
    times = np.array([frame.t for frame in viewer.recording])
    assert times[0] == 0.0 and len(times) == 1 + 20  # the state at start, then every 50 ms
    np.testing.assert_allclose(np.diff(times[1:]), 0.05, atol=1e-6)
    assert viewer.recording[-1].positions.shape == (len(viewer.visuals), 3)


def test_a_reset_simulation_is_drawn_at_once(standing):
    sim, controller = standing
    with Viewer(sim, URDF, ViewerConfig(port=0, fps=10.0, playback="fast", record=True)) as viewer:
        run_steps(sim, controller, viewer, 250)
        sim.reset("stand")
        run_steps(sim, controller, viewer, 1)
    assert [round(f.t, 3) for f in viewer.recording] == [0.0, 0.001, 0.101, 0.201, 0.001]


def test_realtime_playback_holds_the_loop_to_wall_time(standing):
    sim, controller = standing
    with Viewer(sim, URDF, ViewerConfig(port=0, fps=50.0, playback="realtime", real_time_factor=2.0)) as viewer:
        started = time.perf_counter()
        run_steps(sim, controller, viewer, 600)
        elapsed = time.perf_counter() - started
    # 0.6 s simulated at 2x real time: at least 0.3 s of wall time, less the first frame period
    assert elapsed >= 0.3 - 0.02


def test_pause_holds_update_until_resumed(standing):
    sim, controller = standing
    with Viewer(sim, URDF, ViewerConfig(port=0, playback="fast")) as viewer:
        viewer.pause(True)
        runner = threading.Thread(target=run_steps, args=(sim, controller, viewer, 200))
        runner.start()
        runner.join(timeout=1.0)
        assert runner.is_alive() and sim.t <= 0.001 + 1e-9  # held at the first frame
        viewer.pause(False)
        runner.join(timeout=30.0)
        assert not runner.is_alive() and sim.t == pytest.approx(0.2)


def test_pause_of_a_self_pausing_loop_calls_back_and_never_blocks(standing):
    sim, controller = standing
    calls = []
    with Viewer(sim, URDF, ViewerConfig(port=0, playback="fast"), on_pause=calls.append) as viewer:
        viewer.pause(True)
        run_steps(sim, controller, viewer, 100)
        viewer.pause(False)
    assert calls == [True, False] and sim.t == pytest.approx(0.1)


def test_replay_and_animation_files(standing, tmp_path):
    import imageio.v3 as iio

    sim, controller = standing
    viewer = Viewer(sim, URDF, ViewerConfig(port=0, fps=25.0, playback="fast", record=True))
    run_steps(sim, controller, viewer, 500)
    replay = viewer.save_replay(tmp_path / "out" / "run.html")
    html = replay.read_text(encoding="utf-8")
    assert html.startswith("<!") and "window.__VISER_EMBED_DATA__=" in html and len(html) > 100_000
    gif = viewer.save_animation(tmp_path / "run.gif", fps=10.0, size=(160, 120))
    images = iio.imread(gif, index=None)
    assert images.shape == (len(sample_times(viewer.recording, 10.0)), 120, 160, 3) == (5, 120, 160, 3)  # t = 0, 0.121, 0.201, 0.321, 0.401
    # the robot (skin: red over blue by ~50) stands in the middle of every image
    middle = images[:, 20:110, 50:110, :].astype(int)
    assert np.all(((middle[..., 0] - middle[..., 2]) > 25).sum(axis=(1, 2)) > 150)


def test_sample_times_take_the_first_frame_at_each_period():
    class F:
        def __init__(self, t):
            self.t = t

    frames = [F(0.04 * i) for i in range(26)]  # 25 fps for 1 s
    assert sample_times(frames, 10.0) == [0, 3, 5, 8, 10, 13, 15, 18, 20, 23, 25]


def test_nothing_recorded_and_bad_configs_are_refused(standing):
    sim, _ = standing
    with Viewer(sim, URDF, ViewerConfig(port=0)) as viewer:
        pass
    with pytest.raises(RuntimeError, match="record=True"):
        viewer.save_replay("never.html")
    for bad, message in [
        (dict(fps=0.0), "fps"), (dict(playback="slow"), "valid: realtime, fast"), (dict(port=70000), "port"),
        (dict(real_time_factor=-1.0), "real_time_factor"), (dict(force_scale=0.0), "force_scale"),
    ]:
        with pytest.raises(ValueError, match=message):
            ViewerConfig(**bad)


def test_without_a_urdf_the_collision_shapes_are_drawn(standing):
    sim, controller = standing
    with Viewer(sim, None, ViewerConfig(port=0, playback="fast", record=True)) as viewer:
        run_steps(sim, controller, viewer, 100)
    assert len(viewer.visuals) == len(sim.model.collision_shapes)
    assert sum(len(b.members) for b in viewer.batches) == len(viewer.visuals)
    assert viewer.recording[-1].positions.shape == (len(viewer.visuals), 3)
