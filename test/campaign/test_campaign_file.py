"""The campaign file: the examples load, and every mistake is one message naming the entry."""

from pathlib import Path

import pytest

from humanoid_sim.campaign import CampaignFileError, load_campaign
from humanoid_sim.campaign.scenario import SCENARIO_PARAMETERS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "campaigns").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_example_campaigns_load(path):
    campaign = load_campaign(path)
    runs = campaign.runs()
    assert len(runs) == len(campaign.space) >= 1
    assert len({r.key for r in runs}) == len(runs)
    assert Path(campaign.robot.urdf).is_file()


def test_the_walking_push_campaign_has_1000_random_runs():
    campaign = load_campaign(ROOT / "examples" / "campaigns" / "walk_push_recovery.yaml")
    assert campaign.space.mode == "random" and len(campaign.runs()) == 1000
    assert campaign.controller.kind == "walk"
    assert set(campaign.varied_names) == {"push_direction_deg", "push_force_n", "push_start_s"}


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, words", [
    ("campaign: {name: a, duration_s: 1, colour: red}", ["colour", "valid keys", "duration_s"]),
    ("campaign: {name: a}", ["missing duration_s"]),
    ("campaign: {name: a, duration_s: 1, robot: {urdf: nowhere.urdf}}", ["nowhere.urdf", "not found"]),
    ("campaign: {name: a, duration_s: 1, controller: {kind: run}}", ["run", "stand, walk, python"]),
    ("campaign: {name: a, duration_s: 1, controller: {kind: python}}", ["controller.class"]),
    ("campaign: {name: a, duration_s: 1, parameters: {push_strength: 3}}", ["push_strength", "push_force_n"]),
    ("campaign: {name: a, duration_s: 1, parameters: {friction: -1}}", ["friction", "> 0"]),
    ("campaign: {name: a, duration_s: 1, vary: {parameters: {mass: [1, 2]}}}", ["mass", "mass_scale"]),
    ("campaign: {name: a, duration_s: 1, vary: {parameters: {mass_scale: {uniform: [0.9, 1.1]}}}}",
     ["uniform", "random"]),
    ("campaign: {name: a, duration_s: 1, vary: {mode: random, samples: 0}}", ["samples"]),
    ("campaign: {name: a, duration_s: 1, vary: {mode: grid, samples: 4}}", ["samples", "random"]),
    ("campaign: {name: a, duration_s: 1, vary: {mode: sobol}}", ["sobol", "grid, random"]),
    ("campaign: {name: a, duration_s: 1, vary: {parameters: {friction: {between: [0, 1]}}}}",
     ["vary.friction", "values, linspace, uniform"]),
    ("campaign: {name: a, duration_s: 1, vary: {parameters: {terrain: [flat, stairs]}}}", ["flat", "terrain"]),
    ("campaign: {name: a, duration_s: 1, world: {terrains: {step: [{name: s}]}}}", ["step", "size_m"]),
    ("campaign: {name: a, duration_s: 1, vary: {parameters: {restitution: [0.5, 2]}}}", ["run 1", "restitution"]),
    ("name: a", ["one key, campaign"]),
])
def test_a_bad_campaign_file_is_one_message_naming_the_entry(tmp_path, body, words):
    with pytest.raises(CampaignFileError) as error:
        load_campaign(write(tmp_path, body)).runs()
    for word in words:
        assert word in str(error.value)
    assert str(tmp_path / "c.yaml") in str(error.value) or "run 1" in str(error.value)


def test_every_scenario_parameter_is_documented_in_the_campaign_module():
    import humanoid_sim.campaign.scenario as scenario

    for name in SCENARIO_PARAMETERS:
        assert f"  {name}:" in scenario.__doc__


def test_relative_paths_resolve_from_the_campaign_file_first(tmp_path):
    (tmp_path / "env.yaml").write_text("ground: {height_m: 0.0}\n")
    campaign = load_campaign(write(tmp_path, "campaign: {name: a, duration_s: 1, world: {environment: env.yaml}}"))
    assert campaign.world.environment == str((tmp_path / "env.yaml").resolve())
