"""Guards: a point of the contact band that is not in a contact (above the surface and not
arriving at its velocity, or moving out of it) ends the step no deeper than the surface or
than it starts, however hard the step's accelerations drive it (step_kernel._build_contacts).
Without them a limb turned round within one step by full-effort torques ended it 0.5-2 mm
inside the ground."""

from __future__ import annotations

import numpy as np
import pytest
from contact_scenes import BOX_MASS, BOX_SIZE, G, box_q, ground_sim

from humanoid_sim.contact.environment import Material, rpy_to_rotation
from humanoid_sim.dynamics.spatial import quaternion_to_rotation

MATERIAL = Material(0.8, 0.6, 0.0)
CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * np.array(BOX_SIZE) / 2
R_TILT = rpy_to_rotation([0.3, 0.2, 0.0])  # one corner lowest


def corner_heights(q: np.ndarray) -> np.ndarray:
    """World z of the box's eight corners [m] at configuration q."""
    return q[2] + CORNERS @ quaternion_to_rotation(q[3:7]).T[:, 2]


def tilted_box(height: float, v_z: float = 0.0):
    """The tilted box with its lowest corner ``height`` [m] above the ground, moving up at v_z [m/s] (world)."""
    sim = ground_sim(MATERIAL)
    q = box_q([0.0, 0.0, 0.0], R_TILT)
    q[2] = height - corner_heights(q).min()
    v = np.zeros(6)  # the free joint's linear velocity is in the body's axes
    v[:3] = R_TILT.T @ np.array([0.0, 0.0, v_z])
    sim.set_state(q, v)
    return sim


def push_down(acceleration: float) -> dict:
    """A downward force at the box's centre that accelerates it at ``acceleration`` [m/s^2] (gravity included)."""
    return {"box": [0.0, 0.0, -BOX_MASS * (acceleration - G), 0.0, 0.0, 0.0]}


def test_a_point_above_the_ground_pushed_through_it_within_one_step_ends_at_the_surface() -> None:
    # 2 mm above, at rest, pushed down at 8000 m/s^2: unguarded it would end 2 mm deep
    sim = tilted_box(2e-3)
    dt = sim.config.dt
    assert 2e-3 - 0.5 * 8000.0 * dt**2 == pytest.approx(-2e-3)
    r = sim.step(None, link_wrenches=push_down(8000.0))
    assert r.validated or r.solver == "bounded"
    assert corner_heights(r.q).min() >= -2e-5
    # the guard pushed, and only up
    assert any(c.link == "box" for c in r.contacts)
    assert sum(c.wrench_world[2] for c in r.contacts) > 0.0


def test_a_point_rising_out_of_the_ground_turned_round_within_one_step_ends_no_deeper() -> None:
    # 0.1 mm deep, rising at 0.3 m/s (dropped as separating), pushed down at 2000 m/s^2:
    # unguarded it would end -0.1 + 0.3 - 1.0 = -0.8 mm
    sim = tilted_box(-1e-4, v_z=0.3)
    start = corner_heights(sim.q).min()
    r = sim.step(None, link_wrenches=push_down(2000.0))
    assert corner_heights(r.q).min() >= start - 2e-5


def test_a_guard_takes_no_part_when_the_step_keeps_its_point_above_the_ground() -> None:
    # 3 mm above, at rest, under gravity alone: the box falls freely (½ g dt² = 5 µm)
    sim = tilted_box(3e-3)
    q0 = sim.q.copy()
    r = sim.step(None)
    assert r.contacts == ()
    assert r.q[2] == pytest.approx(q0[2] - 0.5 * G * sim.config.dt**2, abs=1e-12)
    np.testing.assert_allclose(r.q[3:7], q0[3:7], atol=1e-15)


def test_a_point_arriving_at_the_surface_by_the_steps_end_is_not_pushed_through_it() -> None:
    # 1 mm above, falling at 1 m/s: at its velocity it arrives just at the step's end (no
    # impulse); a push of 500 m/s^2 would take it 0.25 mm through
    sim = tilted_box(1e-3, v_z=-1.0)
    r = sim.step(None, link_wrenches=push_down(500.0))
    assert corner_heights(r.q).min() >= -2e-5


@pytest.mark.parametrize("acceleration", [500.0, 1000.0, 2000.0, 3000.0, 5000.0, 8000.0])
def test_a_box_pushed_onto_the_ground_lands_on_it_and_stays_out_of_it(acceleration: float) -> None:
    # pushed from 2 mm above at 50-800 g: the corner lands, the box tips onto its face about
    # it (the other corners arriving at metres per second) and is held there. Before the
    # guards the corners ended 0.25 mm (50 g), 0.74 mm (200 g) and 1.3 mm (500 g) deep.
    sim = tilted_box(2e-3)
    push = push_down(acceleration)
    deepest = 0.0
    for _ in range(300):
        r = sim.step(None, link_wrenches=push)
        assert np.all(np.isfinite(r.q))
        deepest = min(deepest, corner_heights(r.q).min())
    assert deepest > -1e-4
    # at rest on its face under the push: Σf_z = m (a - g) + m g
    assert sum(c.wrench_world[2] for c in r.contacts) == pytest.approx(BOX_MASS * acceleration, rel=1e-6)
