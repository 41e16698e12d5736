"""The limit provider inside the Simulator (seed 000's solve with provider rows).

The simulator applies an impulse to any approaching hard row it is given, so the
provider looks one step ahead (lookahead = dt): the row joins just before the
stop is reached and the impact never overshoots by a whole step.
"""

import numpy as np
import pytest

from general_path import GeneralPath
from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics import center_of_mass
from humanoid_sim.dynamics.rigid_body_dynamics import mass_matrix
from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import box_link_xml
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

DT = 1e-3


def pendulum_sim(urdf, law="{type: hard}"):
    model = load_urdf(urdf)
    cfg = load_range_of_motion(f"joint_stops: {{enabled: true, limit: {law}}}\n")
    provider = RangeOfMotionProvider(model, cfg, lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    return sim, provider


def test_pendulum_held_at_its_stop_in_the_simulator(make_pendulum_urdf):
    upper, drive = 0.8, 50.0
    sim, provider = pendulum_sim(make_pendulum_urdf(-0.5, upper))
    qs, torques = [], []
    for k in range(1300):
        r = sim.step(np.array([drive if k < 1000 else -20.0]))
        qs.append(r.q[0])
        torques.append(provider.report().joint_torque[0])
    qs = np.array(qs)
    reached = int(np.argmax(qs > upper - 1e-4))
    assert 0 < reached < 300
    assert np.max(qs[:1000]) < upper + 1e-4  # never more than 1e-4 rad past the stop
    assert np.min(qs[reached + 50 : 1000]) > upper - 1e-4  # and stays there
    # the stop torque balances drive and gravity (m g L/2 sin q)
    assert torques[999] == pytest.approx(-(drive - 9.81 * 0.5 * np.sin(qs[999])), rel=1e-6)
    # released when the drive reverses: no stop torque, moving away
    assert torques[1005] == 0.0 and qs[1100] < upper - 0.1


def test_soft_stop_in_the_simulator(make_pendulum_urdf):
    upper, K = 0.8, 400.0
    excursions = []
    for drive in (15.0, 30.0):
        sim, provider = pendulum_sim(make_pendulum_urdf(-0.5, upper), f"{{type: soft, stiffness: {K}, damping: 8}}")
        for _ in range(3000):
            r = sim.step(np.array([drive]))
        excursion = r.q[0] - upper
        assert abs(r.v[0]) < 1e-6
        assert excursion == pytest.approx((drive - 9.81 * 0.5 * np.sin(r.q[0])) / K, rel=1e-4)
        assert provider.report().force[0] == pytest.approx(K * excursion, rel=1e-4)
        excursions.append(excursion)
    assert excursions[1] > 2.0 * excursions[0]


def test_arm_swept_around_in_the_simulator_stays_in_range(make_shoulder_urdf, make_shoulder_yaml):
    model = load_urdf(make_shoulder_urdf())
    provider = RangeOfMotionProvider(model, load_range_of_motion(make_shoulder_yaml()), lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    kin = provider.groups[0]
    g, b = kin.group, kin.group.boundary
    worst_swing = worst_twist = 0.0
    back = 0.0
    for k in range(4000):  # one full turn of the torque direction
        phi = 2 * np.pi * k * DT / 4.0
        lean = np.cos(phi) * g.zero_azimuth_axis + np.sin(phi) * g.azimuth_axis_2
        torque = 25.0 * np.cross(g.twist_axis, lean)
        r = sim.step(kin.state(sim.q).J_group.T @ torque - 1.0 * sim.v)
        a = kin.state(r.q).angles
        if not b.contains(a.swing_point):
            worst_swing = max(worst_swing, b.nearest(a.swing_point).distance)
        lo, hi = b.twist_range(a.swing_point)
        worst_twist = max(worst_twist, a.psi - hi, lo - a.psi)
        if abs(abs(a.phi) - np.pi) < 0.4:
            back = max(back, a.theta)
    assert back > np.radians(35)  # it was pressed against the narrow back of the range
    # measured with this simulator at dt = 1 ms over two turns: swing 3.2e-4 rad, twist 8.7e-3 rad (twist excess
    # appears right after swing impacts near θ = 150°, before the twist row is active)
    assert worst_swing < 1e-3
    assert worst_twist < 2e-2


def _energy(model, q: np.ndarray, v: np.ndarray) -> float:
    """T + U [J]: U = -m g . c, with the model's mass and centre of mass."""
    return 0.5 * float(v @ mass_matrix(model, q) @ v) - model.total_mass * float(model.gravity @ center_of_mass(model, q))


@pytest.mark.parametrize(("speed", "drive", "held"), [(3.0, 100.0, False), (3.0, 900.0, False), (1.0, 900.0, True)])
def test_a_joint_moving_out_of_its_stop_ends_the_step_no_deeper_and_gains_no_energy(make_pendulum_urdf, speed, drive, held):
    # 5 mrad past its upper stop, moving back into its range, driven towards the stop (the rod's
    # inertia about the hinge is 1/3 kg m^2: 900 N m stops 3 rad/s within 1.1 ms, 1 rad/s within
    # 0.4 ms). The stop holds it only so that the step does not end deeper than it starts (row
    # acceleration -2 x speed / dt): then the stop's work over the step is nil. Held by the
    # damping term of Eq. 20b (-kd x speed), the stop pushed it on out against the drive: the
    # step gained 0.92 J (3 rad/s, 900 N m) and 0.56 J (1 rad/s).
    upper = 0.8
    sim, provider = pendulum_sim(make_pendulum_urdf(-0.5, upper))
    q0, v0 = np.array([upper + 5e-3]), np.array([-speed])
    sim.set_state(q0, v0)
    before = _energy(sim.model, q0, v0)
    r = sim.step(np.array([drive]))
    work = drive * (r.q[0] - q0[0])  # the drive is held over the step
    stop_torque = provider.report().joint_torque[0]
    if held:
        assert stop_torque < 0.0
        assert r.q[0] == pytest.approx(q0[0], abs=1e-6) and r.v[0] > 0.0  # back where it started, turned round
    else:
        assert stop_torque == 0.0
        assert upper < r.q[0] < q0[0]
    assert _energy(sim.model, r.q, r.v) - before - work == pytest.approx(0.0, abs=1e-4)
    # the drive presses it back onto the stop, where it is stopped and held, no deeper than it was
    deepest = r.q[0]
    for _ in range(500):
        r = sim.step(np.array([drive]))
        deepest = max(deepest, r.q[0])
    assert deepest <= q0[0] + 1e-6
    assert abs(r.v[0]) < 1e-3 and provider.report().joint_torque[0] < 0.0


@pytest.mark.parametrize(("gap", "speed", "drive"), [(2e-3, 1.0, 900.0), (3.5e-3, 3.0, 600.0), (1e-3, 0.5, 900.0)])
def test_a_joint_short_of_its_stop_is_not_carried_past_it_within_the_step(make_pendulum_urdf, gap, speed, drive):
    # short of its upper stop, moving towards it, driven hard: at its velocity alone it would
    # end the step short (no impulse), but the drive's ½ a dt² carries it past (a = 3 drive
    # rad/s^2: 1.35 mrad at 900 N m). Without a row the stop was passed by that much, and the
    # next step's correction pushed the joint back out, doing work (0.16 J in a g1's flailing).
    upper = 0.8
    model = load_urdf(make_pendulum_urdf(-0.5, upper))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: hard}}\n")
    provider = RangeOfMotionProvider(model, cfg, lookahead=2e-3)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    q0, v0 = np.array([upper - gap]), np.array([speed])
    assert gap > speed * DT  # not arriving at its velocity alone
    assert gap < speed * DT + 0.5 * 3.0 * drive * DT**2 * 0.8  # the drive would carry it past
    sim.set_state(q0, v0)
    before = _energy(sim.model, q0, v0)
    r = sim.step(np.array([drive]))
    assert r.q[0] <= upper + 1e-9  # at the stop at the end of the step, not past it
    assert provider.report().joint_torque[0] < 0.0  # the stop held it back
    assert _energy(sim.model, r.q, r.v) - before - drive * (r.q[0] - q0[0]) <= 1e-9  # the stop did no positive work
    deepest = r.q[0]
    for _ in range(300):
        r = sim.step(np.array([drive]))
        deepest = max(deepest, r.q[0])
    assert deepest <= upper + 1e-6 and abs(r.v[0]) < 1e-3


def _double_pendulum_urdf(upper: float) -> str:
    """Two 1 kg, 1 m rods about y, hanging down -z: a shoulder with URDF limits [-1, upper] and
    an elbow without."""
    return (
        '<robot name="double"><link name="world"/>'
        '<link name="base"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>'
        '</inertial></link><joint name="weld" type="fixed"><parent link="world"/><child link="base"/></joint>'
        + box_link_xml("upper_rod", 1.0, (0.05, 0.05, 1.0), com=(0.0, 0.0, -0.5), collision=False)
        + box_link_xml("lower_rod", 1.0, (0.05, 0.05, 1.0), com=(0.0, 0.0, -0.5), collision=False)
        + '<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper_rod"/><axis xyz="0 1 0"/>'
        f'<limit lower="-1.0" upper="{upper!r}" effort="1000" velocity="100"/></joint>'
        '<joint name="elbow" type="continuous"><parent link="upper_rod"/><child link="lower_rod"/><axis xyz="0 1 0"/>'
        '<origin xyz="0 0 -1"/></joint></robot>'
    )


def test_a_stop_held_by_a_whirling_elbow_stays_on_it_and_no_step_gains_energy():
    # the shoulder on its upper stop, the elbow whirling at 40 rad/s: the lower rod's pull presses
    # the shoulder on its stop and lets go again as it turns (800 sin q_elbow N m: up to 32 N m
    # more or less within a step, the elbow turning 0.04 rad). The stop's force held over the
    # step instead of the joint, the shoulder sank past the stop while the pull grew (to 66 µrad)
    # and was pushed back out as it faded, and steps gained up to 4.8e-3 J; locked at its solved
    # acceleration for the step (integrator.lock_stops_nb) it stays on it
    upper = 0.0
    model = load_urdf(_double_pendulum_urdf(upper))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: hard}}\n")
    provider = RangeOfMotionProvider(model, cfg, lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    q, v = np.array([upper, 0.3]), np.array([0.0, 40.0])
    sim.set_state(q, v)
    energy = _energy(model, q, v)
    worst = deepest = 0.0
    held = 0
    for _ in range(1000):  # passive: zero torques
        r = sim.step(np.zeros(2))
        after = _energy(model, r.q, r.v)
        worst = max(worst, after - energy)
        energy = after
        deepest = max(deepest, r.q[0] - upper)
        held += provider.report().joint_torque[0] < 0.0
    assert held > 100  # held on its stop for many steps
    assert deepest < 1e-9
    assert worst < 1e-3


def test_a_general_provider_row_is_warm_started_from_its_force_in_the_last_step(make_pendulum_urdf):
    """The bounded solve starts a general provider's hard row (rows() and accept_forces()) from
    that row's force in the last step, by name: the same rows again, or the same names in
    another tuple; nothing after set_state. (The compiled range of motion's: test_step_limits.py.)"""
    model = load_urdf(make_pendulum_urdf(-0.5, 0.8))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: hard}}\n")
    provider = RangeOfMotionProvider(model, cfg, lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)),
                    providers=[GeneralPath(provider)])  # fmt: skip
    for _ in range(400):  # driven onto its upper stop and held there
        sim.step(np.array([50.0]))
    last = sim._last_hard_forces()
    assert list(last) == ["hinge upper"] and last["hinge upper"] > 0.0
    rows = provider.rows(sim.q, sim.v)
    sim._hard.warm[0] = 0.0
    sim._provider_rows([rows], sim.v)  # the same rows as the last step's
    assert sim._hard.warm[0] == last["hinge upper"]
    renamed = rows._replace(names=tuple(list(rows.names)))  # equal names in another tuple
    sim._hard.warm[0] = 0.0
    sim._provider_rows([renamed], sim.v)
    assert sim._hard.warm[0] == last["hinge upper"]
    sim.set_state(sim.q, sim.v)
    assert sim._last_hard_forces() == {}
    sim._provider_rows([rows], sim.v)
    assert sim._hard.warm[0] == 0.0
