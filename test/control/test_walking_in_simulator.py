"""The WalkingController closed in-process around the Simulator (rigid contacts, seed 000).

The walk's criteria, measured on the simulator's own outputs (not the controller's view):
no fall (the pelvis stays above PELVIS_MIN and only the feet touch the ground), touch-downs
taken, forward distance of the pelvis, and the share of physics steps whose ZMP
(StepResult.zmp, from the contact wrenches) is inside the support polygon (margin >= 0).

Standing, a six-step walk, and the long walks (2 m, turning, side steps: 16-22 s of simulated
time each, ~10 s of wall time each on this 2-core machine once numba's cache is warm) all run
in the default suite: they are the issue's acceptance criteria.
"""

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from humanoid_sim.control import WalkingController, load_walking_config
from humanoid_sim.dynamics import frame_placement
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

ROOT = Path(__file__).resolve().parents[2]
SOLES = {"l_foot": "l_sole", "r_foot": "r_sole"}
PELVIS_MIN = 0.6  # [m] base height below which the robot counts as fallen


class WalkLog(NamedTuple):
    """Per physics step: t [s], measured CoM (3,), planned CoM (3,), planned support phase,
    vertical sole forces {link: f_z [N]}, ZMP margin [m] (NaN without contact), pelvis
    position (3,), links other than the feet in contact."""

    t: np.ndarray
    com: np.ndarray
    com_reference: np.ndarray
    support: list
    fz: list
    zmp_margin: np.ndarray
    base: np.ndarray
    other_contacts: list


def closed_loop(seconds: float, commands: dict[float, tuple[float, float, float]]):
    """Stand, then apply commands {time [s]: (vx, vy, yaw_rate)}; stops early on a fall."""
    model = load_urdf(ROOT / "urdf" / "humanoid.urdf")
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    sim.reset("stand")
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    ctrl = WalkingController(model, config)
    ctrl.reset(sim.q, sim.v, sim.t)
    every = int(round(config.control_dt / sim.config.dt))
    pending = dict(commands)
    contact_info = None
    tau = np.zeros(model.nj)
    rows = []
    for k in range(int(round(seconds / sim.config.dt))):
        if k % every == 0:
            for tc in [tc for tc in pending if tc <= sim.t + 1e-9]:
                ctrl.set_command(*pending.pop(tc))
            tau = ctrl.update(sim.t, sim.q, sim.v, contact_info)
        result = sim.step(tau)
        fz = {link: 0.0 for link in SOLES}
        others = set()
        for c in result.contacts:
            if c.link in fz:
                fz[c.link] += float(c.wrench_world[2])
            else:
                others.add(c.link)
        contact_info = {SOLES[link]: f > 20.0 for link, f in fz.items()}
        rows.append((result.t, ctrl.readout.com.copy(), ctrl.readout.com_reference.copy(),
                     ctrl.readout.phase.support, fz, result.zmp.margin, result.q[:3].copy(), others))
        if result.q[2] < PELVIS_MIN or others:
            break
    cols = list(zip(*rows))
    log = WalkLog(np.array(cols[0]), np.array(cols[1]), np.array(cols[2]), list(cols[3]), list(cols[4]),
                  np.array(cols[5], dtype=float), np.array(cols[6]), list(cols[7]))
    return model, sim, ctrl, log


def touchdowns(log: WalkLog) -> int:
    """Completed steps: single-support phases that ended in a double support."""
    s = log.support
    return sum(1 for a, b in zip(s, s[1:]) if a != "double" and b == "double")


def zmp_inside_share(log: WalkLog, t_from: float = 0.0) -> float:
    """Share of physics steps after t_from with the ZMP inside the support polygon (a step
    without any ground contact counts as outside)."""
    margin = log.zmp_margin[log.t >= t_from]
    return float(np.mean(np.nan_to_num(margin, nan=-1.0) >= 0.0))


def assert_no_fall(log: WalkLog, seconds: float) -> None:
    assert log.t[-1] >= seconds - 1e-6, (
        f"stopped at t = {log.t[-1]:.3f} s: pelvis z = {log.base[-1, 2]:.3f} m, "
        f"other contacts {log.other_contacts[-1]}")
    assert np.min(log.base[:, 2]) > PELVIS_MIN
    assert not any(log.other_contacts)


def base_yaw(q: np.ndarray) -> float:
    x, y, z, w = q[3:7]
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def test_stands_in_the_simulator():
    model, sim, ctrl, log = closed_loop(1.5, {})
    assert_no_fall(log, 1.5)
    assert np.max(np.abs(log.com - log.com[0])) < 2e-3
    total = np.array([sum(f.values()) for f in log.fz[200:]])
    np.testing.assert_allclose(total, model.total_mass * 9.81, rtol=5e-3)
    assert zmp_inside_share(log) == 1.0


def test_walks_six_steps_in_the_simulator():
    # Default suite: the configured walk speed, six touch-downs, no stop (the stop is in the
    # long test below). Timeline: command at 0.2 s, start_delay 1.6 s, initial double support
    # 1.0 s, then 0.9 s per step: the sixth touch-down is at 8.0 s.
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    seconds = 8.1
    model, sim, ctrl, log = closed_loop(seconds, {0.2: (config.walk_speed, 0.0, 0.0)})
    assert_no_fall(log, seconds)
    assert touchdowns(log) >= 6
    # Six steps at walk_speed * step_period each, less the first half-step of CoM lag.
    stride = config.walk_speed * config.footsteps.step_period
    assert log.base[-1, 0] - log.base[0, 0] > 4.5 * stride
    assert np.max(np.linalg.norm(log.com - log.com_reference, axis=1)) < 0.03
    assert zmp_inside_share(log) >= 0.95
    assert abs(log.base[-1, 1] - log.base[0, 1]) < 0.05  # straight ahead
    assert abs(base_yaw(sim.q)) < 0.05


def test_walks_two_metres_and_stops():
    # >= 10 steps and >= 2 m forward at the configured speed, then a stop command.
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    seconds = 22.0
    model, sim, ctrl, log = closed_loop(seconds, {0.2: (config.walk_speed, 0.0, 0.0),
                                                  16.0: (0.0, 0.0, 0.0)})
    assert_no_fall(log, seconds)
    assert touchdowns(log) >= 10
    assert log.base[-1, 0] - log.base[0, 0] > 2.0
    assert zmp_inside_share(log) >= 0.95
    assert not ctrl.walking
    q = sim.q
    for side, frame in (("left", "l_sole"), ("right", "r_sole")):
        step = [s for s in ctrl.footsteps if s.side == side][-1]
        p = frame_placement(model, q, frame)[:3, 3]
        np.testing.assert_allclose(p[:2], [step.x, step.y], atol=0.01)


@pytest.mark.parametrize("command, check", [
    ((0.1, 0.0, 0.2), "turn"),  # forward while turning left
    ((0.0, 0.05, 0.0), "side"),  # sideways to the left
])
def test_turns_and_side_steps_in_the_simulator(command, check):
    seconds = 16.0
    model, sim, ctrl, log = closed_loop(seconds, {0.2: command, 8.5: (0.0, 0.0, 0.0)})
    assert_no_fall(log, seconds)
    assert np.max(np.linalg.norm(log.com - log.com_reference, axis=1)) < 0.02
    assert zmp_inside_share(log) >= 0.95
    yaw = base_yaw(sim.q)
    if check == "turn":
        assert yaw > 1.0  # about 0.2 rad/s for the ~7 s of stepping, minus the committed lag
    else:
        assert log.com[-1, 1] - log.com[0, 1] > 0.25 and abs(yaw) < 0.05
