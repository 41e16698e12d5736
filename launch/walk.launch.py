"""Launch the simulator with the bundled humanoid, the walking controller and (optionally) RViz.

    ros2 launch humanoid_sim walk.launch.py [mode:=walk|stand] [walk_speed:=0.15] [rviz:=true] [viewer:=true]
        [urdf:=/path/robot.urdf] [loop_mode:=lockstep|realtime|fast] [real_time_factor:=1.0]
        [state_rate:=250.0] [use_sim_time:=true] [world:=config/worlds/box_push.yaml]

Steer it with geometry_msgs/Twist on /cmd_vel (linear.x, linear.y, angular.z); without it
the robot walks straight ahead at walk_speed.

Manifest:
  node  humanoid_sim/walking_controller  name walking_controller; urdf_path, mode, walk_speed (its time is
                                          the stamps of the states it answers, so it does not
                                          subscribe to the 1 kHz /clock: no use_sim_time)
  node  humanoid_sim/sim_node            name humanoid_sim; config/sim_node.yaml, then urdf_path,
                                          world, loop_mode, real_time_factor, and joint_states /
                                          ground_truth/odom at state_rate (the controller answers
                                          each joint state that comes with odometry)
  node  rviz2/rviz2                      config/humanoid_sim.rviz, only when rviz:=true

The simulator is the one of sim.launch.py, declared here rather than included because the
controller needs other state rates than sim_node.yaml's defaults (an included launch file's
YAML parameters would override them). It starts when the controller says ``ready:`` (after
it has compiled its kernels and subscribed), so in realtime mode no simulated time passes
without torques.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessIO
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


def _argument(name: str, default: str, description: str) -> DeclareLaunchArgument:
    return DeclareLaunchArgument(name, default_value=default, description=description)


def generate_launch_description() -> LaunchDescription:
    share = package_share()
    arg = LaunchConfiguration
    use_sim_time = ParameterValue(arg("use_sim_time"), value_type=bool)
    state_rate = ParameterValue(arg("state_rate"), value_type=float)

    controller = Node(
        package="humanoid_sim",
        executable="walking_controller",
        name="walking_controller",
        output="screen",
        parameters=[
            {
                "urdf_path": ParameterValue(arg("urdf"), value_type=str),
                "mode": ParameterValue(arg("mode"), value_type=str),
                "walk_speed": ParameterValue(arg("walk_speed"), value_type=float),
            }
        ],
    )
    simulator = Node(
        package="humanoid_sim",
        executable="sim_node",
        name="humanoid_sim",
        output="screen",
        parameters=[
            str(share / "config" / "sim_node.yaml"),
            {
                "urdf_path": ParameterValue(arg("urdf"), value_type=str),
                "world": ParameterValue(arg("world"), value_type=str),
                "loop_mode": ParameterValue(arg("loop_mode"), value_type=str),
                "real_time_factor": ParameterValue(arg("real_time_factor"), value_type=float),
                "joint_states_rate": state_rate,
                "odometry_rate": state_rate,
                "use_sim_time": use_sim_time,
                "viewer": ParameterValue(arg("viewer"), value_type=bool),
            },
        ],
    )

    def start_simulator_when_ready(event):
        return [simulator] if b"ready:" in event.text else None

    return LaunchDescription(
        [
            _argument("urdf", str(share / "urdf" / "humanoid.urdf"),
                      "URDF file of the robot (default: the bundled 69 kg humanoid)"),
            _argument("world", "",
                      "world file (docs/world.md: free objects, static shapes, ground; a path or one inside the"
                      " package, e.g. config/worlds/box_push.yaml); the robot is still urdf's; empty: the"
                      " bundled environment"),
            _argument("mode", "walk",
                      "walk: the walking controller; stand: hold the initial posture (PD + gravity compensation)"),
            _argument("walk_speed", "0.15", "forward speed without cmd_vel [m/s]; 0: stand still"),
            _argument("loop_mode", "lockstep",
                      "simulator loop: lockstep (one tick per torque command: every tick controlled, as fast as"
                      " the message round trip allows), realtime (at real_time_factor; needs the controller's"
                      " answer within a tick or two), fast"),
            _argument("real_time_factor", "1.0", "target simulated seconds per wall second in realtime mode"),
            _argument("state_rate", "250.0",
                      "joint_states and ground_truth/odom rate in realtime and fast modes [Hz of sim time] (lockstep"
                      " publishes both after every tick); the controller answers each state that comes with"
                      " odometry and computes new torques at its control rate, 250 Hz"),
            _argument("rviz", "false",
                      "start RViz with config/humanoid_sim.rviz (robot, tf, contact wrenches, ZMP, polygon)"),
            _argument("viewer", "false", "serve a live 3D view in a web browser (no RViz needed): http://127.0.0.1:8080"),
            _argument("use_sim_time", "true", "the simulator and RViz follow the simulator's /clock instead of the wall clock"),
            OpaqueFunction(function=require_rviz_when_asked),  # before any node: a failure leaves none behind
            controller,
            RegisterEventHandler(
                OnProcessIO(
                    target_action=controller,
                    on_stdout=start_simulator_when_ready,
                    on_stderr=start_simulator_when_ready,
                )
            ),
            Node(
                package="rviz2",
                executable="rviz2",
                name="rviz2",
                arguments=["-d", str(share / "config" / "humanoid_sim.rviz")],
                parameters=[{"use_sim_time": use_sim_time}],
                condition=IfCondition(arg("rviz")),
            ),
        ]
    )
