"""The core library must not import rclpy: only humanoid_sim.ros may."""

import json
import pkgutil
import subprocess

import humanoid_sim
from package_under_test import REPO, python_command, subprocess_env


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(humanoid_sim.__path__, prefix="humanoid_sim."):
        if info.name == "humanoid_sim.ros" or info.name.startswith("humanoid_sim.ros."):
            continue
        names.append(info.name)
    return names


def test_core_has_modules_to_check():
    # Guards the test below against passing vacuously when discovery finds nothing.
    assert "humanoid_sim.model.robot_model" in core_modules()


def test_importing_every_core_module_does_not_import_rclpy():
    script = (
        "import importlib, json, sys\n"
        f"for name in {core_modules()!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('rclpy', 'rosidl_runtime_py', 'sensor_msgs', 'geometry_msgs', 'tf2_msgs'))))\n"
    )
    result = subprocess.run(
        python_command("-c", script), env=subprocess_env(), cwd=REPO, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
