"""The fixed-step simulator: state (q, v, t) and ``step(tau)`` (seed 000, 4.9; DESIGN.md).

One step at (q, v):
 1. kinematics, M and b of the model (one numba call, dynamics.DynamicsWorkspace);
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
from typing import NamedTuple, Sequence

import numpy as np

from humanoid_sim.balance.zmp import ZmpReport, zmp_report
from humanoid_sim.contact.constrained_solve import SimulationError, factor_mass_matrix, mass_solve
from humanoid_sim.contact.kernels import all_finite, cho_solve_into, cho_solve_vec, cholesky_into
from humanoid_sim.contact.constraint_rows import ConstraintProvider, OneSidedRows
from humanoid_sim.contact.contact_solver import (
    ActiveContact,
    ContactMemory,
    Gains,
    HardRows,
    Thresholds,
    solve_with_checks,
)
from humanoid_sim.contact.detection import ContactDetector, ContactPatch
from humanoid_sim.contact.fast_step import (
    CF_IMPULSE,
    CF_MIN_GAP,
    CF_ORIGIN,
    CF_PV,
    CF_R,
    CF_WRENCH,
    CF_WRENCH_WORLD,
    FAST_OK,
    MEM_KEY,
    MEM_P,
    MEM_R,
    MEM_SIZE,
    MEM_SLIP,
    MEM_STICK,
    N_CONTACTS,
    N_GROUND_HULL,
    N_IMPULSE,
    N_MEMORY_IN,
    N_MEMORY_OUT,
    N_ROUNDS,
    FastBuffers,
    fast_step_nb,
    speculative_band_nb,
)
from humanoid_sim.contact.environment import Environment, Material
from humanoid_sim.contact.virtual_link import ContactKind, classify_patch
from humanoid_sim.dynamics.integrator import held_forces_nb, rk4_step_nb, stage_work
from humanoid_sim.dynamics.kinematic_tree import kinematic_tree
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.limits.velocity_limits import coupled_effort_limits_into, coupled_work, velocity_rule
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.simulator.initial_pose import InitialPose, load_initial_poses, pose_configuration, starting_pose
from humanoid_sim.simulator.link_wrenches import LinkWrenches, generalized_force

_KINDS = {int(k): k for k in ContactKind}

__all__ = ["ContactReport", "SimulationError", "Simulator", "SimulatorConfig", "StepResult"]


@dataclass(frozen=True)
class SimulatorConfig:
    """dt: step [s]. environment: ground and static boxes. gravity: world gravity [m/s^2],
    shape (3,), None = the model's. contact_tolerance: detection band [m].
    speculative_distance: smallest band beyond contact_tolerance [m] in which a point that
    would reach the surface within the step takes part in the impulse phase (speculative
    contact), so that an arriving body is stopped at the surface rather than inside it; the
    band grows with the bodies' speeds each step (fast_step.speculative_band_nb).
    max_rounds: solves per validity loop (seed 000 4.4: at most 3).
    correction_steps: penetration/drift errors decay critically damped over this many steps.
    massless_link_armature: rotor inertia [kg m^2 or kg] on the joints whose own link has no
    mass or no rotational inertia about some axis (the intermediate links of a shoulder, hip
    or neck written as three revolute joints; a point mass on a joint axis): where such
    joints' axes align (a shoulder rolled 90 degrees), or always for a point mass on its
    axis, the joint-space inertia M is singular and any torque difference between them an
    infinite acceleration; a real actuator has this inertia (URDF cannot say it). 0 turns it off.
    thresholds: velocity thresholds of separation, impact and bounce [m/s]."""

    dt: float = 1e-3
    environment: Environment = field(default_factory=Environment)
    gravity: np.ndarray | None = None
    contact_tolerance: float = 2e-4
    speculative_distance: float = 0.005
    max_rounds: int = 3
    correction_steps: float = 4.0
    massless_link_armature: float = 1e-3
    thresholds: Thresholds = Thresholds()

    def __post_init__(self) -> None:
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


class ContactReport(NamedTuple):
    """One contact after a step.

    link: URDF link name of the body; body: its index; element: environment element name.
    kind: POINT / LINE / SURFACE; sticking: no slip (else slipping with friction μ_d f_z);
    spinning: rotating about the normal (Table 2).
    points: contact points (world) [m], shape (m, 3).
    origin: virtual-link origin (world) [m]; R_world_vl: its axes (3, 3) (z = normal).
    wrench_local: (f, n) in the virtual-link frame at origin [N, N m], average over the step
        (solved force + impulse / dt), shape (6,).
    wrench_world: the same in world axes, moment about origin, shape (6,).
    impulse_local: impulse of this step in the virtual-link frame [N s, N m s], shape (6,).
    p_v: centre of pressure of Eq. 26 (world) [m], shape (3,), NaN when f_z = 0.
    """

    link: str
    body: int
    element: str
    kind: ContactKind
    sticking: bool
    spinning: bool
    points: np.ndarray
    origin: np.ndarray
    R_world_vl: np.ndarray
    wrench_local: np.ndarray
    wrench_world: np.ndarray
    impulse_local: np.ndarray
    p_v: np.ndarray


class StepResult(NamedTuple):
    """t: time after the step [s]; q (nq,), v (nv,): the new state;
    tau_applied: joint torques applied: clamped to the effort limits and limited by the
    velocity-limit rule (limits/velocity_limits.py) [N m or N], shape (nj,);
    contacts: ContactReport per contact; zmp: ZmpReport of the ground contacts;
    rounds: checked solves of the validity loop; validated: its last checked solve passed
    every check; solver: what was integrated: "checked" (seed 000's solve, every check
    passed) or "bounded" (the checked solve of the impulse or acceleration phase was rank
    deficient or still failed its checks after the rounds, and the bounded solve of
    contact/bounded_solve.py, valid by construction, replaced it);
    impulse: an impulse phase ran this step; max_penetration: deepest point [m] (>= 0);
    constraint_forces: per provider, lambda per row it returned [N m or N];
    acceleration: v̇ (nv,) of the constraint solve at the start of the step (after any
    impulse), consistent with the reported wrenches: the first Runge-Kutta stage
    [m/s^2, rad/s^2]."""

    t: float
    q: np.ndarray
    v: np.ndarray
    tau_applied: np.ndarray
    contacts: tuple[ContactReport, ...]
    zmp: ZmpReport
    rounds: int
    validated: bool
    impulse: bool
    max_penetration: float
    constraint_forces: tuple[np.ndarray, ...]
    acceleration: np.ndarray
    solver: str = "checked"


class Simulator:
    """A deterministic fixed-step simulator of one model in one environment."""

    def __init__(
        self,
        model: RobotModel,
        config: SimulatorConfig | None = None,
        providers: Sequence[ConstraintProvider] = (),
        poses: dict[str, InitialPose] | None = None,
    ) -> None:
        self.config = config = config or SimulatorConfig()
        if config.gravity is not None:
            model = dataclasses.replace(model, gravity=np.asarray(config.gravity, dtype=float).copy())
        self.model = model
        self.providers = tuple(providers)
        self._validated_empty: list[OneSidedRows | None] = [None] * len(self.providers)
        self.ws = DynamicsWorkspace(model)
        self._tree = kinematic_tree(model)
        t = self._tree
        self._armature = np.zeros(model.nv)
        for body in range(t.nb):
            # no mass, or no rotational inertia about some axis (a point mass on the joint axis)
            degenerate = model.mass[body] == 0.0 or np.linalg.eigvalsh(model.inertia_com[body])[0] <= 0.0
            if t.ndof[body] == 1 and degenerate:
                self._armature[t.v_index[body]] = config.massless_link_armature
        self._damping = np.zeros(model.nv)  # joint damping [N m s/rad or N s/m], zero on the base
        self._damping[model.nv - model.nj :] = model.joint_dynamics.damping
        # Joint damping is linearly implicit: every solve and every Runge-Kutta stage uses
        # (M + diag(armature) + dt D) a = tau - D v - b, i.e. the damping force at the velocity
        # the stage reaches, -D (v + dt a). Explicit damping diverges once D dt exceeds twice
        # the joint's effective inertia (icub's 1 N m s/rad wrists and neck: D dt / m ~ 1e2
        # at 1 ms); implicit damping is stable for any D and still dissipates.
        self._diagonal = self._armature + config.dt * self._damping
        self._diagonal_index = np.flatnonzero(self._diagonal)
        self._stage = stage_work(t, self._diagonal)
        # velocity limits: the actuator effort is limited by the safety-controller rule at the end
        # of the step, all joints at once (limits/velocity_limits.py); only where a joint has one
        rule = velocity_rule(model)
        self._velocity_rule = rule if np.any(np.isfinite(rule.velocity) & (rule.k_velocity > 0)) else None
        self._velocity_work = coupled_work(model.nj)
        # where a joint's admissible effort starts to shrink: |qdot| > v_max - e / k_v (inf: no rule)
        with np.errstate(divide="ignore", invalid="ignore"):
            ramp = rule.velocity - np.where(rule.k_velocity > 0, rule.effort / rule.k_velocity, np.inf)
        self._ramp_start = np.where(np.isfinite(rule.velocity) & (rule.k_velocity > 0), ramp, np.inf)
        self._tau_limited = np.zeros(model.nj)
        self._qdot_end = np.zeros(model.nj)
        self._L_rule = np.zeros((model.nv, model.nv))
        self._Minv_joints = np.zeros((model.nv, model.nj))
        self._free_rhs = np.zeros(model.nv)
        self._free_acc = np.zeros(model.nv)
        self.detector = ContactDetector(
            model, config.environment, config.contact_tolerance + config.speculative_distance, config.contact_tolerance
        )
        geo = self.detector.geometry
        self._reach = np.zeros(len(model.body_names))  # farthest collision point from each body origin [m]
        for b, local, radius in zip(geo.body, geo.local, geo.radius):
            self._reach[b] = max(self._reach[b], float(np.linalg.norm(local)) + float(radius))
        env = config.environment
        self._materials: list[Material] = ([env.ground.material] if env.ground else []) + [b.material for b in env.boxes]
        self._element_names = env.element_names()
        self._ground_element = 0 if env.ground is not None else -1
        self.gains = Gains.critically_damped(config.dt, config.correction_steps)
        self._correction_rate = 2.0 * self.gains.kd  # [1/s]
        self._floating = model.floating_base
        self._tau_full = np.zeros(model.nv)
        self._L = np.zeros((model.nv, model.nv))
        self._zero_nv = np.zeros(model.nv)
        self._effort_lo = -model.limits.effort
        self._zero_nv.setflags(write=False)
        z = np.zeros(0)
        self._no_hard_rows = HardRows(np.zeros((0, model.nv)), z, z, z, z)
        # poses: None = the model's section of the bundled config/initial_poses.yaml (a missing
        # bundled file is an installation fault and raises, naming where it was looked for)
        self.poses = dict(load_initial_poses(None, model.name) if poses is None else poses)
        # contact memory: a dict (general path) or, when None, the fast path's table
        self._memory: dict[tuple[int, int, int], ContactMemory] | None = {}
        self._fast = FastBuffers(model.nv, model.nq, self.detector.hit_capacity)
        self._mem_cur = 0
        self._mu_s = np.array([m.mu_s for m in self._materials], dtype=float).reshape(-1)
        self._restitution = np.array([m.restitution for m in self._materials], dtype=float).reshape(-1)
        self._fast_args()
        self._q = np.zeros(model.nq)
        self._v = np.zeros(model.nv)
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
        q = pose_configuration(sim.model, starting_pose(sim.poses, pose, robot=sim.model.name), sim.config.environment)
        sim.set_state(q, np.zeros(sim.model.nv))
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
        self._q = q.copy()
        if self._floating:
            self._q[3:7] /= np.linalg.norm(self._q[3:7])
        self._v = v.copy()
        self._t = float(t)
        self._memory = {}
        self._fast.counts[N_MEMORY_IN] = 0

    def reset(self, pose: str = "stand") -> np.ndarray:
        """Reset to a named initial pose at rest (t = 0); returns q.
        Raises UnknownNameError (a KeyError) listing the robot's poses."""
        if pose not in self.poses:
            raise UnknownNameError("initial pose", pose, self.poses, f"for robot {self.model.name!r}")
        q = pose_configuration(self.model, self.poses[pose], self.config.environment)
        self.set_state(q, np.zeros(self.model.nv))
        return q.copy()

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

        The common case (every contact sticking or new, no provider rows, every solve valid
        once the unloaded contacts are released, impacts included) runs as one compiled call
        (contact/fast_step.py); any other case runs the general path below, which computes
        the same for the common case.
        """
        model, ws = self.model, self.ws
        q, v = self._q, self._v
        nj = model.nj
        if tau is None:
            tau_j = np.zeros(nj)
        else:
            tau_j = np.asarray(tau, dtype=float)
            if tau_j.shape != (nj,):
                raise ValueError(f"tau has shape {tau_j.shape}, expected ({nj},) in joint_names order")
            if not all_finite(tau_j):
                raise SimulationError("tau has non-finite entries")
        tau_j = np.minimum(np.maximum(tau_j, self._effort_lo), model.limits.effort)  # clamp to effort limits
        ext = None
        if external_force is not None:
            ext = np.asarray(external_force, dtype=float)
            if ext.shape != (model.nv,) or not all_finite(ext):
                raise ValueError(f"external_force must be finite with shape ({model.nv},), got {ext.shape}")
        if link_wrenches:
            pushed = generalized_force(model, q, link_wrenches)
            ext = pushed if ext is None else ext + pushed

        self._update_dynamics(q, v)
        if self._velocity_rule is not None:
            tau_j = self._limit_velocity(tau_j, ext)
        rows = [p.rows(q, v) for p in self.providers]
        for i, r in enumerate(rows):
            # an empty batch already validated (the same immutable object again) is skipped
            if r is not self._validated_empty[i]:
                r.validate(model.nv)
                if r.count == 0:
                    self._validated_empty[i] = r
        if not any(r.count for r in rows):
            result = self._step_fast(tau_j, ext)
            if result is not None:
                return result
        return self._step_general(tau_j, ext, rows)

    def _update_dynamics(self, q: np.ndarray, v: np.ndarray) -> None:
        """The workspace at (q, v), with the armature and the implicit damping dt D on the
        diagonal of M."""
        self.ws.update(q, v)
        idx = self._diagonal_index
        self.ws.M[idx, idx] += self._diagonal[idx]

    def _limit_velocity(self, tau_j: np.ndarray, ext: np.ndarray | None) -> np.ndarray:
        """The applied efforts (nj,): tau_j limited by the velocity-limit rule evaluated at the
        end of the step for all joints at once, with the joint block of M^-1 and the joint
        velocities the step would reach without actuator effort (contacts not counted)."""
        ws, model, dt = self.ws, self.model, self.config.dt
        nv, nj = model.nv, model.nj
        if not cholesky_into(ws.M, self._L_rule):
            return tau_j  # the step's own factorisation reports it
        rhs = self._free_rhs
        np.subtract(0.0 if ext is None else ext, ws.b, out=rhs)
        rhs -= self._damping * self._v
        # The rule's solution is unique: when the commanded efforts themselves end the step with
        # every ruled joint short of its ramp (|qdot| <= v_max - e / k_v, where the bounds are the
        # whole effort range), they are that solution and no joint block of M^-1 is needed.
        rhs[nv - nj :] += tau_j
        cho_solve_vec(self._L_rule, rhs, self._free_acc)
        qdot_end = self._v[nv - nj :] + dt * self._free_acc[nv - nj :]
        if np.all(np.abs(qdot_end) <= self._ramp_start):
            return tau_j
        rhs[nv - nj :] -= tau_j
        cho_solve_vec(self._L_rule, rhs, self._free_acc)
        qdot_free = self._v[nv - nj :] + dt * self._free_acc[nv - nj :]
        Minv = self._Minv_joints
        Minv[:] = 0.0
        Minv[nv - nj :, :] = np.eye(nj)
        cho_solve_into(self._L_rule, Minv)
        coupled_effort_limits_into(
            np.ascontiguousarray(tau_j), qdot_free, np.ascontiguousarray(Minv[nv - nj :]), dt, self._velocity_rule,
            False, self._velocity_work, self._tau_limited, self._qdot_end,
        )  # fmt: skip
        return self._tau_limited.copy()

    def _fast_args(self) -> None:
        """The arguments of fast_step_nb that are the same every step (arrays filled in place)."""
        ws, t, g, fb, cfg = self.ws, self._tree, self.detector, self._fast, self.config
        thr, geo = cfg.thresholds, self.detector.geometry
        params = np.array([
            cfg.dt, g._ground_h, cfg.contact_tolerance, thr.separating, thr.impact, self._correction_rate,
            self.gains.kp, self.gains.kd, float(g._has_ground), float(cfg.max_rounds), thr.bounce,
            cfg.speculative_distance,
        ])  # fmt: skip
        self._fast_static = (
            ws.parent, ws.ndof, ws.v_index, ws.S, ws.V, ws.A, ws.R, ws.p, ws.M, ws.b, ws.Iw, ws.a_gravity, ws._acc,
            ws._f, ws.zero_nv, t.joint_type, t.q_index,
        )  # fmt: skip
        self._fast_integration = (t, self._stage, self._damping)
        self._fast_detect = (
            geo.body, geo.kind, geo.local, geo.axis, geo.radius, self._reach, g._box_R, g._box_p, g._box_half, self._mu_s,
            self._restitution, params,
        )  # fmt: skip
        self._fast_out = (
            fb.float_scratch, fb.int_scratch, fb.c_int, fb.c_float, fb.p_world, fb.zmp, fb.zmp_pts, fb.zmp_hull,
            fb.counts, fb.q_next, fb.v_next, fb.a,
        )  # fmt: skip

    def _step_fast(self, tau_j: np.ndarray, ext: np.ndarray | None) -> StepResult | None:
        """The common case in one compiled call; None when the general path must run."""
        model, cfg, fb = self.model, self.config, self._fast
        tau_full = self._tau_full
        tau_full[:] = 0.0
        tau_full[model.nv - model.nj :] = tau_j
        if ext is not None:
            tau_full += ext
        if self._memory is not None:  # the general path ran last: its memory into the table
            self._memory_to_table(self._memory)
        cur = self._mem_cur
        status = fast_step_nb(
            *self._fast_static, self._q, self._v, tau_full, *self._fast_integration, *self._fast_detect,
            fb.memory[cur], fb.memory[1 - cur], *self._fast_out,
        )  # fmt: skip
        if status != FAST_OK:
            if fb.counts[N_IMPULSE]:  # the kernel left V, A, b at the post-impact velocities
                self._update_dynamics(self._q, self._v)
            return None
        self._mem_cur = 1 - cur
        counts = fb.counts
        counts[N_MEMORY_IN] = counts[N_MEMORY_OUT]
        nc = int(counts[N_CONTACTS])
        # reports: fresh arrays (a StepResult stays valid after later steps)
        reports = []
        max_pen = 0.0
        if nc:
            ci = fb.c_int[:nc].tolist()
            cf = fb.c_float[:nc].copy()
            origin = cf[:, CF_ORIGIN : CF_ORIGIN + 3]
            R = cf[:, CF_R : CF_R + 9].reshape(nc, 3, 3)
            w = cf[:, CF_WRENCH : CF_WRENCH + 6]
            ww = cf[:, CF_WRENCH_WORLD : CF_WRENCH_WORLD + 6]
            pv = cf[:, CF_PV : CF_PV + 3]
            npts = ci[-1][4] + ci[-1][5]
            pts = fb.p_world[:npts].copy()
            imp = cf[:, CF_IMPULSE : CF_IMPULSE + 6]
            max_pen = max(0.0, -float(cf[:, CF_MIN_GAP].min()))
            names, elements = self.model.body_names, self._element_names
            for i, (body, elem, _, kind, st, cnt, _, _, _) in enumerate(ci):
                reports.append(
                    ContactReport(
                        names[body], body, elements[elem], _KINDS[kind], True, False, pts[st : st + cnt],
                        origin[i], R[i], w[i], ww[i], imp[i], pv[i],
                    )  # fmt: skip
                )
        zp = fb.zmp.copy()
        zmp = ZmpReport(zp[:3], fb.zmp_pts[fb.zmp_hull[: counts[N_GROUND_HULL]]], float(zp[3]), zp[4:7], zp[7:10])
        forces = [np.zeros(0) for _ in self.providers]
        q_next, v_next = fb.q_next.copy(), fb.v_next.copy()
        self._q, self._v, self._t = q_next, v_next, self._t + cfg.dt
        for p, f in zip(self.providers, forces):
            p.accept_forces(f)
        return StepResult(
            self._t, q_next.copy(), v_next.copy(), tau_j, tuple(reports), zmp, int(counts[N_ROUNDS]), True, bool(counts[N_IMPULSE]), max_pen,
            tuple(forces), fb.a.copy(),
        )

    def _memory_to_table(self, memory: dict) -> None:
        """Write the general path's contact memory into the current memory table."""
        fb = self._fast
        if len(memory) > len(fb.memory[0]):
            cap = 2 * len(memory)
            fb.memory = [np.zeros((cap, MEM_SIZE)), np.zeros((cap, MEM_SIZE))]
        tab = fb.memory[self._mem_cur]
        for i, (key, m) in enumerate(memory.items()):
            tab[i, MEM_KEY : MEM_KEY + 3] = key
            tab[i, MEM_STICK] = float(m.sticking)
            tab[i, MEM_R : MEM_R + 9] = np.asarray(m.R_anchor).reshape(9)
            tab[i, MEM_P : MEM_P + 3] = m.p_anchor
            tab[i, MEM_SLIP : MEM_SLIP + 3] = m.slip_direction
        fb.counts[N_MEMORY_IN] = len(memory)
        self._memory = None

    def _memory_dict(self) -> dict:
        """The contact memory as ContactMemory per key (from the table after a fast step)."""
        if self._memory is None:
            tab = self._fast.memory[self._mem_cur]
            self._memory = {
                (int(row[0]), int(row[1]), int(row[2])): ContactMemory(
                    bool(row[MEM_STICK]), row[MEM_R : MEM_R + 9].reshape(3, 3).copy(),
                    row[MEM_P : MEM_P + 3].copy(), row[MEM_SLIP : MEM_SLIP + 3].copy(),
                )  # fmt: skip
                for row in tab[: int(self._fast.counts[N_MEMORY_IN])]
            }
        return self._memory

    def _step_general(self, tau_j: np.ndarray, ext: np.ndarray | None, rows: list[OneSidedRows]) -> StepResult:
        """Any step (impulses, slipping, spinning, area reductions, provider rows); ws is
        already updated at (q, v) and rows are the providers' rows at (q, v)."""
        model, ws, cfg = self.model, self.ws, self.config
        dt, thr, tol = cfg.dt, cfg.thresholds, cfg.contact_tolerance
        q, v = self._q, self._v
        nj = model.nj
        self._memory_dict()
        M_factor = factor_mass_matrix(ws.M, self._L)
        band = max(cfg.speculative_distance, speculative_band_nb(ws.V, ws.p, self._reach, dt))
        self.detector.tolerance = cfg.contact_tolerance + band
        patches = self.detector.detect(ws.R, ws.p)
        contacts = self._contacts(patches, speculative=True)
        hard, hard_map, soft_force = self._provider_rows(rows, v)

        # 3. impulses (Eq. 18-19)
        impulses: dict[tuple[int, int, int], np.ndarray] = {}
        hard_impulse = np.zeros(len(hard.drift))
        v_plus = v
        approaching = any(c.vel[2] < -thr.impact for c in contacts)
        hv = hard.jacobian @ v
        approaching |= bool(len(hv) and hv.min() < -thr.impact)
        impulse_ran = False
        bounded = False
        if approaching:
            impulse_ran = True

            def rhs_impulse(c, comps):
                if c is None:  # rows as contacts: bounce, stop, or arrive at the limit (speculative)
                    out = np.where(hv[comps] < -thr.bounce, -hard.restitution[comps] * hv[comps], 0.0)
                    ahead = (hard.violation[comps] < -tol) & (out <= 0.0)
                    return np.where(ahead, hard.violation[comps] / dt, out)
                out = np.zeros(len(comps))
                vz = c.vel[2]
                gap = float(c.area.gap.min())
                if vz < -thr.bounce:  # Eq. 15: only the normal direction bounces
                    out[0] = -c.material.restitution * vz
                if gap > tol and out[0] <= 0.0:  # speculative and not bouncing: it arrives at
                    out[0] = -gap / dt  # the surface at the end of the step
                return out

            rep = solve_with_checks(
                contacts, hard, self._hard_active(hard, hv), M_factor, v, rhs_impulse,
                lambda c, x: c.G[:2] @ x, ws, self.gains, cfg.max_rounds, thr.impact,
            )  # fmt: skip
            v_plus = rep.x
            hard_impulse = rep.hard_lambda
            bounded = rep.bounded
            for c in contacts:
                if not c.released:
                    impulses[c.area.patch.key] = c.lam.copy()
            self._update_dynamics(q, v_plus)
            before = contacts
            contacts = self._contacts(patches, speculative=False)
            kept = {c.area.patch.key for c in contacts}
            for c in before:  # bounced off: reported with its impulse only
                if c.area.patch.key in impulses and c.area.patch.key not in kept:
                    c.released = True
                    contacts.append(c)
            hv = hard.jacobian @ v_plus
        elif any(c.area.gap.max() > tol for c in contacts):  # speculative points: impulses only
            contacts = self._contacts(patches, speculative=False)

        # 4. accelerations and wrenches (Eq. 20a, 20b)
        tau_full = self._tau_full
        tau_full[:] = 0.0
        tau_full[model.nv - nj :] = tau_j
        tau_full += soft_force
        if ext is not None:
            tau_full += ext
        a0 = mass_solve(M_factor, tau_full - self._damping * v_plus - ws.b)
        solving = [c for c in contacts if not c.released]  # not those that bounced off in the impulse
        for c in solving:
            c.set_desired(self.gains)
        kp, kd = self.gains
        hard_rhs = hard.desired_acceleration + kp * hard.violation - kd * hv - hard.drift if len(hv) else hv

        def rhs_accel(c, comps):
            if c is None:
                return hard_rhs[comps]
            idx = list(comps)
            return c.desired[idx] - c.drift[idx]

        def next_vt(c, a):
            return c.vel[:2] + dt * (c.G[:2] @ a + c.drift[:2])

        # rows still short of their limit (speculative) take part in impulses only
        active = self._hard_active(hard, hv) & (hard.violation >= -tol) if len(hv) else self._hard_active(hard, hv)
        rep = solve_with_checks(
            solving, hard, active, M_factor, a0, rhs_accel, next_vt, ws, self.gains, cfg.max_rounds, np.inf
        )
        a = rep.x
        # 5. integration (dynamics/integrator.py) with the constraint force Hᵀλ = M (a - a0)
        # held over the step beside the joint torques
        q_next = np.empty(model.nq)
        v_next = np.empty(model.nv)
        tau_c = np.empty(model.nv)
        held_forces_nb(ws.M, a, a0, tau_full, tau_c)
        rk4_step_nb(self._tree, self._stage, q, v_plus, a, tau_c, self._damping, dt, q_next, v_next)
        if not (all_finite(q_next) and all_finite(v_next)):
            raise SimulationError(f"step at t = {self._t:.6f} s produced a non-finite state")

        # reports, memory, commit
        reports, memory, max_pen = self._reports(contacts, impulses, dt)
        zmp = self._zmp(reports)
        forces = self._provider_forces(rows, hard_map, rep.hard_lambda + hard_impulse / dt, soft_force, v_next)
        self._memory = memory
        self._q, self._v, self._t = q_next, v_next, self._t + dt
        for p, f in zip(self.providers, forces):
            p.accept_forces(f)
        return StepResult(
            self._t, q_next.copy(), v_next.copy(), tau_j, tuple(reports), zmp, rep.rounds, rep.validated and not bounded,
            impulse_ran, max_pen, tuple(forces), a.copy(), "bounded" if bounded or rep.bounded else "checked",
        )  # fmt: skip

    # ------------------------------------------------------------- helpers
    def _hard_active(self, hard: HardRows, hv: np.ndarray) -> np.ndarray:
        """Hard rows in the solve: not separating faster than the correction of Eq. 20b drives them."""
        if not len(hv):
            return np.zeros(0, dtype=bool)
        return hv < self.config.thresholds.separating + self._correction_rate * np.maximum(0.0, hard.violation)

    def _contacts(self, patches: list[ContactPatch], speculative: bool) -> list[ActiveContact]:
        """Active contacts at the workspace state: separating points dropped, areas classified.
        Points farther than contact_tolerance are speculative: kept (speculative=True) only
        when they would come within it during the step at their normal velocity."""
        ws, sep = self.ws, self.config.thresholds.separating
        tol, dt = self.config.contact_tolerance, self.config.dt
        out = []
        for patch in patches:
            V = ws.V[patch.body]
            # normal velocity of each point: (v_O + w x p) . n = v_O . n + p . (n x w)
            n = patch.normal
            w = V[3:]
            nxw = np.array([n[1] * w[2] - n[2] * w[1], n[2] * w[0] - n[0] * w[2], n[0] * w[1] - n[1] * w[0]])
            vn = V[:3] @ n + patch.points @ nxw
            # a penetrating point moving out no faster than the correction of Eq. 20b
            # drives it (about 2 w |gap|) is being corrected, not separating
            near = patch.gap <= tol
            keep = near & (vn <= sep + self._correction_rate * np.maximum(0.0, -patch.gap))
            if speculative:
                keep |= ~near & (patch.gap + vn * dt < tol)
            nkeep = int(np.count_nonzero(keep))
            if nkeep == 0:
                continue
            if nkeep < len(keep):
                patch = patch._replace(points=patch.points[keep], local=patch.local[keep], gap=patch.gap[keep], roll=patch.roll[keep])
            area = classify_patch(patch)
            out.append(ActiveContact(area, self._materials[patch.element], ws, self._memory.get(patch.key)))
        return out

    def _provider_rows(self, rows: list[OneSidedRows], v: np.ndarray):
        nv = self.model.nv
        if not rows:
            return self._no_hard_rows, [], self._zero_nv
        soft_force = np.zeros(nv)
        hard_map = []
        J, d, viol, des, e = [], [], [], [], []
        count = 0
        for r in rows:
            idx = np.nonzero(r.hard)[0]
            hard_map.append((count, idx))
            count += len(idx)
            J.append(r.jacobian[idx])
            d.append(r.drift[idx])
            viol.append(r.violation[idx])
            des.append(r.desired_acceleration[idx])
            e.append(r.restitution[idx])
            soft = ~r.hard
            if np.any(soft):
                lam = np.maximum(0.0, r.stiffness[soft] * r.violation[soft] - r.damping[soft] * (r.jacobian[soft] @ v))
                soft_force += r.jacobian[soft].T @ lam  # seed 003 Eq. 3.36-3.38 as a known force
        if count == 0:
            z = np.zeros(0)
            return HardRows(np.zeros((0, nv)), z, z, z, z), hard_map, soft_force
        hard = HardRows(np.concatenate(J), np.concatenate(d), np.concatenate(viol), np.concatenate(des), np.concatenate(e))
        return hard, hard_map, soft_force

    def _provider_forces(self, rows, hard_map, hard_lambda, soft_force, v_next) -> list[np.ndarray]:
        out = []
        for r, (start, idx) in zip(rows, hard_map):
            f = np.zeros(r.count)
            f[idx] = hard_lambda[start : start + len(idx)]
            soft = ~r.hard
            if np.any(soft):
                f[soft] = np.maximum(0.0, r.stiffness[soft] * r.violation[soft] - r.damping[soft] * (r.jacobian[soft] @ self._v))
            out.append(f)
        return out

    def _reports(self, contacts: list[ActiveContact], impulses, dt: float):
        reports = []
        memory: dict[tuple[int, int, int], ContactMemory] = {}
        max_pen = 0.0
        names = self.model.body_names
        for c in contacts:
            key = c.area.patch.key
            imp = impulses.get(key)
            if imp is None:
                if c.released:
                    continue
                imp = np.zeros(6)
                w = c.lam.copy()
            else:
                w = (c.lam if not c.released else np.zeros(6)) + imp / dt
            max_pen = max(max_pen, -float(c.area.gap.min()))
            R = c.area.R_world_vl
            ww = np.empty(6)
            # summed in the compiled step's order (bit-identical reports on both paths)
            ww[:3] = R[:, 0] * w[0] + R[:, 1] * w[1] + R[:, 2] * w[2]
            ww[3:] = R[:, 0] * w[3] + R[:, 1] * w[4] + R[:, 2] * w[5]
            if w[2] > 0:
                pv = c.area.origin + R[:, 0] * (-w[4] / w[2]) + R[:, 1] * (w[3] / w[2])
            else:
                pv = np.full(3, np.nan)
            reports.append(
                ContactReport(
                    names[c.body], c.body, self._element_names[c.area.patch.element], c.area.kind,
                    bool(c.sticking), c.spin != 0.0, c.area.points_world, c.area.origin.copy(), R.copy(),
                    w, ww, imp, pv,
                )  # fmt: skip
            )
            if c.released:
                continue
            if c.sticking:
                keep = c.memory is not None and c.memory.sticking and c.spin == 0.0 and not c.rolling
                if keep:
                    memory[key] = c.memory
                else:
                    memory[key] = ContactMemory(True, c.R_body, c.p_body, np.zeros(3))
            else:
                s = R[:, :2] @ c.slip_dir
                memory[key] = ContactMemory(False, c.R_body, c.p_body, s)
        return reports, memory, max_pen

    def _zmp(self, reports: list[ContactReport]) -> ZmpReport:
        g = self._ground_element
        height = self.config.environment.ground.height if g >= 0 else 0.0
        ground = [r for r in reports if g >= 0 and r.element == self._element_names[g]]
        if not ground:
            return zmp_report(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)), height)
        F = np.array([r.wrench_world[:3] for r in ground])
        N = np.array([r.wrench_world[3:] for r in ground])
        O = np.array([r.origin for r in ground])
        pts = np.concatenate([r.points[:, :2] for r in ground])
        return zmp_report(F, O, N, pts, height)
