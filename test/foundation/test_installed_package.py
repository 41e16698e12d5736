"""The package as users install it: pip-installed into a temporary directory and run from
another one, with neither the source tree nor the ament index in sight.

The library finds its data (poses, configs, the URDF) through the installed package, the
robot stands on its "stand" pose and walks with the in-process walking controller; the node
of the same installed copy starts from the stand pose. A first run compiles every numba
kernel for the new install location (about six minutes on 2 cores), hence ``slow``: CI runs it
in its own step (.ci/run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("setup.py", "setup.cfg", "package.xml", "resource", "humanoid_sim", "launch", "urdf", "config")

pytestmark = pytest.mark.slow

# Run by the installed copy: stand 1.5 s under the walking controller (no command yet), then
# walk at walk_speed until t = 8.5 s. Prints one JSON line of what happened.
LIBRARY_RUN = r"""
import json, sys
import numpy as np
import humanoid_sim
from humanoid_sim.package_data import package_file
from humanoid_sim.limits import default_range_of_motion_path
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator import Simulator
from humanoid_sim.control import WalkingController, load_walking_config

model = load_urdf(package_file("urdf/humanoid.urdf"))
sim = Simulator(model)
q0 = sim.reset("stand")
config = load_walking_config(package_file("config/walking.yaml"))
ctrl = WalkingController(model, config)
ctrl.reset(sim.q, sim.v, sim.t)
every = int(round(config.control_dt / sim.config.dt))
tau = np.zeros(model.nj)
base_z, phases, failure, others = [], [], "", set()
for k in range(8500):
    if k == 200:
        ctrl.set_command(config.walk_speed, 0.0, 0.0)
    if k % every == 0:
        tau = ctrl.update(sim.t, sim.q, sim.v, None)
    try:
        result = sim.step(tau)
    except Exception as exc:
        failure = f"t = {sim.t:.3f} s: {exc}"
        break
    base_z.append(float(result.q[2]))
    phases.append(str(ctrl.readout.phase.support))
    others |= {c.link for c in result.contacts if c.link not in ("l_foot", "r_foot")}
steps = sum(1 for a, b in zip(phases, phases[1:]) if a != "double" and b == "double")
print(json.dumps({
    "package": humanoid_sim.__file__, "sys_path": sys.path, "data": str(package_file("config/initial_poses.yaml")),
    "range_of_motion": str(default_range_of_motion_path()),
    "q0": q0.tolist(), "base_z": base_z, "x_end": float(sim.q[0]), "steps": steps, "failure": failure,
    "other_contacts": sorted(others),
}))
"""


def _clean_env(site: Path) -> dict[str, str]:
    """The environment of a user's shell that has only the installed copy: PYTHONPATH = the
    install, no ament prefix that could hold another copy's share directory."""
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "COLCON_PREFIX_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install --target`` of a copy of the sources; returns the target directory."""
    root = tmp_path_factory.mktemp("install")
    source = root / "src"
    source.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "share"))
        else:
            shutil.copy2(path, source / name)
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site),
         str(source)],
        check=True, cwd=root, capture_output=True, text=True,
    )
    shutil.rmtree(source)  # nothing of the sources is left to be found
    return site


KERNELS_CACHED = "import sys; from humanoid_sim.numba_cache import kernels_cached; print(kernels_cached())"


def test_setup_step_compiles_the_kernels_of_the_installed_copy_once(installed: Path, tmp_path: Path) -> None:
    """What scripts/setup.sh runs after installing: afterwards the installed copy's kernels are
    cached, so its first node start loads them; a second run only loads them."""
    env = _clean_env(installed)
    command = [sys.executable, "-P", "-m", "humanoid_sim.ros.warm_kernels"]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "the kernels of the simulation node and the walking controller" in first.stdout
    assert "kernels ready in" in first.stdout
    cached = subprocess.run([sys.executable, "-P", "-c", KERNELS_CACHED], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert cached.stdout.strip() == "True", cached.stderr
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and again.stdout.startswith("humanoid_sim: loading the kernels"), again.stdout


def test_library_from_an_installed_copy_stands_and_walks(installed: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", LIBRARY_RUN], cwd=tmp_path, env=_clean_env(installed), capture_output=True,
        text=True, timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["package"].startswith(str(installed))
    assert str(REPO) not in out["sys_path"] and "" not in out["sys_path"][1:]  # the tree is not importable
    assert out["data"].startswith(str(installed))  # the package data, not a share dir elsewhere
    assert out["range_of_motion"].startswith(str(installed))
    assert out["failure"] == ""
    base_z = np.array(out["base_z"])
    assert len(base_z) == 8500
    # standing: the base holds the stand pose's height while the controller holds it
    assert 0.6 < out["q0"][2] < 1.0
    assert np.max(np.abs(base_z[:1500] - out["q0"][2])) < 0.01
    # walking: forward, steps taken, nothing but the feet on the ground, never fallen
    assert out["x_end"] - out["q0"][0] > 0.3
    assert out["steps"] >= 4
    assert out["other_contacts"] == []
    assert base_z.min() > 0.6


def readme_example() -> str:
    """The Python block of README.md's section "The library (no ROS)"."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## The library (no ROS)") :]
    return section[section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))]


def test_readme_example_runs_from_an_installed_copy(installed: Path, tmp_path: Path) -> None:
    example = readme_example()
    assert "Simulator.from_urdf" in example and len(example.strip().splitlines()) <= 12
    run = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=_clean_env(installed), capture_output=True, text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    # pushed 200 N for 0.1 s while standing: still up on both feet, moved a little forward
    words = run.stdout.split()
    x, z = float(words[words.index("x") + 2]), float(words[words.index("z") + 2])
    assert 0.0 < x < 0.1 and z > 0.8 and "2 contacts" in run.stdout


def test_node_from_an_installed_copy_starts_standing(installed: Path, tmp_path: Path) -> None:
    rclpy = pytest.importorskip("rclpy")
    from nav_msgs.msg import Odometry
    from std_msgs.msg import Float64MultiArray

    from humanoid_sim.model import load_urdf
    from humanoid_sim.simulator import Simulator

    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    stand = Simulator(model).reset("stand")
    namespace = f"/installed_{os.getpid()}"
    err = open(tmp_path / "node.err", "w+")
    node_process = subprocess.Popen(
        [sys.executable, "-m", "humanoid_sim.ros.sim_node", "--ros-args", "-r", f"__ns:={namespace}",
         "-p", "loop_mode:=lockstep"],
        cwd=tmp_path, env=_clean_env(installed), stdout=subprocess.DEVNULL, stderr=err, text=True,
    )
    rclpy.init()
    node = rclpy.create_node("installed_package_probe", namespace=namespace)
    odometry: list = []
    node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 10)
    command = node.create_publisher(Float64MultiArray, "effort_controller/commands", 10)
    try:
        deadline = time.monotonic() + 600.0
        while not odometry and time.monotonic() < deadline and node_process.poll() is None:
            if node.count_subscribers(f"{namespace}/effort_controller/commands"):
                command.publish(Float64MultiArray(data=[0.0] * model.nj))  # lockstep: one tick, one state
            rclpy.spin_once(node, timeout_sec=0.2)
        err.seek(0)
        assert odometry, f"no odometry from the installed node; its stderr: {err.read()[-3000:]}"
        position = odometry[0].pose.pose.position
        np.testing.assert_allclose([position.x, position.y, position.z], stand[:3], atol=2e-3)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        node_process.send_signal(2)
        try:
            node_process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            node_process.kill()
        err.close()
