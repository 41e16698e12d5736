"""The simulation node's browser view and recording (parameters viewer, viewer_host,
viewer_port, viewer_record): the node's simulator shown by humanoid_sim.viewer.Viewer.

The node feeds it every StepResult (``viewer.update`` costs the tick a comparison, see
humanoid_sim.viewer.viewer); the view's pause box calls the node's pause service handler,
so pausing from the browser is the same as ``ros2 service call pause`` (the node keeps its
own pace: the view never holds its loop). A recording is written when the node stops.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from std_srvs.srv import SetBool

from humanoid_sim.package_data import package_file
from humanoid_sim.viewer import Viewer, ViewerConfig

__all__ = ["close_viewer", "start_viewer"]


def _urdf_source(node: Any) -> str | Path:
    """The URDF as the node read it: a file path where there is one (relative mesh paths
    resolve against its folder), else the robot_description XML."""
    p = node.params
    if p.robot_description.strip():
        return node.urdf_xml
    return Path(p.urdf_path) if p.urdf_path else package_file("urdf/humanoid.urdf")


def start_viewer(node: Any) -> Viewer | None:
    """The node's Viewer when its parameters ask for a view or a recording, else None.
    A view that cannot start is logged, and the node runs without it."""
    p = node.params
    if not (p.viewer or p.viewer_record):
        return None

    def on_pause(paused: bool) -> None:
        response = node._on_pause(SetBool.Request(data=paused), SetBool.Response())
        if not response.success:
            node.get_logger().warning(f"pause from the browser view refused: {response.message}")

    config = ViewerConfig(
        host=p.viewer_host if p.viewer else "127.0.0.1", port=p.viewer_port if p.viewer else 0,
        playback="fast", record=bool(p.viewer_record),
    )
    try:
        viewer = Viewer(node.simulator, _urdf_source(node), config, on_pause=on_pause)
    except Exception as exc:  # noqa: BLE001 - the view is optional: the simulation goes on
        node.get_logger().error(f"the browser view could not start ({exc}); the simulation runs without it")
        return None
    if p.viewer:
        node.get_logger().info(f"browser view: open {viewer.url}")
    return viewer


def close_viewer(node: Any, viewer: Viewer | None) -> None:
    """Stop the view; write the recording (HTML replay, GIF beside it) when one was asked for."""
    if viewer is None:
        return
    viewer.close()
    record = node.params.viewer_record
    if not record:
        return
    try:
        replay = viewer.save_replay(record)
        animation = viewer.save_animation(Path(record).with_suffix(".gif"))
        node.get_logger().info(f"recording written: {replay} (open it in a browser), {animation}")
    except Exception as exc:  # noqa: BLE001 - stopping must go on
        node.get_logger().error(f"the recording could not be written to {record!r}: {exc}")
