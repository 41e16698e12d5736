"""Launch the humanoid_sim simulation node with the bundled humanoid (and optionally RViz).

    ros2 launch humanoid_sim sim.launch.py [urdf:=/path/robot.urdf] [world:=config/worlds/box_push.yaml] [rviz:=false|true] [use_sim_time:=true|false]
        [viewer:=true|false]

Manifest:
  node  humanoid_sim/sim_node   parameters: config/sim_node.yaml, urdf_path:=<urdf>, world, use_sim_time, viewer
  node  rviz2/rviz2             config/humanoid_sim.rviz, only when rviz:=true

rviz:=true on a machine without the rviz2 package stops the launch with one line saying so,
before any node has started (no simulator is left running). When the simulator exits, the
launch ends with it.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from humanoid_sim.ros.launch_checks import require_rviz_when_asked


def package_share() -> Path:
    """The installed share directory, or the source tree this file sits in."""
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory("humanoid_sim"))
    except Exception:  # noqa: BLE001 - not installed: run from the source tree
        return Path(__file__).resolve().parents[1]


def generate_launch_description() -> LaunchDescription:
    share = package_share()
    urdf = LaunchConfiguration("urdf")
    rviz = LaunchConfiguration("rviz")
    use_sim_time = LaunchConfiguration("use_sim_time")
    viewer = LaunchConfiguration("viewer")
    world = LaunchConfiguration("world")
    simulator = Node(
        package="humanoid_sim",
        executable="sim_node",
        name="humanoid_sim",
        output="screen",
        parameters=[
            str(share / "config" / "sim_node.yaml"),
            {
                "urdf_path": ParameterValue(urdf, value_type=str),
                "world": ParameterValue(world, value_type=str),
                "use_sim_time": ParameterValue(use_sim_time, value_type=bool),
                "viewer": ParameterValue(viewer, value_type=bool),
            },
        ],
    )
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "urdf",
                default_value=str(share / "urdf" / "humanoid.urdf"),
                description="URDF file of the robot to simulate (default: the bundled 69 kg humanoid)",
            ),
            DeclareLaunchArgument(
                "world",
                default_value="",
                description="world file (docs/world.md: free objects, static shapes, ground; a path or one inside"
                " the package, e.g. config/worlds/box_push.yaml); empty: the bundled environment",
            ),
            DeclareLaunchArgument(
                "rviz",
                default_value="false",
                description="start RViz with config/humanoid_sim.rviz (robot, tf, contact wrenches, ZMP, polygon)",
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="true",
                description="nodes follow the simulator's /clock instead of the wall clock",
            ),
            DeclareLaunchArgument(
                "viewer",
                default_value="false",
                description="serve a live 3D view in a web browser (no RViz needed): http://127.0.0.1:8080",
            ),
            OpaqueFunction(function=require_rviz_when_asked),
            simulator,
            RegisterEventHandler(
                OnProcessExit(target_action=simulator, on_exit=[EmitEvent(event=Shutdown(reason="the simulator exited"))])
            ),
            Node(
                package="rviz2",
                executable="rviz2",
                name="rviz2",
                arguments=["-d", str(share / "config" / "humanoid_sim.rviz")],
                parameters=[{"use_sim_time": ParameterValue(use_sim_time, value_type=bool)}],
                condition=IfCondition(rviz),
            ),
        ]
    )
