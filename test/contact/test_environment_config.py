"""Environment description: the bundled YAML loads; bad input gives one clear error."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import (
    EnvironmentConfigError,
    Material,
    environment_from_dict,
    load_environment,
    rpy_to_rotation,
)

REPO = Path(__file__).resolve().parents[2]


def test_bundled_environment_loads_with_steps_platform_and_slope():
    env = load_environment(REPO / "config" / "environment.yaml")
    assert env.ground is not None and env.ground.height == 0.0
    names = env.element_names()
    assert names[0] == "ground"
    assert {"step_1", "platform", "slope"} <= set(names)
    slope = next(b for b in env.boxes if b.name == "slope")
    assert np.degrees(slope.rpy[1]) == pytest.approx(-10.0)
    assert slope.material.mu_s == 0.9


def test_rpy_matches_urdf_convention():
    r, p, y = 0.1, -0.4, 0.7
    Rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    Ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    Rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    assert np.allclose(rpy_to_rotation([r, p, y]), Rz @ Ry @ Rx)


@pytest.mark.parametrize(
    "data, fragment",
    [
        ({"ground": {"height_m": 0.0, "material": {"mu_s": 0.5, "mu_d": 0.8}}}, "mu_d = 0.8 exceeds mu_s"),
        ({"ground": {"height_m": 0.0, "material": {"restitution": 1.5}}}, "restitution"),
        ({"ground": {"height_m": 0.0, "material": {"mu": 0.5}}}, "unknown keys ['mu']"),
        ({"ground": {"heigth_m": 0.0}}, "unknown keys ['heigth_m']"),
        ({"boxes": [{"name": "b", "size_m": [1, 1, -1]}]}, "box 'b': size"),
        ({"boxes": [{"name": "b", "size_m": [1, 1]}]}, "box 'b': size must be 3"),
        ({"boxes": [{"name": "b"}]}, "box 'b': missing size_m"),
        ({"boxes": [{"name": "b", "size_m": [1, 1, 1]}, {"name": "b", "size_m": [1, 1, 1]}]}, "duplicate element names ['b']"),
        ({"boxes": [{"size_m": [1, 1, 1]}]}, "boxes[0]"),
        ({"boxes": [{"name": "b", "size_m": [1, 1, 1], "rpy_rad": [0, 0, 0], "rpy_deg": [0, 0, 0]}]}, "not both"),
        ({"walls": []}, "unknown keys ['walls']"),
    ],
)
def test_bad_environment_names_the_element(data, fragment):
    with pytest.raises(EnvironmentConfigError) as err:
        environment_from_dict(data)
    assert fragment in str(err.value)


def test_material_rejects_negative_friction():
    with pytest.raises(EnvironmentConfigError, match="mu_s"):
        Material(mu_s=-0.1, mu_d=0.0)


def test_bad_yaml_file_names_the_file(tmp_path):
    p = tmp_path / "env.yaml"
    p.write_text("ground: {height_m: [1, 2]}\n")
    with pytest.raises(EnvironmentConfigError) as err:
        load_environment(p)
    assert "env.yaml" in str(err.value) and "ground.height_m" in str(err.value)
