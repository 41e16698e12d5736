"""The simulator's hot path: preallocated buffers filled by one numba call per step.

Usage (the simulator step)::

    ws = DynamicsWorkspace(model)        # once per model
    ws.update(q, v)                      # FK, S, V, J̇v terms, M, b
    ws.point_jacobian(body, point, out)  # (6, nv) rows into a preallocated view
    ws.point_drift(body, point, out)     # J̇ v (6,)
    qdd = ws.forward_dynamics(tau)       # ABA with the current q, v

From numba code, pass the arrays to ``kernels.point_jacobian_into(ws.parent,
ws.ndof, ws.v_index, ws.S, body, point, out)`` and
``kernels.point_drift_into(ws.V, ws.A, body, point, out)``.

All buffers are views owned by the workspace and overwritten by the next
``update``; copy what you keep.
"""

from __future__ import annotations


import numpy as np

from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.kinematic_tree import KinematicTree, kinematic_tree
from humanoid_sim.dynamics.per_model_cache import PerModelCache
from humanoid_sim.model.robot_model import RobotModel


class DynamicsWorkspace:
    """Buffers for one model (nb bodies, nv dofs); not thread-safe.

    After ``update(q, v)``:
      R (nb, 3, 3), p (nb, 3): X_world_body rotation and origin [m].
      S (nv, 6): world-frame motion subspace row of each velocity coordinate.
      V (nb, 6): body spatial velocities, world frame about the origin,
          linear first [m/s, rad/s].
      A (nb, 6): body spatial accelerations with q̈ = 0 and no gravity
          [m/s^2, rad/s^2] (for J̇ v; see point_drift).
      Iw, Ic (nb, 6, 6): body and composite spatial inertias, world frame.
      M (nv, nv): joint-space inertia [kg, kg m, kg m^2].
      b (nv,): bias forces C(q, v) v + g(q) [N, N m] (tau = M qdd + b).
    """

    def __init__(self, model: RobotModel) -> None:
        # no reference to the model itself, so per-model caches can let it go
        self.model_name = model.name
        self.body_names = model.body_names
        tree: KinematicTree = kinematic_tree(model)
        self.tree = tree
        nb, nv, nq = tree.nb, tree.nv, tree.nq
        self.nb, self.nv, self.nq = nb, nv, nq
        self.parent = tree.parent
        self.ndof = tree.ndof
        self.v_index = tree.v_index
        self.R = np.zeros((nb, 3, 3))
        self.p = np.zeros((nb, 3))
        self.S = np.zeros((nv, 6))
        self.V = np.zeros((nb, 6))
        self.A = np.zeros((nb, 6))
        self.Iw = np.zeros((nb, 6, 6))
        self.Ic = np.zeros((nb, 6, 6))
        self.M = np.zeros((nv, nv))
        self.b = np.zeros(nv)
        self.a_gravity = np.zeros(6)
        self.a_gravity[:3] = -tree.gravity
        self.zero_a = np.zeros(6)
        self.zero_nv = np.zeros(nv)
        # work arrays
        self._acc = np.zeros((nb, 6))
        self._f = np.zeros((nb, 6))
        self._IA = np.zeros((nb, 6, 6))
        self._Ia = np.zeros((nb, 6, 6))
        self._U = np.zeros((nb, 6, 6))
        self._Dinv = np.zeros((nb, 6, 6))
        self._pA = np.zeros((nb, 6))
        self._u = np.zeros(nv)
        self._qdd = np.zeros(nv)
        self._A0 = np.zeros((nb, 6))  # no velocity-product terms (M^-1 solves)
        self._factored = False

    def update(self, q: np.ndarray, v: np.ndarray) -> None:
        """Fill every buffer for q (nq,) and v (nv,) (see the class docstring)."""
        t = self.tree
        q = np.ascontiguousarray(q, dtype=np.float64)  # no copy when already so
        v = np.ascontiguousarray(v, dtype=np.float64)
        if q.shape != (self.nq,) or v.shape != (self.nv,):
            raise ValueError(f"q, v must have shapes ({self.nq},), ({self.nv},); got {q.shape}, {v.shape}")
        kernels.update_all_nb(
            t.parent, t.joint_type, t.joint_axis, t.R_parent_joint, t.p_parent_joint,
            t.mass, t.com, t.inertia_com, t.q_index, t.v_index, t.ndof, self.a_gravity,
            q, v, self.R, self.p, self.S, self.V, self.A, self.Iw, self.Ic, self.M, self.b,
            self._acc, self._f, self.zero_nv,
        )  # fmt: skip
        self._factored = False

    def buffers_changed(self) -> None:
        """Say that the buffers were filled for a new (q, v) by a compiled caller (the
        simulator's step): the articulated-body factors are computed again when next needed."""
        self._factored = False

    def _factor(self) -> None:
        if not self._factored:
            try:
                kernels.aba_factor_nb(
                    self.parent, self.ndof, self.v_index, self.S, self.Iw, self.zero_nv,
                    self._IA, self._Ia, self._U, self._Dinv,
                )  # fmt: skip
            except (ZeroDivisionError, np.linalg.LinAlgError):
                raise ValueError(
                    f"model {self.model_name!r}: singular articulated inertia (a moving "
                    f"subtree without mass or inertia); bodies: {self._massless_subtrees()}"
                ) from None
            self._factored = True

    def _massless_subtrees(self) -> list[str]:
        """Names of moving bodies whose subtree has zero mass (they make M singular)."""
        mass = np.array(self.tree.mass, dtype=float)
        for i in range(self.nb - 1, 0, -1):
            mass[self.parent[i]] += mass[i]
        return [self.body_names[i] for i in range(self.nb) if self.ndof[i] > 0 and mass[i] <= 0.0]

    def forward_dynamics(
        self, tau: np.ndarray, f_ext: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Joint accelerations qdd (nv,) for joint forces tau (nv,) [N, N m] at the
        current (q, v), gravity included, by the articulated-body method (seed 004).

        f_ext: optional external wrenches on the bodies, shape (nb, 6), world frame,
        linear-first ``(f [N], n [N m])`` with the moment about the world origin
        (a force f applied at point c gives ``(f, c x f)``).
        """
        tau = np.ascontiguousarray(tau, dtype=np.float64)
        if tau.shape != (self.nv,):
            raise ValueError(f"tau must have shape ({self.nv},), got {tau.shape}")
        self._factor()
        kernels.body_bias_forces_nb(self.Iw, self.V, self._pA)
        if f_ext is not None:
            if np.shape(f_ext) != (self.nb, 6):
                raise ValueError(f"f_ext must have shape ({self.nb}, 6), got {np.shape(f_ext)}")
            self._pA -= f_ext  # p_i = v_i x* I_i v_i - f_ext_i
        qdd = self._qdd if out is None else out
        kernels.aba_solve_nb(
            self.parent, self.ndof, self.v_index, self.S, self._Ia, self._U, self._Dinv,
            self.A, self._pA, self.a_gravity, tau, qdd,
            self._acc, self._u,
        )  # fmt: skip
        return qdd

    def inverse_mass_times(self, tau: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """M(q)^-1 tau (nv,) in O(n) through the articulated-body factorisation
        (zero velocity, no gravity), the test-force step of Kokkevis (seed 002, Eq. 4)."""
        self._factor()
        self._pA[:] = 0.0
        qdd = self._qdd if out is None else out
        kernels.aba_solve_nb(
            self.parent, self.ndof, self.v_index, self.S, self._Ia, self._U, self._Dinv,
            self._A0, self._pA, self.zero_a, np.ascontiguousarray(tau, dtype=float), qdd,
            self._acc, self._u,
        )  # fmt: skip
        return qdd

    def contact_space_matrix(self, J_c: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """J_c M^-1 J_c^T (m, m) for a contact Jacobian J_c (m, nv) at the current q,
        by unit test forces through the articulated-body factorisation (Kokkevis;
        seed 002, Eq. 3-4): O(n) per contact row."""
        J_c = np.ascontiguousarray(J_c, dtype=np.float64)
        if J_c.ndim != 2 or J_c.shape[1] != self.nv:
            raise ValueError(f"J_c must have shape (m, {self.nv}), got {J_c.shape}")
        if out is None:
            out = np.empty((J_c.shape[0], J_c.shape[0]))
        self._factor()
        kernels.contact_space_matrix_nb(
            self.parent, self.ndof, self.v_index, self.S, self._Ia, self._U, self._Dinv,
            J_c, out, self._A0, self._pA, self._qdd, self._acc, self._u,
        )  # fmt: skip
        return out

    def point_jacobian(self, body: int, point: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Jacobian (6, nv) of the point ``point`` (world, [m]) fixed to ``body``:
        linear then angular velocity, world axes (LOCAL_WORLD_ALIGNED)."""
        if out is None:
            out = np.empty((6, self.nv))
        kernels.point_jacobian_into(self.parent, self.ndof, self.v_index, self.S, body, point, out)
        return out

    def point_drift(self, body: int, point: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """J̇ v (6,) of the point ``point`` (world, [m]) fixed to ``body``: classical
        linear acceleration [m/s^2] and angular acceleration [rad/s^2] for q̈ = 0."""
        if out is None:
            out = np.empty(6)
        kernels.point_drift_into(self.V, self.A, body, point, out)
        return out




def scratch_workspace(model: RobotModel) -> DynamicsWorkspace:
    """A workspace shared by the convenience functions of this package (one per
    model; its buffers are overwritten by every call)."""
    return _SCRATCH.get(model)


_SCRATCH: PerModelCache[DynamicsWorkspace] = PerModelCache(DynamicsWorkspace)
