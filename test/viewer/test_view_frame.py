"""A ViewFrame holds the visuals' world poses and the step's contact quantities."""

import numpy as np

from humanoid_sim.dynamics.kinematics import center_of_mass, forward_kinematics
from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.viewer import ViewFrameBuilder, load_visuals
from standing_scene import URDF


def test_frame_of_a_step_matches_kinematics_and_contacts(model, standing):
    sim, controller = standing
    for _ in range(20):
        result = sim.step(controller.update(sim.t, sim.q, sim.v))
    visuals = load_visuals(model, URDF)
    frame = ViewFrameBuilder(model, visuals).build(result.t, result.q, result.contacts, result.zmp)
    assert frame.t == result.t
    X = forward_kinematics(model, result.q)
    for visual, position, wxyz in zip(visuals, frame.positions, frame.wxyz):
        X_world = X[visual.body] @ visual.X_body_visual
        np.testing.assert_allclose(position, X_world[:3, 3], atol=1e-6)
        w, x, y, z = wxyz
        np.testing.assert_allclose(quaternion_to_rotation([x, y, z, w]), X_world[:3, :3], atol=1e-6)
    np.testing.assert_allclose(frame.com, center_of_mass(model, result.q), atol=1e-12)
    # both soles stand: their points, forces summing to the weight, p_v inside the support polygon
    assert len(frame.contact_points) == sum(len(c.points) for c in result.contacts) > 0
    np.testing.assert_allclose(frame.forces.sum(axis=0), result.zmp.force, rtol=1e-9, atol=1e-9)
    assert len(frame.p_v) == len(result.contacts)
    np.testing.assert_allclose(frame.zmp, result.zmp.zmp)
    np.testing.assert_allclose(frame.support_polygon, result.zmp.support_polygon)


def test_frame_without_contacts_has_empty_overlays(model):
    visuals = load_visuals(model, URDF)
    q = np.zeros(model.nq)
    q[6] = 1.0
    frame = ViewFrameBuilder(model, visuals).build(0.0, q)
    assert frame.contact_points.shape == frame.forces.shape == frame.p_v.shape == (0, 3)
    assert frame.support_polygon.shape == (0, 2) and np.all(np.isnan(frame.zmp))
