"""Dynamics of a model of several trees (a robot and a world's free objects): no inertial
coupling between trees. Agreement with Pinocchio on such models is in
test_dynamics_pinocchio_oracle.py (the world_* cases)."""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_oracle import free_objects, random_state, random_tree_model

from humanoid_sim import dynamics as dyn
from humanoid_sim.world import World, assemble_world_model


@pytest.mark.parametrize("floating_base", [True, False, None], ids=["floating_robot", "welded_robot", "no_robot"])
def test_mass_matrix_has_no_entry_between_trees(floating_base, rng: np.random.Generator) -> None:
    robot = None if floating_base is None else random_tree_model(np.random.default_rng(5), nb=7, floating_base=floating_base)
    model = assemble_world_model(World(objects=free_objects()), robot).model
    tree_of_dof = model.tree_root[dyn.kinematic_tree(model).dof_body]
    across = tree_of_dof[:, None] != tree_of_dof[None, :]
    assert np.any(across)
    for _ in range(3):
        q, _ = random_state(model, rng)
        M = dyn.mass_matrix(model, q)
        assert np.all(M[across] == 0.0)
        for body in model.free_bodies:  # a lone free body's linear block is m I
            if not np.any(model.parent == body):
                vi = int(model.v_index[body])
                np.testing.assert_allclose(M[vi : vi + 3, vi : vi + 3], model.mass[body] * np.eye(3), rtol=1e-12, atol=1e-12)
