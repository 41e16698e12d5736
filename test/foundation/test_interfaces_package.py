"""The project's interface package (interfaces/humanoid_sim_interfaces) built by colcon, as a
user's workspace builds it: the README's ``--base-paths`` finds it beside humanoid_sim (colcon
does not look inside a package's folder), and the messages colcon installs are importable from
its install prefix and carry a contact state through serialization.

The ROS 2 wheels in the venv act as the underlay (scripts/env.sh); colcon comes from
requirements-test.txt.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COLCON = shutil.which("colcon", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))

pytestmark = pytest.mark.skipif(COLCON is None, reason="colcon is not installed (requirements-test.txt, scripts/setup.sh)")

ROUND_TRIP = r"""
import sys
from rclpy.serialization import deserialize_message, serialize_message
import humanoid_sim_interfaces.msg as m
state = m.ContactState(body_a="l_foot", body_b="ground", kind=m.ContactState.KIND_SURFACE, slipping=True)
state.points = [state.p_v]
back = deserialize_message(serialize_message(m.Contacts(contacts=[state])), m.Contacts)
print(m.__file__)
print(back.contacts[0].body_a, back.contacts[0].kind, back.contacts[0].slipping, len(back.contacts[0].points))
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A colcon workspace whose src/humanoid_sim is this repository (as the README clones it)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "humanoid_sim").symlink_to(REPO)
    return tmp_path


def colcon(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    prefix = Path(sys.prefix)
    env = dict(os.environ, CMAKE_PREFIX_PATH=str(prefix), AMENT_PREFIX_PATH=str(prefix))
    return subprocess.run([COLCON, "--log-base", str(workspace / "log"), *args], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=600)


def test_readme_base_paths_find_both_packages(workspace: Path):
    listed = colcon(workspace, "list", "--base-paths", "src", "src/humanoid_sim/interfaces",
                    "--packages-up-to", "humanoid_sim")
    assert listed.returncode == 0, listed.stderr
    packages = {line.split()[0]: line.split()[-1] for line in listed.stdout.splitlines()}
    # both package.xml files parse (else colcon falls back to a plain "python" package), and
    # humanoid_sim depends on the interfaces, so building it builds them
    assert packages == {"humanoid_sim": "(ros.ament_python)", "humanoid_sim_interfaces": "(ros.ament_cmake)"}


def test_colcon_builds_the_messages_into_its_install_prefix(workspace: Path):
    built = colcon(
        workspace, "build", "--base-paths", "src/humanoid_sim/interfaces",
        "--build-base", str(workspace / "build"), "--install-base", str(workspace / "install"),
        "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    prefix = workspace / "install" / "humanoid_sim_interfaces"
    site = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    env = dict(os.environ, PYTHONPATH=str(site),
               LD_LIBRARY_PATH=str(prefix / "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    run = subprocess.run([sys.executable, "-c", ROUND_TRIP], cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    module_file, fields = run.stdout.splitlines()
    assert Path(module_file).is_relative_to(prefix)  # colcon's copy, not the venv's
    assert fields == "l_foot 3 True 1"
