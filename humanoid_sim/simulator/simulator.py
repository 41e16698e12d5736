"""The fixed-step simulator: state (q, v, t) and ``step(tau)`` (seed 000, 4.9; DESIGN.md).

One step at (q, v):
 1. kinematics, M and b of the model (one numba call, dynamics.DynamicsWorkspace),
    the velocity-limit rule on the efforts, the providers' rows (a range of motion's made
    in the same compiled call: limits/step_limits.py); then steps 2-5 as one compiled call
    for every case (contact/step_kernel.py):
 2. detection of collision shapes against the environment; points moving away
    faster than ``thresholds.separating`` are dropped; classification point /
    line / surface and virtual-link frames (4.2, Table 1);
 3. if a contact (or a hard provider row) approaches faster than
    ``thresholds.impact``: impulses by Eq. 18-19 with restitution Eq. 15
    (normal -e v_n above ``thresholds.bounce``, else 0; tangential 0 when
    sticking), checked as in 4.6; the velocity jumps to v+;
 4. the solve of Eq. 20a/20b for accelerations and contact wrenches with the
    validity checks of 4.4-4.5 (at most ``max_rounds`` solves);
 5. integration: fourth-order Runge-Kutta-Munthe-Kaas from (q, v+), the solve's
    acceleration its first stage and its constraint force held over the step
    (dynamics/integrator.py; docs/integration.md says why).
A solve that fails its checks is replaced by the bounded solve (contact/bounded_solve.py),
never integrated; ``SimulationError`` (state unchanged) means a bug or non-finite input.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import typeof

from humanoid_sim.contact.bounded_solve import BOUNDED_REGULARISATION, BOUNDED_SWEEPS, BOUNDED_TOLERANCE
from humanoid_sim.contact.constrained_solve import SimulationError
from humanoid_sim.contact.constraint_rows import ConstraintProvider, OneSidedRows
from humanoid_sim.contact.convex_shapes import ShapeSpec, pack_shapes
from humanoid_sim.contact.kernels import all_finite
from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, Material
from humanoid_sim.contact.gains import Gains, Thresholds
from humanoid_sim.contact.step_data import (
    Dynamics,
    StepParams,
    StepState,
    StepStatics,
    allocate_contact_table,
    allocate_detection,
    allocate_hard_rows,
    allocate_memory,
    allocate_output,
    allocate_solve,
    body_pairs,
    joint_friction,
    make_step_data,
    read_counts,
    result_head,
    result_size,
)
from humanoid_sim.contact.methods import (
    CAPACITY,
    CONTACT_METHODS,
    NONFINITE,
    OK,
    PENALTY_VOLUME,
    RELAXED_QP,
    SINGULAR,
    VIRTUAL_LINK,
    method_index,
)
from humanoid_sim.contact.penalty_volume import PenaltyVolumeParams, allocate_penalty_volume
from humanoid_sim.contact.relaxed_qp import RelaxedQpParams, allocate_relaxed_qp
from humanoid_sim.contact.step_kernel import update_dynamics_nb
from humanoid_sim.contact.self_collision import self_collision_pairs
from humanoid_sim.dynamics.configuration import normalize_quaternions_into
from humanoid_sim.dynamics.integrator import stage_work
from humanoid_sim.dynamics.kinematic_tree import kinematic_tree
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.limits.step_limits import NONFINITE_ROW, CompiledRows, no_compiled_rows
from humanoid_sim.limits.velocity_limits import velocity_rule
from humanoid_sim.model.robot_model import RobotModel, ShapeKind
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.simulator.initial_pose import (
    InitialPose,
    entry_pose,
    load_initial_poses,
    pose_configuration,
    starting_pose,
)
from humanoid_sim.simulator.actuation import (
    NONFINITE_EFFORT,
    NONFINITE_LIMIT_ROW,
    SINGULAR_MASS,
    actuation,
    advance_nb,
    limit_velocity_nb,
)
from humanoid_sim.simulator.link_wrenches import LinkWrenches, generalized_force
from humanoid_sim.simulator.step_result import ContactReport, ContactReports, StepLayout, StepResult
from humanoid_sim.world.assembly import WorldModel

# a failed step's message by its status (simulator/actuation.py, contact/methods.py); {t}: the time [s]
_FAILURES = {
    NONFINITE_EFFORT: "tau has non-finite entries",
    SINGULAR_MASS: "mass matrix is not positive definite or not finite (massless subtree?)",
    SINGULAR: "mass matrix is not positive definite or not finite (massless subtree?)",
    NONFINITE: "step at t = {t:.6f} s produced a non-finite state",
}

__all__ = ["ContactReport", "ContactReports", "SimulationError", "Simulator", "SimulatorConfig", "StepResult"]


@dataclass(frozen=True)
class SimulatorConfig:
    """dt: step [s]. environment: ground and static boxes. gravity: world gravity [m/s^2],
    shape (3,), None = the model's. contact_tolerance: detection band [m].
    speculative_distance: smallest band beyond contact_tolerance [m] in which a point that
    would reach the surface within the step takes part in the impulse phase (speculative
    contact), so that an arriving body is stopped at the surface rather than inside it; the
    band grows with the bodies' speeds each step (step_kernel.speculative_band_nb).
    max_rounds: solves per validity loop (seed 000 4.4: at most 3).
    correction_steps: penetration/drift errors decay critically damped over this many steps.
    massless_link_armature: rotor inertia [kg m^2 or kg] on the joints whose own link has no
    mass or no rotational inertia about some axis (the intermediate links of a shoulder, hip
    or neck written as three revolute joints; a point mass on a joint axis): where such
    joints' axes align (a shoulder rolled 90 degrees), or always for a point mass on its
    axis, the joint-space inertia M is singular and any torque difference between them an
    infinite acceleration; a real actuator has this inertia (URDF cannot say it). 0 turns it off.
    thresholds: velocity thresholds of separation, impact and bounce [m/s].
    self_collision: links of the robot collide with each other (not those of one body, nor
    adjacent links, nor the link pairs of ``srdf``'s ``<disable_collisions>``); bodies of
    different trees (free objects) always collide with each other. srdf: an SRDF file path
    or None. body_material: friction and restitution between two bodies.
    contact_method: how contacts are solved (contact/methods.py): "virtual_link" (seed 000),
    "relaxed_qp" (seed 002) or "penalty_volume" (seed 004); None: the world file's
    (Simulator.from_world) if it names one, else "virtual_link" (Simulator.contact_method says
    which); relaxed_qp, penalty_volume: the constants of those methods."""

    dt: float = 1e-3
    environment: Environment = field(default_factory=Environment)
    gravity: np.ndarray | None = None
    contact_tolerance: float = 2e-4
    speculative_distance: float = 0.005
    max_rounds: int = 3
    correction_steps: float = 4.0
    massless_link_armature: float = 1e-3
    thresholds: Thresholds = Thresholds()
    self_collision: bool = False
    srdf: str | None = None
    body_material: Material = Material()
    contact_method: str | None = None
    relaxed_qp: RelaxedQpParams = RelaxedQpParams()
    penalty_volume: PenaltyVolumeParams = PenaltyVolumeParams()

    def __post_init__(self) -> None:
        if self.contact_method is not None:
            method_index(self.contact_method)  # UnknownNameError lists the methods
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"SimulatorConfig.dt = {self.dt!r}: must be finite and > 0 [s]")
        if self.max_rounds < 1:
            raise ValueError(f"SimulatorConfig.max_rounds = {self.max_rounds}: must be >= 1")
        if not (np.isfinite(self.contact_tolerance) and self.contact_tolerance >= 0):
            raise ValueError(f"SimulatorConfig.contact_tolerance = {self.contact_tolerance!r}: must be finite and >= 0 [m]")
        if not (np.isfinite(self.speculative_distance) and self.speculative_distance >= 0):
            raise ValueError(
                f"SimulatorConfig.speculative_distance = {self.speculative_distance!r}: must be finite and >= 0 [m]"
            )
        if not (np.isfinite(self.massless_link_armature) and self.massless_link_armature >= 0):
            raise ValueError(
                f"SimulatorConfig.massless_link_armature = {self.massless_link_armature!r}: must be finite and >= 0"
            )
        if not self.correction_steps >= 1.0:
            raise ValueError(f"SimulatorConfig.correction_steps = {self.correction_steps}: must be >= 1")
        if self.gravity is not None:
            g = np.asarray(self.gravity, dtype=float)
            if g.shape != (3,) or not np.all(np.isfinite(g)):
                raise ValueError(f"SimulatorConfig.gravity must be 3 finite numbers, got {self.gravity!r}")


# a provider's empty batch of rows: no table rows, no forces (read-only, shared)
_NO_ROWS = np.zeros(0, np.int64)
_NO_FORCES = np.zeros(0)
_NO_ROWS.setflags(write=False)
_NO_FORCES.setflags(write=False)


class _Batch(NamedTuple):
    """One provider's rows in a step: start, the first table row of its hard rows; hard (h,)
    int64, their indices; names, their names; soft (k,) bool, its soft rows (None: none), and
    soft_force, their spring-damper forces at the start of the step [N m or N]."""

    start: int
    hard: np.ndarray
    names: tuple[str, ...]
    soft: np.ndarray | None
    soft_force: np.ndarray | None


def _hard_row_count(batches: list[_Batch]) -> int:
    """The hard rows of all providers' batches: the step's hard-row table rows in use."""
    return batches[-1].start + len(batches[-1].hard) if batches else 0


class Simulator:
    """A deterministic fixed-step simulator of one model in one environment: a robot, or a
    world's robot and free objects as one model of several trees (``from_world``)."""

    def __init__(
        self,
        model: RobotModel,
        config: SimulatorConfig | None = None,
        providers: Sequence[ConstraintProvider] = (),
        poses: dict[str, InitialPose] | None = None,
        world_model: WorldModel | None = None,
    ) -> None:
        """model: the robot, or world_model.model when world_model (Simulator.from_world) is
        given. Two bodies touch with the mean of their materials (friction, restitution): a
        world object's own, ``config.body_material`` for the robot's links; a body and the
        environment with the environment element's. The ZMP is the robot's: the first
        world_model.robot_nb bodies (the first tree without a world model)."""
        self.config = config = config or SimulatorConfig()
        if config.gravity is not None:
            model = dataclasses.replace(model, gravity=np.asarray(config.gravity, dtype=float).copy())
        self.model = model
        # the world this simulator's model was assembled from (Simulator.from_world), else None
        self.world_model = world_model
        self.providers = tuple(providers)
        # the first provider whose rows the compiled step makes itself (ConstraintProvider.compiled_rows);
        # the others' rows through rows() and accept_forces() (the general providers)
        compiled = [i for i, p in enumerate(self.providers) if getattr(p, "compiled_rows", None) is not None][:1]
        self._compiled_index = compiled[0] if compiled else -1
        self._compiled_provider = self.providers[compiled[0]] if compiled else None
        self._compiled_rows: CompiledRows = (self._compiled_provider.compiled_rows if compiled
                                             else no_compiled_rows(model.nv))  # fmt: skip
        self._general = tuple(p for i, p in enumerate(self.providers) if i != self._compiled_index)
        self._validated_empty: list[OneSidedRows | None] = [None] * len(self._general)
        # providers whose rows are checked where they are built (ConstraintProvider.rows_checked)
        self._rows_checked = tuple(getattr(p, "rows_checked", False) is True for p in self._general)
        # a step whose general providers all return their validated empty batch: no rows, no forces
        self._no_batches = [_Batch(0, _NO_ROWS, (), None, None)] * len(self._general)
        self._no_forces = (_NO_FORCES,) * len(self._general)
        self._point_forces = self.contact_method != CONTACT_METHODS[VIRTUAL_LINK]  # reports carry per-point forces
        self._solver = "checked" if not self._point_forces else self.contact_method  # StepResult.solver
        # a general provider's row name -> its force in the last step [N m or N]
        self._last_hard_force: dict[str, float] = {}
        self.ws = DynamicsWorkspace(model)
        self._tree = kinematic_tree(model)
        t = self._tree
        self._armature = np.zeros(model.nv)
        for body in range(t.nb):
            # no mass, or no rotational inertia about some axis (a point mass on the joint axis)
            degenerate = model.mass[body] == 0.0 or np.linalg.eigvalsh(model.inertia_com[body])[0] <= 0.0
            if t.ndof[body] == 1 and degenerate:
                self._armature[t.v_index[body]] = config.massless_link_armature
        try:  # the actuated joints' v coordinates: one slice for one robot, indices for several
            self._joints = model.joint_v_slice
        except ValueError:
            self._joints = model.joint_v_index
        self._joint_index = np.ascontiguousarray(model.joint_v_index, dtype=np.int64)  # the same, for kernels
        self._damping = np.zeros(model.nv)  # joint damping [N m s/rad or N s/m], zero on free bodies
        self._damping[self._joints] = model.joint_dynamics.damping
        # Joint damping is linearly implicit: every solve and every Runge-Kutta stage uses
        # (M + diag(armature) + dt D) a = tau - D v - b, i.e. the damping force at the velocity
        # the stage reaches, -D (v + dt a). Explicit damping diverges once D dt exceeds twice
        # the joint's effective inertia (icub's 1 N m s/rad wrists and neck: D dt / m ~ 1e2
        # at 1 ms); implicit damping is stable for any D and still dissipates.
        self._diagonal = self._armature + config.dt * self._damping
        self._stage = stage_work(t, self._diagonal)
        # the actuated joints' efforts: clamped to their limits, then limited by the velocity-limit
        # (safety-controller) rule at the end of the step, all joints at once (limits/velocity_limits.py)
        self._actuation = actuation(model.limits.effort, self._joint_index, velocity_rule(model), model.nv)
        self._zero_nj = np.zeros(model.nj)
        self._zero_nv = np.zeros(model.nv)
        self._external = np.zeros(model.nv)
        self.detector = ContactDetector(
            model, config.environment, config.contact_tolerance + config.speculative_distance, config.contact_tolerance
        )
        geo = self.detector.geometry
        self._reach = np.zeros(len(model.body_names))  # farthest collision point from each body origin [m]
        for b, local, radius in zip(geo.body, geo.local, geo.radius):
            self._reach[b] = max(self._reach[b], float(np.linalg.norm(local)) + float(radius))
        env = config.environment
        first_box = 1 if env.ground else 0  # the elements: the ground, the static boxes, then pairs of bodies
        first_row = first_box + len(env.boxes)
        body_materials = [config.body_material] * model.nb
        robot = model.tree_root == 0
        if world_model is not None:
            for obj in world_model.objects:
                body_materials[obj.body] = obj.material
            robot = np.arange(model.nb) < world_model.robot_nb  # none in a world of objects alone
        self._pairs_static = _collision_pairs(model, config, self.detector._box_R, self.detector._box_p,
                                              self.detector._box_half, first_box, first_row)  # fmt: skip
        pair_names = self._pairs_static[-1]
        self._pair_materials = [_mean_material(body_materials[a], body_materials[b]) for a, b in self._pairs_static[-2]]
        self._robot_bodies = robot.astype(np.int64)  # their ground contacts make the ZMP
        self._element_names = list(env.element_names()) + pair_names
        # where a StepResult finds its parts in the copy of the step's result block
        self._layout = StepLayout(model.nq, model.nv, model.nj, self._point_forces, model.body_names,
                                  self._element_names)  # fmt: skip
        self.gains = Gains.critically_damped(config.dt, config.correction_steps)
        self._correction_rate = 2.0 * self.gains.kd  # [1/s]
        # poses: None = the model's section of the bundled config/initial_poses.yaml (a missing
        # bundled file is an installation fault and raises, naming where it was looked for)
        self.poses = dict(load_initial_poses(None, model.name) if poses is None else poses)
        # a world's later robots, each with the bundled poses of its own model (their entries place them)
        later = world_model.robots[1:] if world_model is not None else ()
        self._later_robots = tuple((tree, load_initial_poses(None, tree.model.name)) for tree in later)
        # the state (q, v), in the compiled step's own arrays: a step leaves its new state in them (StepState)
        self._state = StepState(np.zeros(model.nq), np.zeros(model.nv))
        self._q, self._v = self._state
        self._allocate_step(contacts=16, hard_rows=8)
        self._t = 0.0
        from humanoid_sim.model.configuration import neutral_configuration

        self.set_state(neutral_configuration(model), np.zeros(model.nv))

    @classmethod
    def from_urdf(
        cls, urdf: str | os.PathLike[str], pose: str = "stand", config: SimulatorConfig | None = None,
        mimic: str = "error", providers: Sequence[ConstraintProvider] = (),
    ) -> "Simulator":
        """A simulator of the robot of a URDF file (or URDF XML), reset to ``pose``: a pose of
        config/initial_poses.yaml for this robot, or "" for the robot's "stand" pose if it has
        one, else its neutral pose resting on the ground. Raises UrdfError for a robot file
        that does not load, UnknownNameError listing the robot's poses for a pose it lacks."""
        from humanoid_sim.model.urdf_loader import load_urdf

        sim = cls(load_urdf(urdf, mimic=mimic), config, providers)
        sim._start(starting_pose(sim.poses, pose, robot=sim.model.name))
        return sim

    @classmethod
    def from_world(
        cls, world_model: WorldModel, pose: str = "", config: SimulatorConfig | None = None,
        providers: Sequence[ConstraintProvider] = (), poses: dict[str, InitialPose] | None = None,
    ) -> "Simulator":
        """A simulator of a world's robots and free objects as one model
        (world/assembly.py), with the world's ground and static boxes as the environment
        (replacing ``config.environment``). The first robot starts in ``pose`` ("": the world's
        robot entry's initial_pose, else as ``from_urdf`` its "stand" pose if it has one, else
        its neutral pose resting on the ground; the entry's base_position / base_rpy override
        the pose's base), every later robot in its entry's pose and base placement (its poses:
        the bundled file's section of its own model's name), every object at its world-file
        pose and twist; ``reset(pose)`` puts the first robot in a named pose, the later robots
        in their entries' and the objects back at their world-file pose and twist.
        ``sim.world_model`` says where each robot's and object's bodies and coordinates are.
        The world's ``contact_method``, when it names one, is used unless ``config.contact_method``
        names one.
        Raises UnknownNameError listing the robot's poses for a pose it lacks."""
        config = dataclasses.replace(config or SimulatorConfig(), environment=world_model.world.environment())
        if config.contact_method is None and world_model.world.contact_method is not None:
            config = dataclasses.replace(config, contact_method=world_model.world.contact_method)
        sim = cls(world_model.model, config, providers, poses, world_model=world_model)
        if world_model.robot is None:
            sim.reset()
            return sim
        entry = world_model.robots[0].entry
        if entry is None:
            sim._start(starting_pose(sim.poses, pose, robot=sim.model.name))
        else:
            sim._start(entry_pose(sim.poses, pose or entry.initial_pose or "", entry.base_position, entry.base_rpy,
                                  sim.model.name))  # fmt: skip
        return sim

    # ------------------------------------------------------------------ state
    @property
    def q(self) -> np.ndarray:
        return self._q.copy()

    @property
    def v(self) -> np.ndarray:
        return self._v.copy()

    @property
    def t(self) -> float:
        return self._t

    @property
    def contact_method(self) -> str:
        """The contact method this simulator steps with (contact/methods.py)."""
        return self.config.contact_method or CONTACT_METHODS[VIRTUAL_LINK]

    @property
    def armature(self) -> np.ndarray:
        """Rotor inertia on the diagonal of M (nv,) [kg m^2 or kg] (see SimulatorConfig):
        the kinetic energy of the simulated system is 1/2 v^T (M + diag(armature)) v."""
        return self._armature.copy()

    def set_state(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        """Set q (nq,), v (nv,) and time [s]; forgets contact memory."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if q.shape != (self.model.nq,) or v.shape != (self.model.nv,):
            raise ValueError(f"state shapes q {q.shape}, v {v.shape}; expected ({self.model.nq},), ({self.model.nv},)")
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise ValueError("state has non-finite entries")
        self._q[:] = q
        normalize_quaternions_into(self._tree, self._q)
        self._v[:] = v
        self._t = float(t)
        self._memory.count[:] = 0
        self._last_hard_force = {}
        limits = self._compiled_rows.limits  # no warm start from before
        limits.warm[:] = 0.0
        limits.warmed[0] = 0

    def reset(self, pose: str = "stand") -> np.ndarray:
        """Reset to a named initial pose at rest (t = 0); returns q. In a world
        (``from_world``) the robot takes the pose at rest and every free object its
        world-file pose and twist; a world without a robot has no poses (``pose`` unused).
        Raises UnknownNameError (a KeyError) listing the robot's poses."""
        world = self.world_model
        if world is not None and world.robot is None:
            q, v = world.initial_state()
            self.set_state(q, v)
            return self.q
        if pose not in self.poses:
            raise UnknownNameError("initial pose", pose, self.poses, f"for robot {self.model.name!r}")
        self._start(self.poses[pose])
        return self.q

    def _start(self, pose: InitialPose) -> None:
        """The state of ``pose`` (the robot at rest, resting on the ground unless the pose
        gives a height; in a world, the objects at their world-file pose and twist)."""
        world, env = self.world_model, self.config.environment
        if world is None:
            self.set_state(pose_configuration(self.model, pose, env), np.zeros(self.model.nv))
        else:
            later = {
                tree.name: pose_configuration(tree.model, entry_pose(poses, tree.entry.initial_pose or "",
                                              tree.entry.base_position, tree.entry.base_rpy, tree.model.name), env)
                for tree, poses in self._later_robots
            }  # fmt: skip
            self.set_state(*world.initial_state(pose_configuration(world.robot, pose, env), later))

    # ------------------------------------------------------------------ step
    def step(
        self, tau: np.ndarray | None = None, external_force: np.ndarray | None = None,
        link_wrenches: LinkWrenches | None = None,
    ) -> StepResult:
        """Advance one step dt with joint torques tau (nj,) [N m or N] (None = zero).

        external_force: optional generalized force (nv,) added to τ_G, e.g. J^T F of a push
        F at a point (J from dynamics.point_jacobian) [N, N m]; not clamped.
        link_wrenches: optional {link name: LinkWrench(wrench (6,) world axes [N, N m], point
        (3,) in the link frame [m]) or a bare (6,) wrench at the link origin}, acting during
        this step (simulator/link_wrenches.py); UnknownNameError lists the links.

        Steps 1-5 (module docstring) run as one compiled call for every case: impacts,
        releases, slipping, spinning, area reductions, joint stops and the bounded solve
        (simulator/actuation.py, contact/step_kernel.py).
        """
        nj = self.model.nj
        if tau is None:
            tau_j = self._zero_nj
        else:
            tau_j = np.ascontiguousarray(tau, dtype=float)
            if tau_j.shape != (nj,):
                raise ValueError(f"tau has shape {tau_j.shape}, expected ({nj},) in joint_names order")
        external = self._zero_nv
        if external_force is not None or link_wrenches:
            external = self._external_forces(external_force, link_wrenches)
        q, v = self._q, self._v
        rows: list[OneSidedRows] = []
        batches: list[_Batch] = []
        soft, n_hard = self._zero_nv, 0
        if self._compiled_provider is not None and self._compiled_provider.compiled_rows is not self._compiled_rows:
            self._compiled_rows = self._compiled_provider.compiled_rows  # its groups replaced: new tables
            self._allocate_step(len(self._tables[0].body), self._hard_room)
        if self._general:
            rows = [p.rows(q, v) for p in self._general]
            empty = True
            for i, r in enumerate(rows):
                # an empty batch already validated (the same immutable object again) is skipped
                if r is not self._validated_empty[i]:
                    if not self._rows_checked[i]:
                        r.validate(self.model.nv)
                    if r.count == 0:
                        self._validated_empty[i] = r
                    else:
                        empty = False
            if empty:  # no provider has a row: nothing to sort, fill or hand back
                batches = self._no_batches
            else:
                batches, soft_force = self._provider_rows(rows, v)
                if soft_force is not None:
                    soft = soft_force
                n_hard = _hard_row_count(batches)
        while True:
            status = self._advance(self._data, tau_j, external, soft, n_hard)
            if status != CAPACITY:
                break
            # a table was too small: larger ones, the same step again
            self._allocate_step(2 * len(self._tables[0].body), 2 * self._hard_room)
            self._fill_hard_rows(rows, batches)
        self.ws.buffers_changed()  # the workspace's buffers now hold the dynamics at (q, v)
        if status == NONFINITE_LIMIT_ROW:
            raise ValueError(f"{self._compiled_provider.name}: {NONFINITE_ROW}")
        if status != OK:
            raise SimulationError(_FAILURES.get(status, f"step failed with status {status}").format(t=self._t))
        return self._result(rows, batches)

    def _external_forces(self, external_force: np.ndarray | None, link_wrenches: LinkWrenches | None) -> np.ndarray:
        """The external generalized force (nv,) of a step [N, N m]: ``external_force`` plus the
        pushes of ``link_wrenches`` at the current state."""
        model = self.model
        ext = self._external
        ext[:] = 0.0
        if external_force is not None:
            force = np.asarray(external_force, dtype=float)
            if force.shape != (model.nv,) or not all_finite(force):
                raise ValueError(f"external_force must be finite with shape ({model.nv},), got {force.shape}")
            ext += force
        if link_wrenches:
            ext += generalized_force(model, self._q, link_wrenches)
        return ext

    def _update_dynamics(self, q: np.ndarray, v: np.ndarray) -> bool:
        """The workspace at (q, v), with the armature and the implicit damping dt D on the
        diagonal of M, and M's tree factor (the step's bundles; one compiled call).
        False when M is not positive definite."""
        self.ws.buffers_changed()
        return update_dynamics_nb(self._data, q, v)

    def _limit_velocity(self, tau_j: np.ndarray, ext: np.ndarray | None) -> np.ndarray:
        """The applied efforts (nj,): tau_j limited by the velocity-limit rule evaluated at the
        end of the step for all joints at once (simulator/actuation.py), with the workspace and
        M's factor at the current state (_update_dynamics)."""
        act = self._actuation
        act.applied[:] = tau_j
        external = self._zero_nv if ext is None else np.ascontiguousarray(ext, dtype=float)
        limit_velocity_nb(act, self._solve_scratch.L, self._tree.dof_parent, self.ws.b, self._v, self._damping, external,
                          self.config.dt)  # fmt: skip
        return act.applied.copy()

    def _allocate_step(self, contacts: int, hard_rows: int) -> None:
        """The bundles of the compiled step (contact/step_data.py) for ``contacts`` contacts
        and ``hard_rows`` hard rows of the general providers; what a step hands the next (the
        contact memory, M's factor, the joint friction's warm starts, the broad phase's order)
        carries over, so that a table grown between two steps changes nothing of the next."""
        model, ws, cfg, g = self.model, self.ws, self.config, self.detector
        thr, geo, env = cfg.thresholds, g.geometry, cfg.environment
        nv, nq = model.nv, model.nq
        N = g.hit_capacity
        # points: every detected candidate, and the narrow phase's points of body pairs (up to 4 per contact)
        C, P, K = contacts, g.hit_capacity + 4 * contacts, hard_rows
        materials = ([env.ground.material] if env.ground else []) + [b.material for b in env.boxes]
        materials += self._pair_materials
        self._dyn = Dynamics(ws.R, ws.p, ws.S, ws.V, ws.A, ws.Iw, ws.M, ws.b, ws._acc, ws._f, ws.a_gravity, ws.zero_nv,
                             self._damping, ws.Ic, self._diagonal)  # fmt: skip
        statics = StepStatics(
            # static boxes go to the narrow phase (BodyPairs): none for the point detection
            geo.body, geo.kind, geo.local, geo.axis, geo.radius, self._reach, np.zeros((0, 3, 3)), np.zeros((0, 3)),
            np.zeros((0, 3)),
            np.array([m.mu_s for m in materials], dtype=float).reshape(-1),
            np.array([m.mu_d for m in materials], dtype=float).reshape(-1),
            np.array([m.restitution for m in materials], dtype=float).reshape(-1), self._robot_bodies,
        )  # fmt: skip
        method = method_index(self.contact_method)
        params = StepParams(
            cfg.dt, g._ground_h, bool(g._has_ground), cfg.contact_tolerance, cfg.speculative_distance, thr.separating,
            thr.impact, thr.bounce, self._correction_rate, self.gains.kp, self.gains.kd,
            self.gains.kd * thr.max_correction, int(cfg.max_rounds),
            BOUNDED_REGULARISATION, BOUNDED_SWEEPS, BOUNDED_TOLERANCE, method,
        )  # fmt: skip
        self._tables = (allocate_contact_table(C, P, nv), allocate_contact_table(C, P, nv))
        memory = allocate_memory(C)
        old = getattr(self, "_memory", None)
        if old is not None:  # carry the remembered contacts over
            cur = int(old.current[0])
            n = int(old.count[cur])
            for new_field, old_field in zip(memory, old):
                if new_field.ndim >= 2 and new_field.shape[0] == 2:
                    new_field[cur, :n] = old_field[cur, :n]
            memory.count[:] = old.count
            memory.current[:] = old.current
        self._memory = memory
        # the general providers' hard rows first, then room for every row of the compiled range of motion
        self._hard_room = K
        limits = self._compiled_rows.limits
        self._hard = allocate_hard_rows(K + (len(limits.table) if limits.on[0] else 0), nv)
        self._out = allocate_output(nq, nv, model.nj, P, C)
        self._result_head = result_head(nq, nv, model.nj)
        self._counts_bytes = self._out.counts.view(np.uint8)
        friction = model.joint_dynamics.friction
        joints = np.flatnonzero(friction > 0.0)
        old_friction = getattr(self, "_friction", None)
        self._friction = joint_friction(model.joint_v_index[joints], friction[joints], nv)
        if old_friction is not None:  # the last step's friction torques, the bounded solve's warm starts, carry over
            self._friction.torque[:] = old_friction.torque
        old_scratch = getattr(self, "_solve_scratch", None)
        self._solve_scratch = allocate_solve(6 * C + len(self._hard.drift) + len(joints), nv, P)
        if old_scratch is not None:  # the step's factor of M carries over (factored once per step)
            self._solve_scratch.L[:] = old_scratch.L
        shapes, bodies, X, pair_id, element, _, _ = self._pairs_static
        old_pairs = getattr(self, "_pairs", None)
        self._pairs = body_pairs(shapes, bodies, X, pair_id, element, 4 * C if len(bodies) else 0)
        if old_pairs is not None:  # the broad phase's order, kept from step to step, carries over
            self._pairs.order[:] = old_pairs.order
        self._data = make_step_data(
            self._tree, self._stage, self._dyn, statics, params, allocate_detection(N + 4 * C), self._tables, memory,
            self._hard, self._friction, self._out, self._solve_scratch, self._pairs,
            # a method's scratch at full size only when it steps (the others' kernels never run)
            allocate_relaxed_qp(cfg.relaxed_qp, *((C, P) if method == RELAXED_QP else (0, 0)), nv),
            allocate_penalty_volume(cfg.penalty_volume, *((C, P) if method == PENALTY_VOLUME else (0, 0)), nv),
            self._actuation, self._state, self._compiled_rows,
        )  # fmt: skip
        # the compiled step for these bundles, called without the dispatcher's typing of its arguments (a record's
        # costs ~0.4 µs a call): step() hands it arrays of these types (float64, one dimension, contiguous)
        arguments = (self._data, np.zeros(model.nj), np.zeros(nv), np.zeros(nv), 0)
        self._advance = advance_nb.compile(tuple(typeof(a) for a in arguments))

    def _result(self, rows: list[OneSidedRows], batches: list[_Batch]) -> StepResult:
        """The StepResult of the step the kernel just made; commits the new state. The result
        keeps copies of the step's outputs (it stays valid after later steps) and makes its
        arrays, ZMP and contacts from them when they are read (simulator/step_result.py)."""
        out = self._out
        counts = read_counts(self._counts_bytes)
        copy = out.result[: result_size(self._result_head, counts, self._point_forces)].copy()
        forces: tuple[np.ndarray, ...] = ()
        if batches is self._no_batches:
            forces = self._no_forces
            self._last_hard_force = {}
        elif self._general:
            n_hard = _hard_row_count(batches)
            hard_force = self._hard.force[:n_hard] + self._hard.impulse[:n_hard] / self.config.dt
            forces = tuple(self._provider_forces(rows, batches, hard_force))
            last: dict[str, float] = {}
            for b in batches:
                last.update(zip(b.names, self._hard.force[b.start : b.start + len(b.hard)].tolist()))
            self._last_hard_force = last
        self._t += self.config.dt  # the kernel left the new state in self._q, self._v (StepState)
        for p, f in zip(self._general, forces):
            p.accept_forces(f)
        i = self._compiled_index
        if i >= 0:  # the compiled range of motion's forces (limits/step_limits.py), in the providers' order
            n = counts.limit_rows
            forces = forces[:i] + (self._compiled_rows.limits.force[:n].copy() if n else _NO_FORCES,) + forces[i:]
        return StepResult.of_step(self._t, copy, counts, forces, "bounded" if counts.bounded else self._solver,
                                  self._layout)  # fmt: skip

    def _provider_rows(self, rows: list[OneSidedRows], v: np.ndarray) -> tuple[list[_Batch], np.ndarray | None]:
        """Each provider's batch of rows sorted once (_Batch: its hard rows' first row in the step's
        hard-row table, their indices and names; its soft rows' spring-damper forces at (q, v),
        seed 003 Eq. 3.36-3.38), and the soft rows' generalized force (nv,) or None. The hard rows
        go into the table (_fill_hard_rows)."""
        if not rows:
            return [], None
        soft_force = None
        batches = []
        count = 0
        for r in rows:
            if r.count == 0:
                batches.append(_Batch(count, _NO_ROWS, (), None, None))
                continue
            idx = np.flatnonzero(r.hard)
            names = r.names if len(idx) == r.count else tuple(r.names[i] for i in idx)
            soft = lam = None
            if len(idx) < r.count:
                soft = ~r.hard
                lam = np.maximum(0.0, r.stiffness[soft] * r.violation[soft] - r.damping[soft] * (r.jacobian[soft] @ v))
                f = r.jacobian[soft].T @ lam
                soft_force = f if soft_force is None else soft_force + f
            batches.append(_Batch(count, idx, names, soft, lam))
            count += len(idx)
        self._fill_hard_rows(rows, batches)
        return batches, soft_force

    def _fill_hard_rows(self, rows: list[OneSidedRows], batches: list[_Batch]) -> None:
        """The providers' hard rows into the step's hard-row table (grown when needed), each
        warm-started from its force in the previous step (by name) for the bounded solve."""
        count = _hard_row_count(batches)
        if count > self._hard_room:
            self._allocate_step(len(self._tables[0].body), 2 * count)
        h = self._hard
        last = self._last_hard_force
        for r, b in zip(rows, batches):
            start, n = b.start, len(b.hard)
            if n:
                h.warm[start : start + n] = [last.get(name, 0.0) for name in b.names]
                pick = slice(None) if n == r.count else b.hard  # all rows hard: no gather
                h.jacobian[start : start + n] = r.jacobian[pick]
                h.drift[start : start + n] = r.drift[pick]
                h.violation[start : start + n] = r.violation[pick]
                h.desired[start : start + n] = r.desired_acceleration[pick]
                h.restitution[start : start + n] = r.restitution[pick]

    def _last_hard_forces(self) -> dict[str, float]:
        """{provider row name: its solved force in the last step [N m or N]} of the last step's
        hard rows (empty after a step without any, a reset or set_state), the compiled range of
        motion's among them (those whose force was not 0: the others start from 0 all the same)."""
        by_name = dict(self._last_hard_force)
        compiled = self._compiled_rows
        warm = compiled.limits.warm
        by_name.update((compiled.names[code], float(warm[code])) for code in np.flatnonzero(warm))
        return by_name

    def _provider_forces(self, rows: list[OneSidedRows], batches: list[_Batch], hard_force) -> list[np.ndarray]:
        """Per provider, its rows' forces: the step's hard-row forces (solved force plus
        impulse / dt), soft rows' spring-damper forces at the start of the step."""
        out = []
        for r, b in zip(rows, batches):
            if r.count == 0:
                out.append(_NO_FORCES)
                continue
            f = np.zeros(r.count)
            f[b.hard] = hard_force[b.start : b.start + len(b.hard)]
            if b.soft is not None:
                f[b.soft] = b.soft_force
            out.append(f)
        return out


def _collision_pairs(model: RobotModel, config: SimulatorConfig, box_R: np.ndarray, box_p: np.ndarray,
                     box_half: np.ndarray, first_box: int, first_row: int):
    """The narrow phase's shapes and candidate pairs for the compiled step's BodyPairs.

    Shapes: the environment's static boxes (box_R (nbox, 3, 3), box_p, box_half (nbox, 3),
    world) first, body -1, then the model's collision shapes. Candidates: every model shape
    with every static box; shapes of different trees (free objects) always; shapes of one
    tree when ``config.self_collision`` (contact/self_collision.py: not the same body, not
    adjacent, not disabled by the SRDF). A candidate's element: a static box's (first_box +
    its index), else a row of its own from first_row on.
    Returns (ShapeSet, body (n,), X (n, 4, 4), pair_id (n, n), element (candidates,), per
    row from first_row on: its two bodies and its name (the link of its first shape))."""
    shapes = model.collision_shapes
    nbox = len(box_p)
    root = model.tree_root
    shape_body = np.array([s.body for s in shapes], dtype=np.int64)
    body = np.concatenate([np.full(nbox, -1, np.int64), shape_body])
    n = len(body)
    allowed = np.zeros((n, n), dtype=bool)
    allowed[:nbox, nbox:] = True
    if len(shapes):
        allowed[nbox:, nbox:] |= root[shape_body][:, None] != root[shape_body][None, :]
        if config.self_collision:
            pairs = self_collision_pairs(model, config.srdf) + nbox
            allowed[pairs[:, 0], pairs[:, 1]] = True
    allowed = np.triu(allowed, 1)
    i, j = np.nonzero(allowed)
    pair_id = np.zeros((n, n), dtype=np.int64)
    pair_id[i, j] = pair_id[j, i] = np.arange(1, len(i) + 1)
    element = np.where(i < nbox, first_box + i, 0)
    between = i >= nbox
    element[between] = first_row + np.arange(int(between.sum()))
    names = [model.body_names[body[a]] for a in i[between]]
    bodies = [(int(body[a]), int(body[b])) for a, b in zip(i[between], j[between])]
    specs = [ShapeSpec(int(ShapeKind.BOX), 2.0 * np.asarray(h, float)) for h in box_half]
    specs += [ShapeSpec(int(s.kind), np.asarray(s.size, float), s.vertices if len(s.vertices) else None) for s in shapes]
    X = np.tile(np.eye(4), (n, 1, 1))
    X[:nbox, :3, :3], X[:nbox, :3, 3] = box_R, box_p
    for k, s in enumerate(shapes):
        X[nbox + k] = s.X_body_shape
    if not len(i):  # nothing for the narrow phase
        return pack_shapes([]), np.zeros(0, np.int64), np.zeros((0, 4, 4)), np.zeros((0, 0), np.int64), element, bodies, names
    return pack_shapes(specs), body, X, pair_id, element, bodies, names


def _mean_material(a: Material, b: Material) -> Material:
    """The material where two bodies touch: the mean of their friction and restitution."""
    return Material(0.5 * (a.mu_s + b.mu_s), 0.5 * (a.mu_d + b.mu_d), 0.5 * (a.restitution + b.restitution))
