"""The simulation node's publishers: what goes out after each tick, at which rate.

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py), which owns the state it reads (model,
params, simulator, tick, last results). Hot topics (clock, joint_states, ground_truth/odom, tf,
contact wrench/cop, zmp) go out as pre-serialized bytes (tf_serialization); odometry, imu,
contact cop, contacts (every contact's state, at contact_rate), support_polygon and
contact_markers are published only while some subscriber is matched. Publish rates are in
simulation time (decimation of the tick count).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PolygonStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from humanoid_sim.dynamics.kinematics import frame_placement
from humanoid_sim.ros import conversions as cv
from humanoid_sim.ros.contact_states import contacts_message, contacts_message_type
from humanoid_sim.ros.guarded_publisher import guarded_publisher
from humanoid_sim.ros.tf_serialization import (
    SerializedClock,
    SerializedJointState,
    SerializedOdometry,
    SerializedPoint,
    SerializedTf,
    SerializedWrench,
)
from humanoid_sim.simulator.readouts import base_acceleration, link_contacts
from humanoid_sim.simulator.simulator import StepResult

__all__ = ["StatePublishing", "topic_token"]


def topic_token(name: str) -> str:
    """A link name made valid as one token of a ROS topic name ([A-Za-z0-9_], not starting with a digit)."""
    token = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"_{token}" if not token or token[0].isdigit() else token


def _every(rate_hz: float, dt: float) -> int:
    """Publish every this many ticks for a rate in simulation time; 0 = off."""
    return 0 if rate_hz <= 0.0 else max(1, int(round(1.0 / (rate_hz * dt))))


class StatePublishing:
    """Publishers of SimNode (a mixin: ``self`` is the node)."""

    def _make_publishers(self) -> None:
        """Every publisher and the pre-serialized hot messages; publishes robot_description and
        tf_static (latched) once."""
        model, p = self.model, self.params
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        self.pub_joint_states = self._publisher(JointState, "joint_states", 10)
        self.pub_tf = self._publisher(TFMessage, "tf", 10)
        self.pub_tf_static = self._publisher(TFMessage, "tf_static", latched)
        self.pub_description = self._publisher(String, "robot_description", latched)
        self.pub_clock = self._publisher(ClockMsg, "clock", 10)
        self.pub_zmp = self._publisher(PointStamped, "zmp", 10)
        self.pub_polygon = self._publisher(PolygonStamped, "support_polygon", 10)
        self.pub_markers = self._publisher(MarkerArray, "contact_markers", 10)
        self.pub_odom = self._publisher(Odometry, "ground_truth/odom", 10)
        self.pub_imu = self._publisher(Imu, "imu", 10)
        self.pub_diagnostics = self._publisher(DiagnosticArray, "diagnostics", 10)
        # Every contact's state (humanoid_sim_interfaces/Contacts), when that package is importable.
        self._contacts_types = contacts_message_type()
        self.pub_contact_states = None
        if isinstance(self._contacts_types, str):
            self.get_logger().warning(f"no contacts topic: {self._contacts_types}")
        else:
            self.pub_contact_states = self._publisher(self._contacts_types[0], "contacts", 10)
        # One wrench and one centre-of-pressure topic per body that can touch anything.
        self.contact_links = tuple(dict.fromkeys(model.body_names[s.body] for s in model.collision_shapes))
        self.pub_wrench = {
            link: self._publisher(WrenchStamped, f"contact/{topic_token(link)}/wrench", 10)
            for link in self.contact_links
        }
        self.pub_cop = {
            link: self._publisher(PointStamped, f"contact/{topic_token(link)}/cop", 10) for link in self.contact_links
        }

        # Pre-serialized messages, refilled in place every publish (tf_serialization): no
        # per-tick message objects on the hot topics.
        # the robot's transforms, then each later robot's (its links prefixed, its base under odom)
        moving: list[tuple[str, str]] = []
        self._tf_parts = []  # per robot: (LinkTree, its q (slice of q), its rows of _tf_rows)
        for tree, q_part in ((self.tree, slice(0, None)), *self.later_trees):
            first = len(moving)
            moving += [(tree.odom_frame, tree.root_link)] if tree.floating else []
            moving += list(zip(tree.moving_parent, tree.moving_child))
            self._tf_parts.append((tree, q_part, slice(first, len(moving))))
        self._tf_serialized = SerializedTf(moving)
        self._tf_rows = np.zeros((len(moving), 7))
        self._clock_serialized = SerializedClock()
        self._joint_states_serialized = SerializedJointState(model.joint_names)
        # the robots' joint coordinates (in a world q and v also hold the free objects' and the
        # later robots' bases), gathered into buffers
        self._joint_q, self._joint_v = model.joint_q_index, model.joint_v_index
        self._joint_position, self._joint_velocity = np.zeros(model.nj), np.zeros(model.nj)
        self._odometry_serialized = SerializedOdometry(p.odom_frame, self.tree.root_link) if self.tree.floating else None
        self._wrench_serialized = {link: SerializedWrench(link) for link in self.contact_links}
        self._cop_serialized = SerializedPoint(p.odom_frame)
        self._zmp_serialized = SerializedPoint(p.odom_frame)
        self._zero_wrench = np.zeros(6)
        self._links_in_contact: set[str] = set()
        self.pub_description.publish(String(data=self.urdf_xml))
        # a later robot's URDF as written (its own link names: RViz's RobotModel with TF Prefix <name>)
        self.pub_later_descriptions = []
        for name, xml in self.later_urdfs:
            self.pub_later_descriptions.append(self._publisher(String, f"{name}/robot_description", latched))
            self.pub_later_descriptions[-1].publish(String(data=xml))
        self.pub_tf_static.publish(
            TFMessage(transforms=[cv.transform_message(0, a, b, X) for tree, _, _ in self._tf_parts for a, b, X in tree.static])
        )

    def _publisher(self, msg_type: Any, topic: str, qos: QoSProfile | int) -> Any:
        """A publisher without rclpy's default event handlers (incompatible-QoS / -type warnings),
        whose failed sends are dropped and logged, not raised (guarded_publisher.py).

        Each default handler is a waitable the executor rebuilds into its wait set at every
        wake-up: with ~40 publishers that made every command message cost the executor thread
        ~0.8 ms of GIL-holding Python instead of ~0.2 ms, stolen from the physics thread.
        """
        return guarded_publisher(self, msg_type, topic, qos,
                                 event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))  # fmt: skip

    def _update_decimation(self) -> None:
        p, dt = self.params, self.params.physics_dt
        self._every = {
            "joint_states": _every(p.joint_states_rate, dt),
            "tf": _every(p.tf_rate, dt),
            "clock": _every(p.clock_rate, dt),
            "contact": _every(p.contact_rate, dt),
            "markers": _every(p.markers_rate, dt),
            "odometry": _every(p.odometry_rate, dt),
        }
        self._wall_period = p.physics_dt / p.real_time_factor

    def _due(self, topic: str) -> bool:
        every = self._every[topic]
        return every > 0 and self._tick % every == 0

    def _publish(self, result: StepResult, every_state: bool = False) -> None:
        """What is due after a tick; every_state: the state topics (clock, joint_states,
        odometry, tf) whatever their rates (lock-step ticks always, a step service call)."""
        ns = self._tick * self._ns_per_tick
        lockstep = every_state or self.params.loop_mode == "lockstep"
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        if lockstep or self._due("clock"):
            self.pub_clock.publish(self._clock_serialized.fill(sec, nanosec))
        if lockstep or self._due("joint_states"):
            self._publish_joint_states(sec, nanosec, result.q, result.v, result.tau_applied)
        if every_state or self._due("tf"):
            self._publish_tf(sec, nanosec, result.q)
        # The topics below cost most to build; nobody listening, nothing is built.
        if (lockstep or self._due("odometry")) and self.model.floating_base:
            q, v = result.q, result.v
            root = self.tree.root_link
            self._publish_odometry(sec, nanosec, q, v)
            if self.pub_imu.get_subscription_count():
                acceleration = self._base_acceleration(result)
                self.pub_imu.publish(cv.imu_message(ns, root, q[3:7], v[3:6], acceleration, self.model.gravity))
        if self._due("contact"):
            self._publish_contacts(ns, result)
        if self._due("markers"):
            if self.pub_markers.get_subscription_count():
                self._publish_markers(ns, result)
            self._publish_object_markers(ns, result.q)  # the free objects' shapes, on objects

    def _publish_joint_states(self, sec: int, nanosec: int, q: np.ndarray, v: np.ndarray, applied: np.ndarray) -> None:
        position = np.take(q, self._joint_q, out=self._joint_position)
        velocity = np.take(v, self._joint_v, out=self._joint_velocity)
        data = self._joint_states_serialized.fill(sec, nanosec, position, velocity, applied)
        self.pub_joint_states.publish(data)

    def _publish_odometry(self, sec: int, nanosec: int, q: np.ndarray, v: np.ndarray) -> None:
        """ground_truth/odom of the base (floating base only), when someone listens."""
        if self._odometry_serialized is not None and self.pub_odom.get_subscription_count():
            self.pub_odom.publish(self._odometry_serialized.fill(sec, nanosec, q[0:7], v[0:6]))

    def _publish_tf(self, sec: int, nanosec: int, q: np.ndarray) -> None:
        for tree, q_part, rows in self._tf_parts:  # one compiled call per robot: odom -> base, every joint
            tree.pose_rows(q[q_part], self._tf_rows[rows])
        self.pub_tf.publish(self._tf_serialized.fill_rows(sec, nanosec, self._tf_rows))
        self._publish_object_tf(sec, nanosec, q)  # odom -> each free object (world_objects)

    def _base_acceleration(self, result: StepResult) -> np.ndarray:
        """Acceleration of the base origin in world axes [m/s^2], (3,) (readouts.base_acceleration)."""
        previous = self._previous_result
        if previous is None or not self.model.floating_base:
            return np.zeros(3)
        return base_acceleration(result.q, result.v, previous.q, previous.v, self.params.physics_dt)

    def _publish_contacts(self, ns: int, result: StepResult) -> None:
        ws = self.simulator.ws  # body placements at the start of the step, where the wrenches act
        per_link = link_contacts(result.contacts, ws.R, ws.p)
        odom = self.params.odom_frame
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        # Links in contact, and once more with a zero wrench the first time after they leave it
        # (so plots and RViz drop to zero), rather than every link at every publish.
        for link in (per_link.keys() | self._links_in_contact) if self._links_in_contact else per_link:
            contact = per_link.get(link)
            wrench, cop = (contact.wrench, contact.p_v) if contact is not None else (self._zero_wrench, None)
            self.pub_wrench[link].publish(self._wrench_serialized[link].fill(sec, nanosec, wrench))
            if cop is not None and np.isfinite(cop).all() and self.pub_cop[link].get_subscription_count():
                self.pub_cop[link].publish(self._cop_serialized.fill(sec, nanosec, cop))
        self._links_in_contact = set(per_link)
        if self.pub_contact_states is not None and self.pub_contact_states.get_subscription_count():
            self.pub_contact_states.publish(contacts_message(self._contacts_types, ns, odom, result.contacts))
        zmp = result.zmp
        if np.isfinite(zmp.zmp).all():
            self.pub_zmp.publish(self._zmp_serialized.fill(sec, nanosec, zmp.zmp))
        if self.pub_polygon.get_subscription_count():
            height = zmp.zmp[2] if np.isfinite(zmp.zmp[2]) else 0.0
            self.pub_polygon.publish(cv.polygon_message(ns, odom, zmp.support_polygon, height))

    def _publish_markers(self, ns: int, result: StepResult) -> None:
        zmp = result.zmp
        points = [c.points for c in result.contacts]
        forces = [(c.p_v if np.all(np.isfinite(c.p_v)) else c.origin, c.wrench_world[:3]) for c in result.contacts]
        height = zmp.zmp[2] if np.isfinite(zmp.zmp[2]) else 0.0
        polygon = np.column_stack([zmp.support_polygon, np.full(len(zmp.support_polygon), height)])
        zmp_point = zmp.zmp if np.all(np.isfinite(zmp.zmp)) else None
        pushes = []
        for push in self.pushes.active():
            if push.start <= self.simulator.t < push.end:
                X = frame_placement(self.model, result.q, push.link)
                pushes.append((X[:3, :3] @ push.point + X[:3, 3], push.wrench[:3]))
        self.pub_markers.publish(
            cv.contact_markers(ns, self.params.odom_frame, points, forces, zmp_point, polygon, pushes=pushes)
        )

    def _publish_clock_now(self) -> None:
        """clock of the current tick, whatever the decimation."""
        sec, nanosec = divmod(self._tick * self._ns_per_tick, cv.NANOSECONDS_PER_SECOND)
        self.pub_clock.publish(self._clock_serialized.fill(sec, nanosec))

    def _publish_state_now(self) -> None:
        """joint_states, ground_truth/odom, tf and clock of the current state, whatever the decimation."""
        sim = self.simulator
        ns = self._tick * self._ns_per_tick
        q, v = sim.q, sim.v
        nj = self.model.nj
        applied = self._last_result.tau_applied if self._last_result is not None else np.zeros(nj)
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        self._publish_clock_now()
        self._publish_joint_states(sec, nanosec, q, v, applied)
        self._publish_odometry(sec, nanosec, q, v)
        self._publish_tf(sec, nanosec, q)
