"""The compiled common-case step (contact/fast_step.py) against the general Python path.

Truth: the general path of Simulator.step (impulses, slipping, area reductions, provider
rows) is the reference the physics tests check; the fast path must produce the same
states, contact reports and ZMP bit for bit whenever it runs, and hand every other step
to the general path.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import Material
from humanoid_sim.dynamics.kinematics import frame_jacobian
from humanoid_sim.dynamics.rigid_body_dynamics import gravity_forces
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator

from test_humanoid_standing import joint_gains  # noqa: E402  (same test folder)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "contact"))  # contact_scenes (the box scenes)
FEET = ("l_sole", "r_sole")


def _count_fast(sim: Simulator) -> list[int]:
    """Wrap sim._step_fast to count [fast steps, fallbacks]."""
    counts = [0, 0]
    original = sim._step_fast

    def counted(*args):
        result = original(*args)
        counts[0 if result is not None else 1] += 1
        return result

    sim._step_fast = counted
    return counts


def _general_only(sim: Simulator) -> Simulator:
    sim._step_fast = lambda *args: None
    return sim


def _assert_same_result(ra, rb) -> None:
    assert ra.t == rb.t
    np.testing.assert_array_equal(ra.q, rb.q)
    np.testing.assert_array_equal(ra.v, rb.v)
    assert (ra.rounds, ra.validated, ra.impulse) == (rb.rounds, rb.validated, rb.impulse)
    assert ra.max_penetration == rb.max_penetration
    assert len(ra.contacts) == len(rb.contacts)
    for ca, cb in zip(ra.contacts, rb.contacts):
        for name in ca._fields:
            x, y = getattr(ca, name), getattr(cb, name)
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y, err_msg=name)
            else:
                assert x == y, name
    for name in ra.zmp._fields:
        np.testing.assert_array_equal(getattr(ra.zmp, name), getattr(rb.zmp, name), err_msg=name)


def test_standing_humanoid_takes_the_fast_path_with_the_general_paths_results():
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    fast, general = Simulator(model), _general_only(Simulator(model))
    q0 = fast.reset("stand")
    general.reset("stand")
    nj = model.nj
    J = np.vstack([frame_jacobian(model, q0, f) for f in FEET])
    A = np.hstack([np.vstack([np.zeros((6, nj)), np.eye(nj)]), J.T])
    hold = np.linalg.lstsq(A, gravity_forces(model, q0), rcond=None)[0][:nj]
    kp, kd = joint_gains(model, q0, 30.0)
    counts = _count_fast(fast)
    for i in range(150):
        tau = hold - kp * (fast.q[7:] - q0[7:]) - kd * fast.v[6:]
        push = np.zeros(model.nv)
        push[0] = 20.0 if 50 <= i < 60 else 0.0  # a short push on the base [N]
        _assert_same_result(fast.step(tau, external_force=push), general.step(tau, external_force=push))
    assert counts == [150, 0]


def test_impacts_and_slipping_fall_back_and_the_fast_path_resumes(rng):
    """A tumbling box: impacts, slipping and area reductions go to the general path, resting
    contact to the fast path; the two simulators stay bit-identical throughout."""
    from contact_scenes import box_q, ground_sim

    mat = Material(mu_s=0.5, mu_d=0.4, restitution=0.3)
    fast, general = ground_sim(mat), _general_only(ground_sim(mat))
    R0 = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    R0 *= np.sign(np.linalg.det(R0))
    q = box_q([0.0, 0.0, 0.15], R0)
    v = np.array([0.8, -0.3, 0.0, 2.0, -1.0, 0.5])
    fast.set_state(q, v)
    general.set_state(q, v)
    counts = _count_fast(fast)
    for _ in range(1500):
        _assert_same_result(fast.step(), general.step())
    assert counts[0] > 100 and counts[1] > 10  # both paths ran
    assert np.linalg.norm(fast.v) < 1e-6  # it came to rest


def test_a_contact_unloading_before_lift_off_is_released_on_the_fast_path():
    """A box on the ground lifted by slightly more than its weight: while it still rises
    slower than the separating threshold its contact stays detected, the first solve gives
    f_z < 0 and the contact is released (4.4 (1)); the fast path solves again without it,
    as the general path's second round does, bit for bit; the box then accelerates up at
    (F - m g) / m, the closed form of free flight under that force."""
    from contact_scenes import BOX_MASS, BOX_SIZE, G, box_q, ground_sim

    mat = Material(mu_s=0.8, mu_d=0.6, restitution=0.0)
    fast, general = ground_sim(mat), _general_only(ground_sim(mat))
    q = box_q([0.0, 0.0, BOX_SIZE[2] / 2], np.eye(3))
    for sim in (fast, general):
        sim.set_state(q, np.zeros(6))
        for _ in range(50):  # settle: the contact remembered as sticking
            sim.step()
    lift = np.zeros(6)
    lift[2] = 1.02 * BOX_MASS * G
    counts = _count_fast(fast)
    rounds = []
    for _ in range(20):
        result = fast.step(external_force=lift)
        _assert_same_result(result, general.step(external_force=lift))
        rounds.append(result.rounds)
    assert counts == [20, 0]
    assert rounds[:3] == [2, 2, 2] and rounds[-1] == 1  # released while detected, then separating
    assert not result.contacts
    np.testing.assert_allclose(fast.v[2], 20 * 1e-3 * 0.02 * G, rtol=1e-9)


def test_walking_touch_downs_take_the_fast_path_with_the_general_paths_results():
    """The humanoid walking (the walking controller, joint ranges of motion as in the node):
    a touching-down foot is stopped by impulses (Eq. 18-19) while the stance foot's rows are
    released in the impulse phase, and the touching-down foot is released again in the
    acceleration phase with its impulse still reported; the fast path covers those steps
    and stays bit-identical to the general path through two touch-downs and lift-offs."""
    from humanoid_sim.control import WalkingController, load_walking_config
    from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion

    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    rom = load_range_of_motion(REPO / "config" / "range_of_motion.yaml")
    fast = Simulator(model, providers=[RangeOfMotionProvider(model, rom)])
    general = _general_only(Simulator(model, providers=[RangeOfMotionProvider(model, rom)]))
    fast.reset("stand")
    general.reset("stand")
    config = load_walking_config(REPO / "config" / "walking.yaml")
    controller = WalkingController(model, config)
    controller.reset(fast.q, fast.v, fast.t)
    controller.set_command(config.walk_speed, 0.0, 0.0)
    every = int(round(config.control_dt / 1e-3))
    counts = _count_fast(fast)
    impulse_steps_fast = 0
    tau = np.zeros(model.nj)
    for k in range(3400):
        if k % every == 0:
            tau = controller.update(fast.t, fast.q, fast.v)
        before = counts[0]
        result = fast.step(tau)
        _assert_same_result(result, general.step(tau))
        impulse_steps_fast += result.impulse and counts[0] > before
    assert fast.q[2] > 0.8  # still walking
    assert impulse_steps_fast >= 15  # touch-downs on the fast path (25 here)
    assert counts[1] < 0.01 * sum(counts)  # the general path only for the rare steps


def test_step_results_are_not_overwritten_by_later_steps():
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    sim = Simulator(model)
    sim.reset("stand")
    first = sim.step()
    kept = [c.wrench_world.copy() for c in first.contacts], first.q.copy(), first.zmp.zmp.copy()
    assert len(first.contacts) == 2
    for _ in range(20):
        sim.step()
    np.testing.assert_array_equal([c.wrench_world for c in first.contacts], kept[0])
    np.testing.assert_array_equal(first.q, kept[1])
    np.testing.assert_array_equal(first.zmp.zmp, kept[2])



def test_rolling_bodies_take_the_fast_path_with_the_general_paths_results():
    """A sphere and a cylinder rolling on the ground: contact points that move over the
    body (no anchor, the rolling drift) give the same steps on both paths."""
    from humanoid_sim.contact.environment import Environment, GroundPlane
    from humanoid_sim.dynamics.spatial import rotation_to_quaternion
    from humanoid_sim.model.urdf_builder import round_body_urdf
    from humanoid_sim.simulator.simulator import SimulatorConfig

    r, w = 0.1, 10.0
    config = SimulatorConfig(environment=Environment(ground=GroundPlane(0.0)))
    # the link's z axis along world y for the cylinder: it rolls about it along x
    for kind, R_body, w_body in (("sphere", np.eye(3), [0, w, 0]), ("cylinder", np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]), [0, 0, -w])):
        model = load_urdf(round_body_urdf(kind, 1.0, r, 0.3))
        fast, general = Simulator(model, config), _general_only(Simulator(model, config))
        q0 = np.concatenate([[0.0, 0.0, r], rotation_to_quaternion(R_body)])
        v0 = np.concatenate([R_body.T @ [r * w, 0.0, 0.0], w_body])
        assert np.allclose(R_body @ w_body, [0, w, 0])
        fast.set_state(q0, v0)
        general.set_state(q0, v0)
        counts = _count_fast(fast)
        for _ in range(300):
            result = fast.step()
            _assert_same_result(result, general.step())
            assert len(result.contacts) == 1 and result.contacts[0].sticking
        assert counts == [300, 0]
        assert fast.q[0] == pytest.approx(r * w * 0.3, rel=1e-3)  # rolled on at its speed
