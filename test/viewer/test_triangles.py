"""Unit meshes are closed and outward; visuals are batched by shared mesh."""

import numpy as np
import pytest

from humanoid_sim.viewer.triangles import unit_box, unit_cylinder, unit_sphere, visual_batches
from humanoid_sim.viewer.visuals import VisualShape, load_visuals
from standing_scene import URDF


def signed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Volume enclosed by a triangle mesh; positive when its faces turn outward."""
    a, b, c = (vertices[faces[:, i]].astype(float) for i in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


@pytest.mark.parametrize(
    "mesh, volume, tolerance",
    [(unit_box(), 1.0, 1e-6), (unit_cylinder(), np.pi * 0.25 * 4, 0.02), (unit_sphere(), 4.0 / 3.0 * np.pi, 0.05)],
)
def test_unit_meshes_enclose_their_volume_outward(mesh, volume, tolerance):
    vertices, faces = mesh
    assert vertices.dtype == np.float32 and faces.dtype == np.uint32
    assert signed_volume(vertices, faces) == pytest.approx(volume, rel=tolerance)


def test_bundled_robot_is_three_batches_with_per_axis_scales(model):
    visuals = load_visuals(model, URDF)
    batches = visual_batches(visuals)
    assert len(batches) == 3  # boxes, cylinders, the head sphere
    assert sorted(np.concatenate([b.members for b in batches]).tolist()) == list(range(len(visuals)))
    for batch in batches:
        for member, scale in zip(batch.members, batch.scales):
            visual = visuals[member]
            size = visual.size
            if visual.kind == "box":
                expected = size
            elif visual.kind == "cylinder":
                expected = [size[0], size[0], size[1]]
            else:
                expected = [size[0]] * 3
            np.testing.assert_allclose(scale, expected, rtol=1e-6)
        np.testing.assert_array_equal(batch.colors, np.tile([204, 178, 153], (len(batch.members), 1)))


def test_unreadable_mesh_is_drawn_as_a_small_box_with_a_warning(tmp_path, caplog):
    broken = tmp_path / "broken.stl"
    broken.write_text("not a mesh")
    visual = VisualShape("arm", 0, "mesh", np.eye(4), np.ones(3), broken, np.array([1.0, 0.0, 0.0, 1.0]))
    (batch,) = visual_batches([visual])
    assert len(batch.faces) == 12
    assert "link 'arm'" in caplog.text and "drawn as a box" in caplog.text
