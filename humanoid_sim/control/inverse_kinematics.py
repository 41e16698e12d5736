"""Whole-body Jacobian inverse kinematics (seed 001).

Tasks (CoM position, frame poses, frame orientations) are stacked into one Jacobian
J (m, nv) and error e (m,). One iteration solves for a velocity-space step δ (nv,) — the base
part is a base-frame twist (docs/conventions.md), applied with ``integrate``:

    δ = J^#_W e + (I - J^#_W J) η                      (seed 001: generalised pseudo-inverse
    J^#_W = W^-1 J^T (J W^-1 J^T + λ^2 I)^-1               with weight W and redundancy term η)

- Task rows are scaled by sqrt(task weight) (weighted least squares between tasks).
- W (nv, nv) diagonal: a weight per coordinate (the "stiffness" of seed 001: base vs joints);
  a joint whose step would cross its limit is locked (W^-1 = 0 for it) and the step re-solved
  (seed 001 "関節可動域": the plain pseudo-inverse ignores ranges of motion).
  (A limit-gradient weighting à la Chan & Dubey was tried: it changes the metric from one
  iteration to the next and made the null-space posture term oscillate; clamping does not.)
- λ: damping near singular postures (seed 001 "特異姿勢"): λ^2 = λ_max^2 (1 - (σ_min/ε)^2)
  when the smallest singular value σ_min of the weighted Jacobian is below ε, else a tiny
  floor; the step stays finite at a stretched knee.
- η = k_posture (q_posture - q) on the joints (null-space posture term, "冗長項"): it
  moves the posture without disturbing the tasks.
- After every step the joints are clamped into their limits (minus a margin).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence, Union

import numpy as np

from humanoid_sim import dynamics as dyn
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.dynamics.spatial import so3_log
from humanoid_sim.model.robot_model import RobotModel


class ComTask(NamedTuple):
    """Whole-body CoM at ``target`` (world) [m], shape (3,); ``mask`` selects axes (x, y, z)."""

    target: np.ndarray
    weight: float = 1.0
    mask: tuple[bool, bool, bool] = (True, True, True)


class FrameTask(NamedTuple):
    """Frame ``frame`` at pose ``X_world_target`` (4, 4): 3 position rows (world) then
    3 orientation rows (world axes)."""

    frame: str
    X_world_target: np.ndarray
    weight: float = 1.0


class OrientationTask(NamedTuple):
    """Frame ``frame`` with orientation ``R_world_target`` (3, 3), 3 rows (world axes)."""

    frame: str
    R_world_target: np.ndarray
    weight: float = 1.0


Task = Union[ComTask, FrameTask, OrientationTask]


@dataclass(frozen=True)
class IKParams:
    """max_iterations; tolerance: stop when |weighted task error| < tol [m / rad];
    max_step: |δ| limit per iteration (rad / m); damping_floor: λ^2 floor; damping_max: λ_max;
    singular_threshold: ε on σ_min; posture_gain: k_posture per iteration (0..1);
    base_weight, joint_weight: W diagonal entries for the 6 base and the nj joint coordinates;
    limit_margin: joints are clamped to [lower + margin, upper - margin] [rad or m]."""

    max_iterations: int = 50
    tolerance: float = 1e-8
    max_step: float = 0.3
    damping_floor: float = 1e-10
    damping_max: float = 0.05
    singular_threshold: float = 0.05
    posture_gain: float = 0.1
    base_weight: float = 1.0
    joint_weight: float = 1.0
    limit_margin: float = 1e-3

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError(f"IKParams.max_iterations must be >= 1, got {self.max_iterations}")
        for name in ("tolerance", "max_step", "damping_max", "singular_threshold", "base_weight",
                     "joint_weight"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"IKParams.{name} must be finite and > 0, got {value!r}")
        for name in ("damping_floor", "posture_gain", "limit_margin"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"IKParams.{name} must be finite and >= 0, got {value!r}")


class IKResult(NamedTuple):
    """q (nq,) the solution; converged; iterations; error: final |task error| (weighted)."""

    q: np.ndarray
    converged: bool
    iterations: int
    error: float


def task_jacobian_and_error(model: RobotModel, q: np.ndarray, tasks: Sequence[Task],
                            kinematics: TaskKinematics | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stacked, weight-scaled task Jacobian (m, nv) and error (m,) at q (error = target - current).

    kinematics: an optional TaskKinematics of ``model`` (buffers reused; one FK for all tasks).
    """
    kin = kinematics if kinematics is not None else TaskKinematics(model)
    kin.update_kinematics(q)
    rows_J: list[np.ndarray] = []
    rows_e: list[np.ndarray] = []
    for task in tasks:
        w = math.sqrt(task.weight)
        if isinstance(task, ComTask):
            mask = np.asarray(task.mask, dtype=bool)
            J = kin.com_jacobian[mask]
            e = (np.asarray(task.target, dtype=float) - kin.com)[mask]
        elif isinstance(task, FrameTask):
            X = kin.frame_pose(task.frame)
            J = kin.frame_jacobian(task.frame, X)
            e = np.concatenate([
                task.X_world_target[:3, 3] - X[:3, 3],
                so3_log(task.X_world_target[:3, :3] @ X[:3, :3].T),  # world-axes rotation error
            ])
        elif isinstance(task, OrientationTask):
            X = kin.frame_pose(task.frame)
            J = kin.frame_jacobian(task.frame, X)[3:]
            e = so3_log(task.R_world_target @ X[:3, :3].T)
        else:
            raise TypeError(f"unknown IK task {task!r}; valid: ComTask, FrameTask, OrientationTask")
        rows_J.append(w * J)
        rows_e.append(w * e)
    return np.vstack(rows_J), np.concatenate(rows_e)


def damped_weighted_pseudo_inverse(J: np.ndarray, w_inv: np.ndarray, params: IKParams) -> np.ndarray:
    """J^#_W = W^-1 J^T (J W^-1 J^T + λ^2 I)^-1 with the singularity damping of the module doc.

    J: (m, n); w_inv: diagonal of W^-1, shape (n,). Returns (n, m).
    """
    Js = J * np.sqrt(w_inv)  # J W^-1/2
    sigma = np.linalg.svd(Js, compute_uv=False)
    sigma_min = sigma[-1] if sigma.size and J.shape[0] <= J.shape[1] else 0.0
    lam2 = params.damping_floor
    eps = params.singular_threshold
    if sigma_min < eps:
        lam2 += params.damping_max**2 * (1.0 - (sigma_min / eps) ** 2)
    JWJ = Js @ Js.T
    JWJ[np.diag_indices_from(JWJ)] += lam2
    return (w_inv[:, None] * J.T) @ np.linalg.inv(JWJ)


def _limits_with_margin(model: RobotModel, margin: float) -> tuple[np.ndarray, np.ndarray]:
    lo, up = model.limits.lower, model.limits.upper
    lo_m = np.where(np.isfinite(lo), lo + margin, lo)
    up_m = np.where(np.isfinite(up), up - margin, up)
    return np.minimum(lo_m, up_m), np.maximum(lo_m, up_m)


def ik_step(model: RobotModel, q: np.ndarray, tasks: Sequence[Task], q_posture: np.ndarray | None,
            params: IKParams, kinematics: TaskKinematics | None = None) -> tuple[np.ndarray, float]:
    """One IK iteration: returns (δ (nv,), |task error| before the step).

    Joint limits by clamping: a joint whose step would cross its limit is locked (its column
    removed through W^-1 = 0, its posture term dropped) and the step is solved again (at most
    4 passes); the configuration is clamped into the limits after the step.
    """
    J, e = task_jacobian_and_error(model, q, tasks, kinematics)
    nb = model.nv - model.nj  # 6 for a floating base, 0 when fixed
    q_joints = q[model.nq - model.nj:]
    lo, up = _limits_with_margin(model, params.limit_margin)
    w = np.empty(model.nv)
    w[:nb] = params.base_weight
    w[nb:] = params.joint_weight
    w_inv = 1.0 / w
    eta = np.zeros(model.nv)
    if q_posture is not None and params.posture_gain > 0.0:
        # The preferred posture, itself kept inside the (margin-reduced) limits.
        posture = np.clip(q_posture[model.nq - model.nj:], lo, up)
        eta[nb:] = params.posture_gain * (posture - q_joints)
    locked = np.zeros(model.nj, dtype=bool)
    for _ in range(4):
        J_pinv = damped_weighted_pseudo_inverse(J, w_inv, params)
        delta = J_pinv @ e + eta - J_pinv @ (J @ eta)  # J^# e + (I - J^# J) η, seed 001
        norm = float(np.linalg.norm(delta))
        if norm > params.max_step:
            delta *= params.max_step / norm
        q_next = q_joints + delta[nb:]
        crossing = ((q_next < lo - 1e-12) | (q_next > up + 1e-12)) & ~locked
        if not crossing.any():
            break
        locked |= crossing
        w_inv[nb:][locked] = 0.0
        eta[nb:][locked] = 0.0
    return delta, float(np.linalg.norm(e))


def clamp_to_limits(model: RobotModel, q: np.ndarray, margin: float) -> np.ndarray:
    """q with the joint coordinates clamped into [lower + margin, upper - margin] (in place)."""
    j0 = model.nq - model.nj
    lo, up = _limits_with_margin(model, margin)
    q[j0:] = np.clip(q[j0:], lo, up)
    return q


def solve_ik(model: RobotModel, q0: np.ndarray, tasks: Sequence[Task], q_posture: np.ndarray | None = None,
             params: IKParams = IKParams()) -> IKResult:
    """Iterate ``ik_step`` from q0 (nq,) until the weighted task error < tolerance (and, with
    a posture, until the step is below tolerance too).

    q_posture: the preferred configuration (nq,) for the null-space term, or None.
    converged in the result means the task error is below tolerance.
    """
    if not tasks:
        raise ValueError("solve_ik needs at least one task")
    q = clamp_to_limits(model, np.array(q0, dtype=float), params.limit_margin)
    kin = TaskKinematics(model)
    error = math.inf
    for it in range(params.max_iterations):
        delta, error = ik_step(model, q, tasks, q_posture, params, kin)
        # Done when the tasks are met and (with a posture) the null-space motion has settled.
        if error < params.tolerance and (q_posture is None or np.linalg.norm(delta) < params.tolerance):
            return IKResult(q, True, it, error)
        q = clamp_to_limits(model, dyn.integrate(model, q, delta, 1.0), params.limit_margin)
    _, e = task_jacobian_and_error(model, q, tasks, kin)
    error = float(np.linalg.norm(e))  # converged: tasks met (the posture may still be moving)
    return IKResult(q, error < params.tolerance, params.max_iterations, error)
