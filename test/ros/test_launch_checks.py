"""The check the launch files run before any node: rviz:=true needs the rviz2 package."""

from types import SimpleNamespace

import pytest

from humanoid_sim.ros.launch_checks import require_rviz_when_asked


def context(rviz: str) -> SimpleNamespace:
    return SimpleNamespace(launch_configurations={"rviz": rviz})


def rviz2_installed() -> bool:
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix("rviz2")
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize("value", ["false", "False", "0", ""])
def test_without_rviz_nothing_is_checked(value):
    assert require_rviz_when_asked(context(value)) == []


def test_rviz_asked_for_where_rviz2_is_missing_stops_with_one_line():
    if rviz2_installed():
        assert require_rviz_when_asked(context("true")) == []
        return
    with pytest.raises(RuntimeError, match=r"rviz:=true but the package 'rviz2' is not installed.*rviz:=false"):
        require_rviz_when_asked(context("true"))
