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
    assert set(declared) == {"urdf", "rviz", "use_sim_time", "viewer", "world"}
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


def test_launch_files_check_rviz_before_any_node_and_default_it_off():
    # A launch that fails after starting the simulator leaves it running: the check comes first.
    for name in ("sim.launch.py", "walk.launch.py"):
        source = (ROOT / "launch" / name).read_text()
        tree = ast.parse(source)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        rviz_default = [
            c for c in calls
            if getattr(c.func, "id", "") in ("DeclareLaunchArgument", "_argument") and c.args
            and isinstance(c.args[0], ast.Constant) and c.args[0].value == "rviz"
        ]
        assert len(rviz_default) == 1, name
        call = rviz_default[0]
        default = {k.arg: k.value for k in call.keywords}.get("default_value") or call.args[1]  # _argument(name, default, ...)
        assert isinstance(default, ast.Constant) and default.value == "false", name
        check = source.index("OpaqueFunction(function=require_rviz_when_asked)")
        first_node = min(source.index(marker) for marker in ("            controller,", "            simulator,")
                         if marker in source)
        assert check < first_node, name
