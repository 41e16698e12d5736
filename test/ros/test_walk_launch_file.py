"""Static checks of launch/walk.launch.py (no ROS launch tooling needed): every argument is
described, the nodes are the controller, the simulator and RViz, the controller's
executable is a console script, and the parameters it passes exist."""

import ast
from pathlib import Path

from humanoid_sim.ros.parameters import SPECS_BY_NAME

ROOT = Path(__file__).resolve().parents[2]


def _calls(tree: ast.AST):
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        yield getattr(call.func, "id", getattr(call.func, "attr", "")), call


def test_walk_launch_declares_described_arguments_and_the_three_nodes():
    tree = ast.parse((ROOT / "launch" / "walk.launch.py").read_text())
    declared: dict[str, str] = {}
    executables = set()
    for name, call in _calls(tree):
        if name == "_argument":  # the file's DeclareLaunchArgument helper: (name, default, description)
            argument, description = call.args[0].value, call.args[2].value
            assert len(description) > 20, argument
            declared[argument] = description
        if name == "Node":
            executables.add(next(k.value.value for k in call.keywords if k.arg == "executable"))
    assert set(declared) == {
        "urdf", "mode", "walk_speed", "loop_mode", "real_time_factor", "state_rate", "rviz", "use_sim_time", "viewer", "world",
    }
    assert executables == {"walking_controller", "sim_node", "rviz2"}


def test_walk_launch_passes_only_parameters_the_nodes_declare():
    from humanoid_sim.ros.walking_controller_node import CONTROLLER_PARAMETER_SPECS

    controller_names = {spec.name for spec in CONTROLLER_PARAMETER_SPECS} | {"use_sim_time"}
    sim_names = set(SPECS_BY_NAME) | {"use_sim_time"}
    tree = ast.parse((ROOT / "launch" / "walk.launch.py").read_text())
    for name, call in _calls(tree):
        if name != "Node":
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        executable = keywords["executable"].value
        for item in getattr(keywords.get("parameters"), "elts", []):
            if isinstance(item, ast.Dict):
                keys = {k.value for k in item.keys}
                valid = {"walking_controller": controller_names, "sim_node": sim_names, "rviz2": {"use_sim_time"}}[executable]
                assert keys <= valid, f"{executable}: {sorted(keys - valid)}"


def test_controller_executable_is_a_console_script():
    setup = (ROOT / "setup.py").read_text()
    assert '"walking_controller = humanoid_sim.ros.walking_controller_node:main"' in setup
