"""Grids and seeded random samples: every combination once, the same draws for the same seed."""

import pytest

from humanoid_sim.campaign.parameter_space import Axis, ParameterSpace, axis_from_yaml
from humanoid_sim.campaign.scenario import ScenarioError


def test_a_grid_runs_every_combination_once_the_last_axis_fastest():
    space = ParameterSpace("grid", (axis_from_yaml("friction", [0.5, 1.0]),
                                    axis_from_yaml("push_force_n", {"linspace": [0, 100, 3]})))
    runs = space.runs({"push_link": "chest"})
    assert len(space) == len(runs) == 6
    assert [r.varied for r in runs[:3]] == [(("friction", 0.5), ("push_force_n", v)) for v in (0.0, 50.0, 100.0)]
    assert {(r.scenario.friction, r.scenario.push_force_n) for r in runs} == {
        (f, p) for f in (0.5, 1.0) for p in (0.0, 50.0, 100.0)}
    assert all(r.scenario.push_link == "chest" for r in runs)
    assert [r.run_id for r in runs] == list(range(6))


def test_random_samples_are_seeded_in_range_and_stable_when_more_are_asked():
    axes = (axis_from_yaml("push_direction_deg", {"uniform": [0, 360]}), axis_from_yaml("terrain", ["", "step"]))
    few = ParameterSpace("random", axes, samples=10, seed=3).runs({})
    many = ParameterSpace("random", axes, samples=40, seed=3).runs({})
    other = ParameterSpace("random", axes, samples=10, seed=4).runs({})
    assert few == many[:10]  # run i is the same whatever the number of samples
    assert [r.varied for r in few] != [r.varied for r in other]
    directions = [r.scenario.push_direction_deg for r in many]
    assert all(0.0 <= d < 360.0 for d in directions) and len(set(directions)) == 40
    assert {r.scenario.terrain for r in many} == {"", "step"}
    assert len({r.seed for r in many}) == 40


def test_the_key_changes_with_the_scenario_and_the_campaign_fingerprint():
    space = ParameterSpace("grid", (axis_from_yaml("friction", [0.5, 1.0]),))
    a, b = space.runs({}, "campaign-a")
    assert a.key != b.key
    assert space.runs({}, "campaign-a")[0].key == a.key
    assert space.runs({}, "campaign-b")[0].key != a.key
    assert space.runs({"latency_s": 0.002}, "campaign-a")[0].key != a.key


def test_an_axis_needs_one_kind_and_a_grid_no_ranges():
    with pytest.raises(ScenarioError, match="exactly one"):
        Axis("friction")
    with pytest.raises(ScenarioError, match="mode random"):
        ParameterSpace("grid", (axis_from_yaml("friction", {"uniform": [0.1, 1.0]}),))
    with pytest.raises(ScenarioError, match="positive integer"):
        axis_from_yaml("friction", {"linspace": [0, 1, 0]})
