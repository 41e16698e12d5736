"""The node's browser view: off by default; on, it follows the ticks, pauses the node from the
browser's pause box, and writes the recording when the node stops (real rclpy node, no spinning)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from test_sim_node_inprocess import make_node  # noqa: E402 - the in-process node (the ros fixture: conftest.py)


def test_no_view_unless_asked(ros):
    node = make_node(loop_mode="lockstep")
    try:
        assert node.viewer is None
    finally:
        node.stop()
        node.destroy_node()


def test_view_follows_ticks_pauses_the_node_and_records(ros, tmp_path):
    import imageio.v3 as iio

    record = tmp_path / "run.html"
    node = make_node(loop_mode="lockstep", viewer=True, viewer_port=0, viewer_record=str(record))
    try:
        assert node.viewer is not None and node.viewer.url.startswith("http://127.0.0.1:")
        with node._lock:
            for _ in range(300):
                node._do_tick()
        node.viewer.pause(True)  # as the browser's pause box does
        assert node._paused
        node.viewer.pause(False)
        assert not node._paused
    finally:
        node.stop()
        node.destroy_node()
    assert node.viewer is None
    html = record.read_text(encoding="utf-8")
    assert "window.__VISER_EMBED_DATA__=" in html
    frames = iio.imread(record.with_suffix(".gif"), index=None)
    assert frames.shape[0] == 3 and frames.shape[1:] == (360, 480, 3)  # t = 0, 0.1, 0.2 s at 10 frames per s
