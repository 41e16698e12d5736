"""A free box against the ground and a slope, checked against closed-form physics."""

import numpy as np
import pytest
from contact_scenes import BOX_MASS, BOX_SIZE, G, box_model, box_q, ground_sim, slope_sim

from humanoid_sim.contact.environment import Environment, GroundPlane, Material
from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.dynamics.kinematics import point_jacobian
from humanoid_sim.dynamics.spatial import axis_angle_to_rotation
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

HALF_Z = BOX_SIZE[2] / 2


def test_dropped_box_rests_without_bounce_at_zero_restitution():
    sim = ground_sim(Material(1.0, 0.8, 0.0))
    sim.set_state(np.array([0, 0, HALF_Z + 0.3, 0, 0, 0, 1.0]), np.zeros(6))
    heights, impacts, touched = [], 0, []
    for _ in range(800):
        r = sim.step()
        heights.append(r.q[2])
        impacts += r.impulse
        touched.append(bool(r.contacts))
    heights = np.array(heights)
    first_touch = touched.index(True)
    # after touching down it never rises again (no bounce at e = 0), beyond the
    # removal of the landing penetration
    assert heights[first_touch:].max() <= HALF_Z + 1e-6
    assert impacts >= 1
    assert abs(r.q[2] - HALF_Z) < 1e-6  # no penetration at rest
    assert r.max_penetration < 1e-6
    assert np.linalg.norm(r.v) < 1e-6
    assert r.solver == "checked" and r.sweeps == 0  # one contact: seed 000's solve, no iterations
    (c,) = r.contacts
    assert c.kind == ContactKind.SURFACE and c.sticking
    assert c.wrench_world[2] == pytest.approx(BOX_MASS * G, rel=1e-9)  # static equilibrium
    assert np.allclose(c.wrench_world[:2], 0.0, atol=1e-9)
    assert r.zmp.margin > 0.04  # the ZMP is at the centre of the 0.2 x 0.1 sole


def test_a_box_at_rest_steps_without_the_stages_and_stays_where_it_is():
    """A state at rest takes the constant-acceleration step (StepResult.stages 0,
    dynamics/integrator.py): the box falling and landing takes the four Runge-Kutta stages;
    lying still, the step without them leaves it exactly where it is, with its weight on the
    ground, and so does a push its friction holds; lifted, it takes the stages again on the
    first step."""
    sim = ground_sim(Material(1.0, 0.8, 0.0))
    sim.set_state(np.array([0, 0, HALF_Z + 0.05, 0, 0, 0, 1.0]), np.zeros(6))
    stages = [sim.step().stages for _ in range(400)]
    assert stages[:50] == [3] * 50  # falling
    assert stages[-100:] == [0] * 100  # lying still
    q_rest = sim.q.copy()
    for _ in range(200):
        r = sim.step()
        assert r.stages == 0
        (c,) = r.contacts
        assert c.wrench_world[2] == pytest.approx(BOX_MASS * G, rel=1e-9)
    assert np.max(np.abs(r.q - q_rest)) <= 1e-15 and np.max(np.abs(r.v)) <= 1e-12
    push = np.zeros(6)
    push[0] = 0.01 * BOX_MASS * G  # well within static friction: the box stays, its force changes
    r = sim.step(external_force=push)
    assert r.stages == 0 and np.max(np.abs(r.v)) <= 1e-12
    assert r.contacts[0].wrench_world[0] == pytest.approx(-push[0], rel=1e-9)  # friction holds it
    push[0], push[2] = 0.0, 2.0 * BOX_MASS * G  # lifted off
    r = sim.step(external_force=push)
    assert r.stages == 3 and r.v[2] > 0.0


def test_a_penetrating_box_moving_out_is_no_contact_but_its_depth_is_reported():
    """A box 5 mm into the ground and leaving it at 1 m/s (faster than the correction of
    Eq. 20b would move it out) is separating: no contact, no force. Its depth is still
    reported: max_penetration is the deepest point in the band, in a contact or not."""
    sim = ground_sim(Material(1.0, 0.8, 0.0))
    depth = 0.005
    sim.set_state(np.array([0, 0, HALF_Z - depth, 0, 0, 0, 1.0]), np.array([0, 0, 1.0, 0, 0, 0]))
    r = sim.step()
    assert not r.contacts
    assert r.max_penetration == pytest.approx(depth, abs=1e-12)
    assert r.v[2] == pytest.approx(1.0 - G * sim.config.dt, abs=1e-9)  # gravity only


def test_bounce_heights_follow_restitution_squared():
    e, h0, dt = 0.5, 1.0, 5e-4
    sim = ground_sim(Material(1.0, 0.8, e), dt=dt)
    sim.set_state(np.array([0, 0, HALF_Z + h0, 0, 0, 0, 1.0]), np.zeros(6))
    z = np.array([sim.step().q[2] - HALF_Z for _ in range(int(2.2 / dt))])
    apex = [z[i] for i in range(1, len(z) - 1) if z[i] > z[i - 1] and z[i] >= z[i + 1] and z[i] > 1e-2]
    assert len(apex) >= 2
    heights = [h0] + apex[:2]
    for before, after in zip(heights, heights[1:]):
        assert after / before == pytest.approx(e**2, rel=0.03)


@pytest.mark.parametrize("alpha_deg, mu_s, mu_d", [(20.0, 0.5, 0.4), (10.0, 0.2, 0.15)])
def test_box_stays_on_slope_when_static_friction_suffices(alpha_deg, mu_s, mu_d):
    alpha = np.radians(alpha_deg)
    assert mu_s > np.tan(alpha)
    sim, downhill = slope_sim(alpha, Material(mu_s, mu_d, 0.0))
    p0 = sim.q[:3]
    for _ in range(1000):
        r = sim.step()
    assert abs((r.q[:3] - p0) @ downhill) < 1e-7
    (c,) = r.contacts
    assert c.sticking and c.kind == ContactKind.SURFACE
    # static friction carries the downhill gravity component: |f_t| = m g sin(alpha)
    assert np.hypot(*c.wrench_local[:2]) == pytest.approx(BOX_MASS * G * np.sin(alpha), rel=1e-6)
    assert c.wrench_local[2] == pytest.approx(BOX_MASS * G * np.cos(alpha), rel=1e-6)


@pytest.mark.parametrize("alpha_deg, mu_s, mu_d", [(20.0, 0.3, 0.25), (30.0, 0.5, 0.3)])
def test_box_slides_down_slope_with_dynamic_friction(alpha_deg, mu_s, mu_d):
    alpha = np.radians(alpha_deg)
    assert mu_s < np.tan(alpha)
    dt = 1e-3
    sim, downhill = slope_sim(alpha, Material(mu_s, mu_d, 0.0), dt=dt)
    s, t = [], []
    for _ in range(600):
        r = sim.step()
        s.append(r.q[:3] @ downhill)
        t.append(r.t)
    accel = 2.0 * np.polyfit(t[100:], s[100:], 2)[0]
    expected = G * (np.sin(alpha) - mu_d * np.cos(alpha))
    assert accel == pytest.approx(expected, rel=0.01)
    (c,) = r.contacts
    assert not c.sticking
    assert np.hypot(*c.wrench_local[:2]) == pytest.approx(mu_d * c.wrench_local[2], rel=1e-9)  # Eq. 34-35


@pytest.mark.parametrize("ratio", [0.9, 1.1])
def test_push_starts_sliding_only_beyond_the_static_limit(ratio):
    mu_s, mu_d = 0.5, 0.4
    sim = ground_sim(Material(mu_s, mu_d, 0.0))
    model = sim.model
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.zeros(6))
    push = np.array([ratio * mu_s * BOX_MASS * G, 0.0, 0.0])  # horizontal, through the COM
    xs, ts = [], []
    for _ in range(400):
        q = sim.q
        J = point_jacobian(model, q, 0, q[:3])
        r = sim.step(external_force=J[:3].T @ push)
        xs.append(r.q[0])
        ts.append(r.t)
    if ratio < 1:
        assert abs(xs[-1]) < 1e-7
        assert r.contacts[0].sticking
    else:
        accel = 2.0 * np.polyfit(ts[50:], xs[50:], 2)[0]
        assert accel == pytest.approx((push[0] - mu_d * BOX_MASS * G) / BOX_MASS, rel=0.01)
        assert not r.contacts[0].sticking


def _pivot_wrench(model, R, r_com_from_pivot):
    """Closed-form contact force of a body at rest pivoting about a fixed point/edge:
    α = I_p^-1 (r x m g), a = α x r, f = m (a - g) (no friction limit reached)."""
    m = BOX_MASS
    I_com = R @ model.inertia_com[0] @ R.T
    r = r_com_from_pivot
    I_p = I_com + m * (r @ r * np.eye(3) - np.outer(r, r))
    g = np.array([0, 0, -G])
    alpha = np.linalg.solve(I_p, np.cross(r, m * g))
    return m * (np.cross(alpha, r) - g), alpha


def _tilted_box_sim(R, lowest_local):
    """The box turned by R, resting at rest on its lowest point lowest_local (body frame)."""
    model = box_model()
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=Environment(GroundPlane(0.0, Material(2.0, 1.5, 0.0)))))
    height = -(R @ lowest_local)[2]  # centre height so that this point is at z = 0
    sim.set_state(box_q([0.0, 0.0, height], R), np.zeros(6))
    return model, sim


def test_corner_contact_is_a_point_with_the_pivot_force():
    # a box resting on one corner, tilted so its centre is off the corner
    R = axis_angle_to_rotation(np.array([1.0, -1.0, 0.3]) / np.linalg.norm([1.0, -1.0, 0.3]), 0.5)
    # rotate so that the chosen corner is the lowest point
    others = [np.array([sx, sy, sz]) * 0.5 * np.array(BOX_SIZE) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    lowest = min(others, key=lambda c: (R @ c)[2])
    model, sim = _tilted_box_sim(R, lowest)
    r = sim.step()
    (c,) = r.contacts
    assert c.kind == ContactKind.POINT
    f_expected, _ = _pivot_wrench(model, R, -(R @ lowest))
    assert np.allclose(c.wrench_world[:3], f_expected, rtol=1e-5, atol=1e-6)
    assert np.allclose(c.wrench_world[3:], 0.0, atol=1e-9)  # a point transmits no moment
    assert np.allclose(c.p_v, c.origin, atol=1e-12)


def test_edge_contact_is_a_line_with_the_pivot_force():
    # rotate about x so that a long edge (along x) is lowest, centre off the edge
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), 0.3)
    edge_mid = np.array([0.0, -0.5 * BOX_SIZE[1], -0.5 * BOX_SIZE[2]])
    model, sim = _tilted_box_sim(R, edge_mid)
    r = sim.step()
    (c,) = r.contacts
    assert c.kind == ContactKind.LINE
    assert abs(c.R_world_vl[:, 0] @ np.array([1.0, 0, 0])) == pytest.approx(1.0)  # x along the edge
    f_expected, alpha = _pivot_wrench(model, R, -(R @ edge_mid))
    assert abs(alpha[1]) < 1e-12 and abs(alpha[2]) < 1e-12  # it pivots about the edge only
    assert np.allclose(c.wrench_world[:3], f_expected, rtol=1e-5, atol=1e-6)
    # the force acts on the edge midpoint: no moment about the origin placed there
    assert np.allclose(c.wrench_world[3:], 0.0, atol=1e-7)


@pytest.mark.parametrize("beyond_balance", [True, False])
def test_box_on_an_edge_tips_over_onto_a_face(beyond_balance):
    # balance angle about the long edge: atan(0.1 / 0.05) = 63.4 deg; beyond it the box
    # falls over onto its 0.2 x 0.05 side (y axis vertical), before it back onto its base
    tilt = np.arctan2(BOX_SIZE[1], BOX_SIZE[2]) + np.radians(8.0 if beyond_balance else -8.0)
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), tilt)
    edge_mid = np.array([0.0, -0.5 * BOX_SIZE[1], -0.5 * BOX_SIZE[2]])
    model, sim = _tilted_box_sim(R, edge_mid)
    kinds = set()
    for _ in range(1500):
        r = sim.step()
        kinds.update(c.kind for c in r.contacts)
    assert ContactKind.LINE in kinds
    (c,) = r.contacts
    assert c.kind == ContactKind.SURFACE
    assert np.linalg.norm(r.v) < 1e-5
    # it lies on a face: one box axis vertical, the centre at half that edge above ground
    from humanoid_sim.dynamics.spatial import quaternion_to_rotation

    Rf = quaternion_to_rotation(r.q[3:7])
    axis = int(np.argmax(np.abs(Rf[2])))
    assert abs(Rf[2, axis]) == pytest.approx(1.0, abs=1e-6)
    assert r.q[2] == pytest.approx(0.5 * BOX_SIZE[axis], abs=1e-6)
    assert axis == (1 if beyond_balance else 2)  # over onto its side, or back onto its base


def test_a_box_tipping_about_its_sticking_edge_keeps_its_energy_until_its_face_lands():
    # pivoting about an edge that sticks, the contact force does no work: T + U stays constant
    # until the face lands (an impulse or a surface contact). The contact's wrench is held on
    # the edge over each step; held in the box's twist coordinates (fixed about its centre)
    # the moment arm would not turn with the box: 4.5e-4 of the energy gained by the landing.
    tilt = np.arctan2(BOX_SIZE[1], BOX_SIZE[2]) + np.radians(8.0)
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), tilt)
    model, sim = _tilted_box_sim(R, np.array([0.0, -0.5 * BOX_SIZE[1], -0.5 * BOX_SIZE[2]]))
    a, b, c = BOX_SIZE
    inertia = BOX_MASS / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])

    def energy(q, v):  # v: the centre's velocity and the angular velocity, body axes
        return 0.5 * BOX_MASS * v[:3] @ v[:3] + 0.5 * v[3:] @ inertia @ v[3:] + BOX_MASS * G * q[2]

    E0 = energy(sim.q, sim.v)
    z0 = z = sim.q[2]
    pivoting = 0
    worst = 0.0
    for _ in range(1000):
        r = sim.step()
        if r.impulse or any(c.kind == ContactKind.SURFACE for c in r.contacts):
            break
        assert [c.kind for c in r.contacts] == [ContactKind.LINE] and r.contacts[0].sticking
        pivoting += 1
        worst = max(worst, abs(energy(r.q, r.v) - E0))
        z = r.q[2]
    # it fell most of the way (its centre 5.4 mm from the start to lying on the face), fast
    assert pivoting > 100 and z0 - z > 4.5e-3
    assert worst < 5e-5 * E0, worst / E0


@pytest.mark.parametrize("ratio", [0.9, 1.3])
def test_yaw_torque_turns_the_box_only_beyond_the_friction_moment(ratio):
    """Uniform pressure under a flat box turning about its centre: the friction moment is
    μ f_z <r> with <r> the mean distance over the 0.2 x 0.1 sole (Eq. 30, 33)."""
    mu_s, mu_d = 0.5, 0.4
    x, y = np.meshgrid(np.linspace(-0.1, 0.1, 801)[:-1] + 0.000125, np.linspace(-0.05, 0.05, 401)[:-1] + 0.000125)
    mean_r = np.hypot(x, y).mean()
    W = BOX_MASS * G
    sim = ground_sim(Material(mu_s, mu_d, 0.0))
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.zeros(6))
    torque = ratio * mu_s * W * mean_r
    ext = np.zeros(6)
    ext[5] = torque  # about the body z axis = world z while the box lies flat
    w, t = [], []
    for _ in range(300):
        r = sim.step(external_force=ext)
        w.append(r.v[5])
        t.append(r.t)
    (c,) = r.contacts
    if ratio < 1:
        assert abs(r.v[5]) < 1e-7 and not c.spinning
    else:
        I_zz = BOX_MASS * (BOX_SIZE[0] ** 2 + BOX_SIZE[1] ** 2) / 12
        alpha = np.polyfit(t[20:], w[20:], 1)[0]
        assert alpha == pytest.approx((torque - mu_d * W * mean_r) / I_zz, rel=0.01)
        assert c.spinning and abs(c.wrench_local[5]) == pytest.approx(mu_d * W * mean_r, rel=0.005)
        assert np.linalg.norm(r.q[:2]) < 1e-6  # turning about its centre, no drift


@pytest.mark.parametrize("ratio", [0.8, 1.2])
def test_push_high_on_the_box_moves_p_v_to_the_edge_and_tips_it(ratio):
    """A horizontal push F at the top of a box resting on a rough floor: it stays while
    F h < W L/2 (p_v inside the sole, Eq. 26); beyond, p_v would leave the hull, the contact
    becomes the line of the front edge (4.4 (2)) and the box starts to tip about it."""
    sim = ground_sim(Material(2.0, 1.8, 0.0))
    model = sim.model
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.zeros(6))
    W, h, half_w = BOX_MASS * G, BOX_SIZE[2], BOX_SIZE[1] / 2
    F = np.array([0.0, ratio * W * half_w / h, 0.0])  # sideways: tipping needs F = W here
    for i in range(30):
        q = sim.q
        point = q[:3] + np.array([0.0, 0.0, HALF_Z])  # top centre
        r = sim.step(external_force=point_jacobian(model, q, 0, point)[:3].T @ F)
        (c,) = r.contacts
        if i == 0:
            if ratio < 1:
                assert c.kind == ContactKind.SURFACE and r.rounds == 1
                assert c.p_v[1] == pytest.approx(F[1] * h / W, rel=1e-6)  # Eq. 26 with the push moment
            else:
                assert c.kind == ContactKind.LINE and r.rounds >= 2
                assert c.origin[1] == pytest.approx(half_w) and c.p_v[1] == pytest.approx(half_w)
    if ratio < 1:
        assert np.linalg.norm(r.v) < 1e-8
    else:
        assert r.v[3] < -0.1  # rolling about the +y edge (a -x rotation lifts the -y side)
        assert c.kind == ContactKind.LINE and c.sticking


def test_sliding_box_decelerates_with_dynamic_friction_and_sticks():
    """Launched at v0 on a flat floor it decelerates at mu_d g, stops after v0^2 / (2 mu_d g)
    and then sticks (slip reversal -> stick, 4.5) without creeping."""
    mu_s, mu_d, v0 = 0.6, 0.4, 1.0
    sim = ground_sim(Material(mu_s, mu_d, 0.0))
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.array([v0, 0, 0, 0, 0, 0.0]))
    xs, vs = [], []
    for _ in range(600):
        r = sim.step()
        xs.append(r.q[0])
        vs.append(r.v[0])
    stop = v0**2 / (2 * mu_d * G)
    assert xs[-1] == pytest.approx(stop, rel=0.01)
    t = np.arange(1, 101) * 1e-3
    assert np.polyfit(t, vs[:100], 1)[0] == pytest.approx(-mu_d * G, rel=0.01)
    (c,) = r.contacts
    assert c.sticking and abs(r.v[0]) < 1e-9
    assert abs(xs[-1] - xs[-100]) < 1e-9  # at rest, no creep


def test_a_slide_against_a_push_stops_within_a_step_and_is_held():
    """Sliding at 5 cm/s against a push of 0.6 mu_s m g, the box decelerates at
    (mu_d + 0.6 mu_s) g; once its slip would reverse within a step it stops by that step's
    end (4.6) and static friction holds it against the push. While it slips its friction
    opposes the slip (negative work on every step), and over the slide it does Coulomb's
    work, -mu_d m g times the distance slid."""
    mu_s, mu_d, v0 = 0.5, 0.4, 0.05
    sim = ground_sim(Material(mu_s, mu_d, 0.0))
    model = sim.model
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.array([v0, 0, 0, 0, 0, 0.0]))
    push = np.array([-0.6 * mu_s * BOX_MASS * G, 0.0, 0.0])  # against the slip, through the COM
    xs, vs, friction_work = [0.0], [v0], []
    for _ in range(200):
        q, v = sim.q, sim.v
        J = point_jacobian(model, q, 0, q[:3])
        r = sim.step(external_force=J[:3].T @ push)
        kinetic = 0.5 * BOX_MASS * (r.v[:3] @ r.v[:3]) - 0.5 * BOX_MASS * (v[:3] @ v[:3])
        friction_work.append(kinetic - push @ (r.q[:3] - q[:3]))  # ΔT less the push's work
        xs.append(r.q[0])
        vs.append(r.v[0])
    stop = next(i for i, vx in enumerate(vs) if abs(vx) < 1e-9)  # the first step ending at rest
    decel = (mu_d + 0.6 * mu_s) * G
    assert stop == pytest.approx(v0 / decel / sim.config.dt, abs=1.5)  # the closed-form stop
    assert min(vs[:stop]) > 0.0  # slipping forward until then, never reversed
    # and held from there on: the anchor is the pose at the stopping step's start, v dt / 2
    # behind, and the drift correction of Eq. 20b takes the box back to it at < 1 % of v0
    assert np.all(np.abs(vs[stop:]) < 0.01 * v0)
    assert abs(xs[-1] - xs[stop]) < v0 * sim.config.dt
    assert max(friction_work[: stop - 1]) < 0.0  # opposing the slip
    # Coulomb's work over the slide (the stopping step's force is held over the whole step)
    assert sum(friction_work[:stop]) == pytest.approx(-mu_d * BOX_MASS * G * xs[stop], rel=0.01)
    (c,) = r.contacts
    assert c.sticking
    assert abs(xs[-1] - xs[-100]) < 1e-12  # no creep against the push


@pytest.mark.parametrize("v0, push_g", [(0.005, 0.3), (0.004, 0.4), (0.006, 0.45)])
def test_friction_never_pushes_a_new_contact_along_its_slide(v0, push_g):
    """A box set down on the ground sliding at v0 (a new contact: sticking, its target Eq.
    20b's -kd v_t) against a push that decelerates it faster than that target but within
    static friction. Held sticking, its friction would push it along the slide and do positive
    work; it slides instead, its friction against the sliding, and stops by the step's end
    where friction and push stop it within the step, held there by static friction. (The push
    alone does not reverse it within a step: that case, friction holding a stopped body
    against a push through the rest of the step, is the slide test above.)"""
    mu_s, mu_d = 0.5, 0.4
    sim = ground_sim(Material(mu_s, mu_d, 0.0))
    model = sim.model
    sim.set_state(np.array([0, 0, HALF_Z, 0, 0, 0, 1.0]), np.array([v0, 0, 0, 0, 0, 0.0]))
    push = np.array([-push_g * G * BOX_MASS, 0.0, 0.0])  # against the slide, through the COM
    assert sim.gains.kd * v0 < push_g * G < mu_s * G  # faster than the sticking target, held once stopped
    assert push_g * G * sim.config.dt < v0
    stopped = False
    for _ in range(20):
        q, v = sim.q, sim.v
        J = point_jacobian(model, q, 0, q[:3])
        r = sim.step(external_force=J[:3].T @ push)
        kinetic = 0.5 * BOX_MASS * (r.v[:3] @ r.v[:3]) - 0.5 * BOX_MASS * (v[:3] @ v[:3])
        friction_work = kinetic - push @ (r.q[:3] - q[:3])  # ΔT less the push's work
        assert friction_work <= 1e-12, friction_work
        stopped |= abs(r.v[0]) < 1e-9
        assert r.v[0] >= -1e-9 or stopped  # not sent back before it stops
    assert stopped and r.contacts[0].sticking and abs(r.v[0]) < 0.01 * v0  # held against the push
