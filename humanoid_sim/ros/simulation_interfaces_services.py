"""The ROS 2 simulation_interfaces standard, served by the simulation node under the names
Gazebo uses, relative to the node (``~/reset_simulation``: ``/humanoid_sim/reset_simulation``
for the default node name).

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py). Served: GetSimulatorFeatures (what is
listed here and nothing else), ResetSimulation (state; the simulation time runs on, as with the
std_srvs reset, so SCOPE_TIME is not supported), Get/SetSimulationState (playing, paused,
stopped = paused and reset), StepSimulation and the SimulateSteps action (one or more ticks
while paused; the action with feedback after each), GetEntities
(the robots, the objects and the environment's elements, by name regular expression and category),
GetEntityState (ground truth in odom), SetEntityState (a robot's base, a free object: pose
and twist), SpawnEntity (a free object: one world-file ``objects:`` entry as YAML, in
resource_string or a file named by uri; entity_resource.py) and DeleteEntity (a free object).
Entities: the robot (its URDF name, CATEGORY_ROBOT), the later robots of a world (their
entry names, CATEGORY_ROBOT; a base is at its RobotTree's coordinates), the free objects of the world
(CATEGORY_DYNAMIC_OBJECT) and the ground and static boxes (CATEGORY_STATIC_OBJECT, never
moving). Worlds, tags, bounds and spawning robots are not served (not listed as features).
"""

from __future__ import annotations

import re

import numpy as np
from geometry_msgs.msg import Accel, Pose, Twist
from simulation_interfaces.msg import EntityCategory, Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (
    DeleteEntity,
    GetEntities,
    GetEntityState,
    GetSimulationState,
    GetSimulatorFeatures,
    ResetSimulation,
    SetEntityState,
    SetSimulationState,
    SpawnEntity,
    StepSimulation,
)

try:  # the action, where this simulation_interfaces has it (2.x)
    from simulation_interfaces.action import SimulateSteps
except ImportError:  # pragma: no cover - older distributions
    SimulateSteps = None

from humanoid_sim.contact.environment import rpy_to_rotation
from humanoid_sim.dynamics.spatial import quaternion_to_rotation, rotation_to_quaternion
from humanoid_sim.ros import conversions as cv
from humanoid_sim.ros.entity_resource import ResourceError, spawned_object
from humanoid_sim.simulator.readouts import base_acceleration

__all__ = ["FEATURES", "SimulationInterfaces", "entity_state_of_base"]

FEATURES = (
    SimulatorFeatures.SPAWNING,
    SimulatorFeatures.SPAWNING_RESOURCE_STRING,
    SimulatorFeatures.DELETING,
    SimulatorFeatures.ENTITY_CATEGORIES,
    SimulatorFeatures.ENTITY_STATE_GETTING,
    SimulatorFeatures.ENTITY_STATE_SETTING,
    SimulatorFeatures.SIMULATION_RESET,
    SimulatorFeatures.SIMULATION_RESET_STATE,
    SimulatorFeatures.SIMULATION_STATE_GETTING,
    SimulatorFeatures.SIMULATION_STATE_SETTING,
    SimulatorFeatures.SIMULATION_STATE_PAUSE,
    SimulatorFeatures.STEP_SIMULATION_SINGLE,
    SimulatorFeatures.STEP_SIMULATION_MULTIPLE,
) + ((SimulatorFeatures.STEP_SIMULATION_ACTION,) if SimulateSteps is not None else ())
SPAWN_FORMATS = ("yaml",)  # one world-file object entry (docs/world.md)
# StepSimulation's largest request (a service call should answer within seconds).
MAX_STEPS = 100_000


def _result(code: int, message: str = "") -> Result:
    return Result(result=code, error_message=message)


def entity_state_of_base(q: np.ndarray, v: np.ndarray, acceleration: np.ndarray) -> tuple[Pose, Twist, Accel]:
    """Pose, twist and acceleration of a floating base in the world (odom) frame.

    q (7,): position and quaternion (x, y, z, w); v (6,): base-frame linear and angular
    velocity (the simulator's convention); acceleration (6,): world linear and angular [m/s^2,
    rad/s^2]."""
    R = quaternion_to_rotation(q[3:7])
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(x) for x in q[0:3])
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (float(x) for x in q[3:7])
    twist = Twist()
    linear, angular = R @ v[0:3], R @ v[3:6]
    twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in linear)
    twist.angular.x, twist.angular.y, twist.angular.z = (float(x) for x in angular)
    accel = Accel()
    accel.linear.x, accel.linear.y, accel.linear.z = (float(x) for x in acceleration[0:3])
    accel.angular.x, accel.angular.y, accel.angular.z = (float(x) for x in acceleration[3:6])
    return pose, twist, accel


def base_from_entity_state(pose: Pose, twist: Twist) -> tuple[np.ndarray, np.ndarray]:
    """(q base (7,), v base (6,) in the base frame) of a world pose and world twist; raises
    ValueError for a non-finite value or a quaternion that is not of unit length (±1e-3)."""
    p, o = pose.position, pose.orientation
    q = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w], dtype=float)
    w = np.array([twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x, twist.angular.y, twist.angular.z])
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(w))):
        raise ValueError("pose and twist must be finite")
    if abs(np.linalg.norm(q[3:7]) - 1.0) > 1e-3:
        raise ValueError(f"orientation quaternion has length {np.linalg.norm(q[3:7]):.6g}, expected 1")
    q[3:7] /= np.linalg.norm(q[3:7])
    R = quaternion_to_rotation(q[3:7])
    return q, np.concatenate([R.T @ w[0:3], R.T @ w[3:6]])


class SimulationInterfaces:
    """simulation_interfaces services of SimNode (a mixin: ``self`` is the node)."""

    def _make_simulation_interfaces(self) -> None:
        for srv_type, name, callback in (
            (GetSimulatorFeatures, "get_simulator_features", self._si_features),
            (ResetSimulation, "reset_simulation", self._si_reset),
            (GetSimulationState, "get_simulation_state", self._si_get_state),
            (SetSimulationState, "set_simulation_state", self._si_set_state),
            (StepSimulation, "step_simulation", self._si_step),
            (GetEntities, "get_entities", self._si_entities),
            (GetEntityState, "get_entity_state", self._si_get_entity_state),
            (SetEntityState, "set_entity_state", self._si_set_entity_state),
            (SpawnEntity, "spawn_entity", self._si_spawn_entity),
            (DeleteEntity, "delete_entity", self._si_delete_entity),
        ):
            self.create_service(srv_type, f"~/{name}", callback)
        if SimulateSteps is not None:
            from rclpy.action import ActionServer
            from rclpy.qos import QoSProfile

            # feedback of up to MAX_STEPS ticks is published within milliseconds: a deeper
            # history than the default 10 keeps more of it for a slow reader
            self._simulate_steps_server = ActionServer(
                self, SimulateSteps, "~/simulate_steps", self._si_simulate_steps,
                feedback_pub_qos_profile=QoSProfile(depth=100),
            )  # fmt: skip

    def _later_robots(self) -> dict:
        """The robots of the world after the node's robot: entry name -> RobotTree."""
        world_model = self.simulator.world_model
        return {t.name: t for t in world_model.robots[1:]} if world_model is not None else {}

    def _floating_parts(self) -> dict[str, tuple[slice, slice]]:
        """Entity name -> (its 7 q, its 6 v) for every entity that moves freely: the robot's
        floating base, each later robot's floating base, each free object."""
        parts = {self.model.name: (slice(0, 7), slice(0, 6))} if self.model.floating_base else {}
        for name, tree in self._later_robots().items():
            if tree.model.floating_base:
                parts[name] = (slice(tree.q.start, tree.q.start + 7), slice(tree.v.start, tree.v.start + 6))
        parts.update({o.name: (o.q, o.v) for o in self.world_objects})
        return parts

    def _entities(self) -> dict[str, int]:
        """Entity name -> EntityCategory: the robot (its URDF name), the world's later robots
        (their entry names), the free objects, then the environment's elements."""
        entities = {self.model.name: EntityCategory.CATEGORY_ROBOT}
        for name in self._later_robots():
            entities[name] = EntityCategory.CATEGORY_ROBOT
        for obj in self.world_objects:
            entities[obj.name] = EntityCategory.CATEGORY_DYNAMIC_OBJECT
        for name in self.simulator.config.environment.element_names():
            entities.setdefault(name, EntityCategory.CATEGORY_STATIC_OBJECT)
        return entities

    def _si_features(self, request: GetSimulatorFeatures.Request, response: GetSimulatorFeatures.Response):
        response.features.features = list(FEATURES)
        response.features.spawn_formats = list(SPAWN_FORMATS)
        response.features.custom_info = (
            "humanoid_sim: reset keeps the simulation time running; entities are the robot (base pose and twist"
            " settable), the free objects (pose and twist settable; spawned from one world-file object entry"
            " as YAML in resource_string or a file uri, deleted by name) and the static environment;"
            " std_srvs reset/pause/step/push also served"
        )
        return response

    def _si_reset(self, request: ResetSimulation.Request, response: ResetSimulation.Response):
        scope = request.scope
        if scope in (ResetSimulation.Request.SCOPE_TIME, ResetSimulation.Request.SCOPE_SPAWNED):
            response.result = _result(Result.RESULT_FEATURE_UNSUPPORTED,
                                      "only the state is reset: simulation time runs on and nothing is spawned")
            return response
        self._reset_state()
        response.result = _result(Result.RESULT_OK, "state reset to the initial pose; simulation time runs on")
        return response

    def _si_get_state(self, request: GetSimulationState.Request, response: GetSimulationState.Response):
        response.state.state = SimulationState.STATE_PAUSED if self._paused else SimulationState.STATE_PLAYING
        response.result = _result(Result.RESULT_OK, self._failed and f"paused by a failed step: {self._failed}")
        return response

    def _si_set_state(self, request: SetSimulationState.Request, response: SetSimulationState.Response):
        target = request.state.state
        if target == SimulationState.STATE_STOPPED:
            self._set_paused(True)
            self._reset_state()
            response.result = _result(Result.RESULT_OK, "paused and reset")
            return response
        if target not in (SimulationState.STATE_PLAYING, SimulationState.STATE_PAUSED):
            response.result = _result(Result.RESULT_FEATURE_UNSUPPORTED, f"state {target} cannot be set here")
            return response
        pause = target == SimulationState.STATE_PAUSED
        if self._paused == pause:
            response.result = _result(SetSimulationState.Response.ALREADY_IN_TARGET_STATE)
            return response
        error = self._set_paused(pause)
        response.result = _result(
            SetSimulationState.Response.STATE_TRANSITION_ERROR if error else Result.RESULT_OK, error
        )
        return response

    def _si_step(self, request: StepSimulation.Request, response: StepSimulation.Response):
        with self._lock:
            if not self._paused:
                response.result = _result(Result.RESULT_INCORRECT_STATE, "not paused: pause the simulation first")
                return response
            if not 1 <= request.steps <= MAX_STEPS:
                response.result = _result(Result.RESULT_OPERATION_FAILED, f"steps must be 1..{MAX_STEPS}")
                return response
            for k in range(request.steps):
                if self._failed or self._do_tick(every_state=k == request.steps - 1) is None:
                    response.result = _result(Result.RESULT_OPERATION_FAILED, f"step {k + 1} failed: {self._failed}")
                    return response
        response.result = _result(Result.RESULT_OK)
        return response

    def _si_simulate_steps(self, goal_handle):
        """SimulateSteps: ``steps`` ticks of a paused simulation, feedback after each."""
        steps = goal_handle.request.steps
        result = SimulateSteps.Result()
        feedback = SimulateSteps.Feedback()
        if not self._paused or not 1 <= steps <= MAX_STEPS:
            reason = "not paused: pause the simulation first" if not self._paused else f"steps must be 1..{MAX_STEPS}"
            result.result = _result(Result.RESULT_OPERATION_FAILED, reason)
            goal_handle.abort()
            return result
        for k in range(steps):
            with self._lock:
                ticked = not self._failed and self._do_tick(every_state=k == steps - 1) is not None
            if not ticked:
                result.result = _result(Result.RESULT_OPERATION_FAILED, f"step {k + 1} failed: {self._failed}")
                goal_handle.abort()
                return result
            feedback.completed_steps, feedback.remaining_steps = k + 1, steps - k - 1
            goal_handle.publish_feedback(feedback)
        result.result = _result(Result.RESULT_OK)
        goal_handle.succeed()
        return result

    def _si_entities(self, request: GetEntities.Request, response: GetEntities.Response):
        filters = request.filters
        if filters.tags.tags or filters.bounds.type != filters.bounds.TYPE_EMPTY:
            response.result = _result(Result.RESULT_FEATURE_UNSUPPORTED, "tag and bounds filters are not supported")
            return response
        try:
            pattern = re.compile(filters.filter) if filters.filter else None
        except re.error as exc:
            response.result = _result(Result.RESULT_OPERATION_FAILED, f"filter is not a regular expression: {exc}")
            return response
        categories = {c.category for c in filters.categories}
        response.entities = [
            name for name, category in self._entities().items()
            if (pattern is None or pattern.search(name)) and (not categories or category in categories)
        ]
        response.result = _result(Result.RESULT_OK)
        return response

    def _si_get_entity_state(self, request: GetEntityState.Request, response: GetEntityState.Response):
        entities = self._entities()
        if request.entity not in entities:
            response.result = _result(Result.RESULT_NOT_FOUND, f"no entity {request.entity!r}; entities: {', '.join(entities)}")
            return response
        state = response.state
        state.header.frame_id = self.params.odom_frame
        with self._lock:
            state.header.stamp = cv.stamp_from_nanoseconds(self._tick * self._ns_per_tick)
            parts = self._floating_parts()
            if request.entity in parts:  # a floating base or a free object
                qs, vs = parts[request.entity]
                q, v = self.simulator.q, self.simulator.v
                acceleration = np.zeros(6)
                last, previous = self._last_result, self._previous_result
                if last is not None and previous is not None:
                    acceleration[0:3] = base_acceleration(
                        last.q[qs], last.v[vs], previous.q[qs], previous.v[vs], self.params.physics_dt
                    )
                state.pose, state.twist, state.acceleration = entity_state_of_base(q[qs], v[vs], acceleration)
            else:
                state.pose = self._static_pose(request.entity)
        response.result = _result(Result.RESULT_OK)
        return response

    def _static_pose(self, name: str) -> Pose:
        """Pose of a robot fixed to the world (its root at the origin) or an environment element."""
        pose = Pose()
        pose.orientation.w = 1.0
        environment = self.simulator.config.environment
        for box in environment.boxes:
            if box.name == name:
                pose.position.x, pose.position.y, pose.position.z = (float(x) for x in box.position)
                x, y, z, w = rotation_to_quaternion(rpy_to_rotation(np.asarray(box.rpy, dtype=float)))
                pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = x, y, z, w
        if environment.ground is not None and name == environment.ground.name:
            pose.position.z = float(environment.ground.height)
        return pose

    def _si_set_entity_state(self, request: SetEntityState.Request, response: SetEntityState.Response):
        parts = self._floating_parts()
        robots = {self.model.name, *self._later_robots()}
        if request.entity not in robots and request.entity not in parts:
            known = request.entity in self._entities()
            response.result = _result(
                Result.RESULT_OPERATION_FAILED if known else Result.RESULT_NOT_FOUND,
                f"{request.entity!r} is static" if known else f"no entity {request.entity!r}",
            )
            return response
        if request.set_acceleration or request.entity not in parts:
            response.result = _result(Result.RESULT_FEATURE_UNSUPPORTED,
                                      "only the pose and twist of the floating base or a free object can be set")
            return response
        q_part, v_part = parts[request.entity]  # a robot's base or an object
        try:
            q_base, v_base = base_from_entity_state(request.state.pose, request.state.twist)
        except ValueError as exc:
            response.result = _result(SetEntityState.Response.INVALID_POSE, str(exc))
            return response
        with self._lock:
            q, v = self.simulator.q, self.simulator.v
            if request.set_pose:
                q[q_part] = q_base
            if request.set_twist:
                v[v_part] = v_base
            self.simulator.set_state(q, v, self.simulator.t)
            self._previous_result = self._last_result = None
            self._publish_state_now()
        response.result = _result(Result.RESULT_OK)
        return response

    def _si_spawn_entity(self, request: SpawnEntity.Request, response: SpawnEntity.Response):
        """A free object from one world-file object entry (entity_resource.spawned_object);
        the request's initial_pose (odom) is its pose unless left at the origin with identity
        orientation, where the entry's own position_m / rpy hold."""
        resource = getattr(request, "entity_resource", request)  # 2.x: a Resource; 1.x: fields of the request
        odom = self.params.odom_frame
        stamped = request.initial_pose
        if stamped.header.frame_id not in ("", odom):
            response.result = _result(SpawnEntity.Response.INVALID_POSE,
                                      f"initial_pose frame {stamped.header.frame_id!r}: only {odom!r} (or empty) is known")
            return response
        pose = None
        p, o = stamped.pose.position, stamped.pose.orientation
        if (p.x, p.y, p.z, o.x, o.y, o.z, o.w) != (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0):
            try:
                q_pose, _ = base_from_entity_state(stamped.pose, Twist())
            except ValueError as exc:
                response.result = _result(SpawnEntity.Response.INVALID_POSE, str(exc))
                return response
            pose = (q_pose[0:3], quaternion_to_rotation(q_pose[3:7]))
        codes = {
            "no_resource": SpawnEntity.Response.NO_RESOURCE, "parse": SpawnEntity.Response.RESOURCE_PARSE_ERROR,
            "name_invalid": SpawnEntity.Response.NAME_INVALID, "name_not_unique": SpawnEntity.Response.NAME_NOT_UNIQUE,
        }  # fmt: skip
        with self._lock:
            taken = set(self._entities()) | set(self.model.body_names) | set(self.model.frames) | set(self._current_world().names())
            try:
                obj = spawned_object(resource.uri, resource.resource_string, request.name, taken, request.allow_renaming, pose)
            except ResourceError as exc:
                response.result = _result(codes[exc.kind], str(exc))
                return response
            try:
                self._spawn_object(obj)
            except (ValueError, RuntimeError) as exc:
                response.result = _result(Result.RESULT_OPERATION_FAILED, f"cannot add {obj.name!r}: {exc}")
                return response
        response.entity_name = obj.name
        response.result = _result(Result.RESULT_OK)
        return response

    def _si_delete_entity(self, request: DeleteEntity.Request, response: DeleteEntity.Response):
        """Delete a free object (the robot and static shapes cannot be deleted)."""
        with self._lock:
            entities = self._entities()
            if request.entity not in entities:
                response.result = _result(Result.RESULT_NOT_FOUND, f"no entity {request.entity!r}; entities: {', '.join(entities)}")
                return response
            if entities[request.entity] != EntityCategory.CATEGORY_DYNAMIC_OBJECT:
                response.result = _result(Result.RESULT_OPERATION_FAILED,
                                          f"{request.entity!r} is not a free object; only free objects can be deleted")
                return response
            try:
                self._delete_object(request.entity)
            except (ValueError, RuntimeError, KeyError) as exc:
                response.result = _result(Result.RESULT_OPERATION_FAILED, f"cannot delete {request.entity!r}: {exc}")
                return response
        response.result = _result(Result.RESULT_OK)
        return response
