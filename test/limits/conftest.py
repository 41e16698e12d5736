"""Fixtures for the limits tests: small URDF models and a reference limit stepper.

The stepper is a minimal fixed-base time stepper used only to exercise the
limit rows dynamically: Pinocchio gives M(q) and the bias forces, the rows
enter a velocity-level LCP (seed 003 Eq. 1.23-1.27, soft rows by the
spring-damper-as-constraint form of Eq. 1.29-1.37) solved exactly by
enumerating active sets (k is tiny), then semi-implicit Euler.
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin
import pytest

from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import box_link_xml


def pendulum_urdf(lower: float, upper: float) -> str:
    """One 1 kg, 1 m box pendulum about y, hanging down -z, with URDF position limits."""
    return (
        '<robot name="pendulum"><link name="world"/>'
        '<link name="base"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>'
        '<joint name="weld" type="fixed"><parent link="world"/><child link="base"/></joint>'
        + box_link_xml("rod", 1.0, (0.05, 0.05, 1.0), com=(0.0, 0.0, -0.5), collision=False)
        + '<joint name="hinge" type="revolute"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/>'
        f'<limit lower="{lower!r}" upper="{upper!r}" effort="1000" velocity="100"/></joint></robot>'
    )


def _tiny(name: str) -> str:
    return (
        f'<link name="{name}"><inertial><mass value="0.01"/>'
        '<inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/></inertial></link>'
    )


def shoulder_urdf() -> str:
    """A 2 kg, 0.6 m arm on a pitch(y)-roll(x)-yaw(z) shoulder, hanging down -z, no URDF limits."""
    joints = [("shoulder_pitch", "torso", "sp_link", "0 1 0"), ("shoulder_roll", "sp_link", "sr_link", "1 0 0"),
              ("shoulder_yaw", "sr_link", "arm", "0 0 1")]
    parts = ['<robot name="arm"><link name="world"/>',
             '<link name="torso"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>',
             '<joint name="weld" type="fixed"><parent link="world"/><child link="torso"/></joint>',
             _tiny("sp_link"), _tiny("sr_link"),
             box_link_xml("arm", 2.0, (0.08, 0.08, 0.6), com=(0.0, 0.0, -0.3), collision=False)]
    for name, parent, child, axis in joints:
        parts.append(f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
                     f'<axis xyz="{axis}"/></joint>')
    parts.append("</robot>")
    return "".join(parts)


SHOULDER_YAML = """
joint_stops: {enabled: true}
ball_joints:
  - name: shoulder
    joints: [shoulder_pitch, shoulder_roll, shoulder_yaw]
    twist_axis: [0, 0, -1]
    zero_azimuth_axis: [1, 0, 0]
    centre_twist_deg: [-60, 60]
    limit: LIMIT
    control_points:
      - {phi_deg: 0,   theta_deg: 150, twist_deg: [-40, 40]}
      - {phi_deg: 45,  theta_deg: 140, twist_deg: [-40, 40]}
      - {phi_deg: 90,  theta_deg: 120, twist_deg: [-40, 40]}
      - {phi_deg: 135, theta_deg: 70,  twist_deg: [-50, 50]}
      - {phi_deg: 180, theta_deg: 40,  twist_deg: [-50, 50]}
      - {phi_deg: 225, theta_deg: 35,  twist_deg: [-50, 50]}
      - {phi_deg: 270, theta_deg: 40,  twist_deg: [-50, 50]}
      - {phi_deg: 315, theta_deg: 90,  twist_deg: [-40, 40]}
"""


def shoulder_yaml(limit: str = "{type: hard}") -> str:
    return SHOULDER_YAML.replace("LIMIT", limit)


class LimitStepper:
    """Fixed-base reference stepper with one-sided limit rows (test scaffolding, not the simulator)."""

    def __init__(self, urdf: str) -> None:
        self.model = load_urdf(urdf)
        self.pin_model = pin.buildModelFromXML(urdf)
        self.pin_data = self.pin_model.createData()
        assert tuple(self.pin_model.names[1:]) == self.model.joint_names
        assert self.pin_model.nv == self.model.nv

    def _pin_q(self, q: np.ndarray) -> np.ndarray:
        """Our angles to Pinocchio's q (continuous joints are (cos, sin) there)."""
        out = []
        for j, angle in zip(self.pin_model.joints[1:], q):
            out.extend([np.cos(angle), np.sin(angle)] if j.nq == 2 else [angle])
        return np.array(out)

    def step(self, q, v, tau, h, rows: OneSidedRows, rows_at=None):
        """One step; returns (q+, v+, row forces λ = impulse / h).

        rows_at(q): optional; if given, hard rows re-evaluated at the new q
        are projected back to gap >= 0 (nonlinear post-stabilisation, up to 3
        Gauss-Newton rounds) instead of trusting the linear gap prediction.
        """
        pq = self._pin_q(q)
        M = pin.crba(self.pin_model, self.pin_data, pq)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.nonLinearEffects(self.pin_model, self.pin_data, pq, v)
        v_free = v + h * np.linalg.solve(M, tau - b)
        k = rows.count
        lam = np.zeros(k)
        if k:
            J = rows.jacobian
            A = J @ np.linalg.solve(M, J.T)
            gap = -rows.violation
            rhs = J @ v_free
            soft = ~rows.hard
            # hard: next gap g + h J v+ >= 0 when apart (speculative, no penetration);
            # when already penetrating only J v+ >= 0: the overlap is removed by a
            # position projection below, not by a velocity that would bounce away
            rhs = rhs + np.where(rows.hard, np.maximum(gap, 0.0) / h, 0.0)
            # soft (Eq. 1.29-1.30): λ = -K g - (D + K h) ġ+  ->  ġ+ + (Λ/h + K g)/(D + K h) >= 0
            c = rows.damping + rows.stiffness * h
            A_soft = A + np.diag(np.where(soft, 1.0 / (h * np.where(soft, c, 1.0)), 0.0))
            rhs = rhs + np.where(soft, rows.stiffness * gap / np.where(soft, c, 1.0), 0.0)
            impulse = self._lcp(A_soft, rhs)
            v_plus = v_free + np.linalg.solve(M, J.T @ impulse)
            lam = impulse / h
            q_plus = q + h * v_plus
            hard = np.flatnonzero(rows.hard)
            gap_plus = gap[hard] + h * (J[hard] @ v_plus)
            if rows_at is None and np.any(gap_plus < 0.0):  # post-stabilisation: project positions only
                mu = self._lcp(A[np.ix_(hard, hard)], gap_plus)
                q_plus = q_plus + np.linalg.solve(M, J[hard].T @ mu)
            for _ in range(3 if rows_at is not None else 0):
                again = rows_at(q_plus)
                bad = again.hard & (again.violation > 0.0)
                if not np.any(bad):
                    break
                Jb = again.jacobian[bad]
                mu = self._lcp(Jb @ np.linalg.solve(M, Jb.T), -again.violation[bad])
                q_plus = q_plus + np.linalg.solve(M, Jb.T @ mu)
            return q_plus, v_plus, lam
        v_plus = v_free
        return q + h * v_plus, v_plus, lam

    @staticmethod
    def _lcp(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """x >= 0, w = A x + rhs >= 0, x·w = 0, by enumerating active sets (A positive definite)."""
        k = rhs.size
        for size in range(k + 1):
            for active in itertools.combinations(range(k), size):
                x = np.zeros(k)
                idx = list(active)
                if idx:
                    x[idx] = np.linalg.solve(A[np.ix_(idx, idx)], -rhs[idx])
                w = A @ x + rhs
                if np.all(x >= -1e-12) and np.all(w >= -1e-9):
                    return np.maximum(x, 0.0)
        raise RuntimeError("LCP without solution (A not a P-matrix?)")


@pytest.fixture
def stepper_for():
    return LimitStepper


@pytest.fixture
def make_pendulum_urdf():
    return pendulum_urdf


@pytest.fixture
def make_shoulder_urdf():
    return shoulder_urdf


@pytest.fixture
def make_shoulder_yaml():
    return shoulder_yaml
