"""Checks run by the launch files before they start any node (plain functions, no launch import).

A launch that fails after it has started the simulator can leave it running as an orphan;
so what can be known to fail is checked first, by an ``OpaqueFunction`` placed before every
node of the launch description.
"""

from __future__ import annotations

from typing import Any

__all__ = ["require_rviz_when_asked"]

TRUE_WORDS = ("true", "1", "yes", "on")


def require_rviz_when_asked(context: Any, *args: Any, **kwargs: Any) -> list:
    """For ``OpaqueFunction``: raise RuntimeError (the launch stops with its one line, exit code 1)
    when the launch argument ``rviz`` is true and the ``rviz2`` package is not in the ament
    index. Returns no actions."""
    if str(context.launch_configurations.get("rviz", "false")).strip().lower() not in TRUE_WORDS:
        return []
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix("rviz2")
    except PackageNotFoundError:
        raise RuntimeError(
            "rviz:=true but the package 'rviz2' is not installed: install it (apt install ros-$ROS_DISTRO-rviz2)"
            " or pass rviz:=false"
        ) from None
    return []
