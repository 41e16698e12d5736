"""The world's free objects in the simulation node: tf frames, markers, and spawning/deleting.

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py), which owns the simulator. Each free
object of the simulator's world (``Simulator.world_model``) is published

- on ``tf`` as ``odom -> <object name>`` (its body frame; a second TFMessage after the robot's
  at every tf publish), so RViz and tf2 see it;
- on ``objects`` (visualization_msgs/MarkerArray, in odom, at markers_rate while someone
  listens) as its shape at its pose (object_markers);
- on ``contact/<object>/wrench`` and ``contact/<object>/cop`` like a robot link (its share of
  every contact with the ground, a static shape, another object or the robot).

``_spawn_object`` / ``_delete_object`` rebuild the simulator from the world with the object
added or removed (``Simulator.from_world``), carrying the robot's and every other object's q
and v over (entity_resource.carried_state); the time runs on, pending pushes are dropped.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PointStamped, WrenchStamped
from visualization_msgs.msg import MarkerArray

from humanoid_sim.ros.entity_resource import carried_state, world_of_environment, world_with_object, world_without_object
from humanoid_sim.ros.object_markers import object_markers
from humanoid_sim.ros.sim_publishers import topic_token
from humanoid_sim.ros.sim_setup import simulator_of_world
from humanoid_sim.ros.tf_serialization import SerializedTf, SerializedWrench
from humanoid_sim.simulator.pushes import PushSchedule
from humanoid_sim.world import FreeObject, ObjectBody, World, assemble_world_model

__all__ = ["WorldObjects"]


class WorldObjects:
    """Free objects of SimNode's world (a mixin: ``self`` is the node)."""

    def _make_object_interfaces(self) -> None:
        """The ``objects`` marker publisher and the per-object tf layout (after _make_publishers)."""
        self.pub_objects = self._publisher(MarkerArray, "objects", 10)
        self._object_layout()

    @property
    def world_objects(self) -> tuple[ObjectBody, ...]:
        """The simulator's free objects (empty without a world)."""
        world_model = self.simulator.world_model
        return world_model.objects if world_model is not None else ()

    def _object_layout(self) -> None:
        """tf pairs, q indices and contact publishers of the current objects (after each rebuild)."""
        objects = self.world_objects
        odom = self.params.odom_frame
        self._object_tf = SerializedTf([(odom, o.name) for o in objects]) if objects else None
        self._object_rows = np.zeros((len(objects), 7))
        self._object_q_index = np.array([np.arange(o.q.start, o.q.stop) for o in objects], dtype=np.int64).reshape(-1, 7)
        links = tuple(dict.fromkeys(self.model.body_names[s.body] for s in self.model.collision_shapes))
        for link in links:
            if link not in self.pub_wrench:
                self.pub_wrench[link] = self._publisher(WrenchStamped, f"contact/{topic_token(link)}/wrench", 10)
                self.pub_cop[link] = self._publisher(PointStamped, f"contact/{topic_token(link)}/cop", 10)
                self._wrench_serialized[link] = SerializedWrench(link)
        for link in set(self.pub_wrench) - set(links):
            self.destroy_publisher(self.pub_wrench.pop(link))
            self.destroy_publisher(self.pub_cop.pop(link))
            del self._wrench_serialized[link]
            self._links_in_contact.discard(link)
        self.contact_links = links

    def _object_poses(self, q: np.ndarray) -> np.ndarray:
        """(n, 7) pose rows (position, quaternion x y z w) of the objects at q, into a buffer."""
        return np.take(q, self._object_q_index, out=self._object_rows)

    def _publish_object_tf(self, sec: int, nanosec: int, q: np.ndarray) -> None:
        if self._object_tf is not None:
            self.pub_tf.publish(self._object_tf.fill_rows(sec, nanosec, self._object_poses(q)))

    def _publish_object_markers(self, ns: int, q: np.ndarray) -> None:
        objects = self.world_objects
        if not self.pub_objects.get_subscription_count():
            return
        self.pub_objects.publish(object_markers(
            ns, self.params.odom_frame, [o.name for o in objects], [o.description.shape for o in objects],
            self._object_poses(q),
        ))  # fmt: skip

    # ------------------------------------------------------------------ spawning and deleting
    def _current_world(self) -> World:
        world_model = self.simulator.world_model
        if world_model is not None:
            return world_model.world
        return world_of_environment(self.simulator.config.environment)

    def _spawn_object(self, obj: FreeObject) -> None:
        """Add ``obj`` (at its own pose and twist) to the running simulation. Raises ValueError
        (the world's or the simulator's message) when it cannot be added; nothing changes then."""
        with self._lock:
            self._replace_world(world_with_object(self._current_world(), obj))

    def _delete_object(self, name: str) -> None:
        """Remove the free object ``name``; KeyError (listing the objects) if there is none."""
        with self._lock:
            self._replace_world(world_without_object(self._current_world(), name))

    def _replace_world(self, world: World) -> None:
        """Rebuild the simulator from ``world`` with the same robot; every body present before
        keeps its state, and its initial state for reset; a new object starts at its own pose
        and twist. Caller holds the lock."""
        old = self.simulator.world_model
        robot = old.robot if old is not None else self.model
        later = [t.model for t in old.robots[1:]] if old is not None else None
        world_model = assemble_world_model(world, robot, later)
        simulator = simulator_of_world(self.params, world_model, self.get_logger().warning)
        q, v = carried_state(old, self.simulator.q, self.simulator.v, world_model, simulator.q, simulator.v)
        q0, v0 = carried_state(old, self.q_initial, self.v_initial, world_model, simulator.q, simulator.v)
        simulator.set_state(q, v, self.simulator.t)
        self.simulator, self.model = simulator, simulator.model
        self.limits = simulator.providers[0]
        self.q_initial, self.v_initial = q0, v0
        self.pushes = PushSchedule(self.model)
        self._previous_result = self._last_result = None
        self._object_layout()
        self._publish_state_now()
