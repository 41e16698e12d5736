"""Static checks of the launch file, the RViz config and the parameter file (no ROS needed)."""

import ast
from pathlib import Path

import yaml

from humanoid_sim.ros.parameters import SPECS_BY_NAME, validate_parameters

ROOT = Path(__file__).resolve().parents[2]


def test_launch_file_declares_described_arguments():
    tree = ast.parse((ROOT / "launch" / "sim.launch.py").read_text())
    declared = {}
    executables = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = getattr(call.func, "id", getattr(call.func, "attr", ""))
        keywords = {k.arg: k.value for k in call.keywords}
        if name == "DeclareLaunchArgument":
            description = keywords["description"]
            assert isinstance(description, ast.Constant) and len(description.value) > 20
            declared[call.args[0].value] = description.value
        if name == "Node":
            executables.add(keywords["executable"].value)
    assert set(declared) == {"urdf", "rviz", "use_sim_time", "viewer"}
    assert executables == {"sim_node", "rviz2"}
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)


def test_parameter_file_matches_the_declared_defaults():
    data = yaml.safe_load((ROOT / "config" / "sim_node.yaml").read_text())
    values = data["/**"]["ros__parameters"]
    assert set(values) == set(SPECS_BY_NAME)
    for name, value in values.items():
        assert value == SPECS_BY_NAME[name].default, name
    validate_parameters(values)


def test_rviz_config_shows_robot_tf_wrenches_zmp_polygon_markers():
    config = yaml.safe_load((ROOT / "config" / "humanoid_sim.rviz").read_text())
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "odom"
    displays = {d["Class"]: d for d in manager["Displays"]}
    robot = displays["rviz_default_plugins/RobotModel"]
    assert robot["Description Source"] == "Topic"
    assert robot["Description Topic"]["Value"] == "/robot_description"
    assert robot["Description Topic"]["Durability Policy"] == "Transient Local"  # the node latches it
    topics = {d.get("Topic", {}).get("Value") for d in manager["Displays"]}
    assert {"/contact/l_foot/wrench", "/contact/r_foot/wrench", "/zmp", "/support_polygon", "/contact_markers"} <= topics
    assert "rviz_default_plugins/TF" in displays
