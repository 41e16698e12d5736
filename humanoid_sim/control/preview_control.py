"""ZMP preview control of the cart-table model (Kajita et al., ICRA 2003).

Per horizontal axis the CoM at constant height ``z_c`` obeys the cart-table model, discretised
with sampling time ``dt`` and the CoM jerk ``u`` as input:

    x_{k+1} = A x_k + B u_k,   x = (c, ċ, c̈) [m, m/s, m/s^2]
    p_k = C x_k = c - (z_c / g) c̈                          (ZMP of the cart-table [m])

The optimal preview servo (Katayama's augmented system with the summed tracking error)
minimises Σ Q_e e_i^2 + R u_i^2 with e = p - p_ref; its gains come from the discrete algebraic
Riccati equation of the augmented system (scipy.linalg.solve_discrete_are):

    u_k = -G_i Σ_{i<=k} e_i - G_x x_k - Σ_{j=1..N} G_d(j) p_ref(k + j)

Both horizontal axes share the same gains; states are stored as (3, 2) arrays (rows c, ċ, c̈;
columns x, y) in the world frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.linalg
from numba import njit


@dataclass(frozen=True)
class PreviewParams:
    """dt: sampling time [s]; com_height: z_c above the ground [m]; gravity: g [m/s^2];
    preview_time: look-ahead N dt [s]; q_error: weight of the ZMP error [1/m^2];
    r_jerk: weight of the CoM jerk [s^6/m^2]."""

    dt: float = 0.005
    com_height: float = 0.8
    gravity: float = 9.81
    preview_time: float = 1.6
    q_error: float = 1.0
    r_jerk: float = 1e-6

    def __post_init__(self) -> None:
        for name in ("dt", "com_height", "gravity", "preview_time", "q_error", "r_jerk"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"PreviewParams.{name} must be finite and > 0, got {value!r}")

    @property
    def n_preview(self) -> int:
        """Number of previewed samples N."""
        return max(1, int(round(self.preview_time / self.dt)))


class PreviewGains(NamedTuple):
    """A (3,3), B (3,), C (3,): the cart-table model; G_i scalar, G_x (3,), G_d (N,)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    G_i: float
    G_x: np.ndarray
    G_d: np.ndarray


def cart_table_model(params: PreviewParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Discrete cart-table model (A (3,3), B (3,), C (3,)) for jerk input (exact for piecewise
    constant jerk)."""
    dt = params.dt
    A = np.array([[1.0, dt, 0.5 * dt * dt], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    B = np.array([dt**3 / 6.0, 0.5 * dt * dt, dt])
    C = np.array([1.0, 0.0, -params.com_height / params.gravity])
    return A, B, C


def preview_gains(params: PreviewParams, lump_tail: bool = True) -> PreviewGains:
    """Optimal preview servo gains of the augmented system (Katayama 1985, Kajita 2003).

    lump_tail: add the truncated tail of the preview gains to the last one (see the code).
    """
    A, B, C = cart_table_model(params)
    # Augmented state (Σe, x) in the incremental form: x̃_{k+1} = Ã x̃_k + B̃ Δu.
    # We use the equivalent "summed error" form: state (e_sum, x), e_sum_{k+1} = e_sum_k + C x_{k+1} - p_ref.
    A_t = np.zeros((4, 4))
    A_t[0, 0] = 1.0
    A_t[0, 1:] = C @ A
    A_t[1:, 1:] = A
    B_t = np.concatenate([[C @ B], B]).reshape(4, 1)
    Q_t = np.zeros((4, 4))
    Q_t[0, 0] = params.q_error
    R = np.array([[params.r_jerk]])
    P = scipy.linalg.solve_discrete_are(A_t, B_t, Q_t, R)
    S = R + B_t.T @ P @ B_t  # (1,1)
    K = np.linalg.solve(S, B_t.T @ P @ A_t).ravel()  # (4,)
    G_i, G_x = float(K[0]), K[1:].copy()
    A_c = A_t - B_t @ K.reshape(1, 4)
    I_t = np.array([1.0, 0.0, 0.0, 0.0])
    n = params.n_preview
    G_d = np.empty(n)
    G_d[0] = -G_i
    X = -A_c.T @ P @ I_t
    for j in range(1, n):
        G_d[j] = float(np.linalg.solve(S, B_t.T @ X).ravel()[0])
        X = A_c.T @ X
    if lump_tail:
        # The reference beyond the horizon is taken as held at its last previewed value:
        # the gains of the infinite tail then add to G_d(N). Their sum is -(G_x[0] + Σ G_d),
        # since a constant reference at rest must give zero jerk; this keeps the servo
        # exactly invariant to a shift of the reference (no start-up kick from truncation).
        G_d[-1] -= G_x[0] + G_d.sum()
    return PreviewGains(A, B, C, G_i, G_x, G_d)


class CartTableState(NamedTuple):
    """CoM position, velocity, acceleration and cart-table ZMP, each shape (2,) (x, y world)."""

    com: np.ndarray
    com_vel: np.ndarray
    com_acc: np.ndarray
    zmp: np.ndarray


@njit(cache=True)
def _servo_step_nb(A, B, C, G_i, G_x, G_d, x, e_sum, zmp_current, zmp_preview) -> None:
    """One servo sample for both axes, in place on x (3, 2) and e_sum (2,) (see module doc)."""
    n = G_d.shape[0]
    for a in range(2):
        x0, x1, x2 = x[0, a], x[1, a], x[2, a]
        e_sum[a] += C[0] * x0 + C[1] * x1 + C[2] * x2 - zmp_current[a]
        u = -G_i * e_sum[a] - (G_x[0] * x0 + G_x[1] * x1 + G_x[2] * x2)
        for j in range(n):
            u -= G_d[j] * zmp_preview[j, a]
        for r in range(3):
            x[r, a] = A[r, 0] * x0 + A[r, 1] * x1 + A[r, 2] * x2 + B[r] * u


class PreviewController:
    """Stateful preview servo for both horizontal axes (one ``step`` per dt)."""

    def __init__(self, params: PreviewParams) -> None:
        self.params = params
        self.gains = preview_gains(params)
        self._x = np.zeros((3, 2))
        self._e_sum = np.zeros(2)

    @property
    def n_preview(self) -> int:
        return self.gains.G_d.shape[0]

    def reset(self, com_xy: np.ndarray, com_vel_xy: np.ndarray | None = None) -> None:
        """Start at CoM position com_xy [m] (2,), velocity com_vel_xy [m/s] (default 0), zero
        acceleration and zero summed error."""
        self._x[:] = 0.0
        self._x[0] = com_xy
        if com_vel_xy is not None:
            self._x[1] = com_vel_xy
        self._e_sum[:] = 0.0

    @property
    def state(self) -> CartTableState:
        x = self._x
        return CartTableState(x[0].copy(), x[1].copy(), x[2].copy(), self.gains.C @ x)

    def step(self, zmp_current: np.ndarray, zmp_preview: np.ndarray) -> CartTableState:
        """Advance one dt.

        zmp_current: p_ref(k) [m], shape (2,) — the reference at the current sample.
        zmp_preview: p_ref(k+1..k+N) [m], shape (N, 2).
        Returns the state at k+1.
        """
        g = self.gains
        zmp_preview = np.asarray(zmp_preview, dtype=float)
        if zmp_preview.shape != (g.G_d.shape[0], 2):
            raise ValueError(f"zmp_preview must have shape ({g.G_d.shape[0]}, 2), got {zmp_preview.shape}")
        # u = -G_i Σe - G_x x - Σ G_d p_ref (CoM jerk [m/s^3]); x <- A x + B u
        _servo_step_nb(g.A, g.B, g.C, g.G_i, g.G_x, g.G_d, self._x, self._e_sum,
                       np.asarray(zmp_current, dtype=float), zmp_preview)
        return self.state


def track_zmp_reference(params: PreviewParams, zmp_ref: np.ndarray, com0: np.ndarray) -> np.ndarray:
    """Run the preview servo over a sampled reference.

    zmp_ref: p_ref at t_k = k dt [m], shape (K, 2); the last value is held beyond the end.
    com0: initial CoM (x, y) [m].
    Returns the states x_k for k = 0..K-1, shape (K, 3, 2) (rows c, ċ, c̈).
    """
    ctrl = PreviewController(params)
    ctrl.reset(np.asarray(com0, dtype=float))
    n = ctrl.n_preview
    padded = np.concatenate([zmp_ref, np.repeat(zmp_ref[-1:], n + 1, axis=0)])
    out = np.empty((zmp_ref.shape[0], 3, 2))
    for k in range(zmp_ref.shape[0]):
        out[k] = ctrl._x
        ctrl.step(padded[k], padded[k + 1 : k + 1 + n])
    return out
