"""Scenario campaigns: many headless runs of a controller under pushes, terrains and model
variations, serially or on Ray (every local core, or a cluster), into a resumable table.

campaign_file (the YAML schema), scenario (one run's parameter values), parameter_space (grid
and seeded samples), run (one run in-process), metrics, executor (serial / Ray), results
(Parquet / CSV), report (PNG + HTML), cli (``humanoid_sim campaign run|report``).
No rclpy here.
"""

from humanoid_sim.campaign.campaign_file import Campaign, CampaignFileError, campaign_from_dict, load_campaign
from humanoid_sim.campaign.metrics import RunMetrics
from humanoid_sim.campaign.parameter_space import ParameterSpace, RunSpec
from humanoid_sim.campaign.run import run_one
from humanoid_sim.campaign.scenario import SCENARIO_PARAMETERS, Scenario, ScenarioError

__all__ = [
    "SCENARIO_PARAMETERS",
    "Campaign",
    "CampaignFileError",
    "ParameterSpace",
    "RunMetrics",
    "RunSpec",
    "Scenario",
    "ScenarioError",
    "campaign_from_dict",
    "load_campaign",
    "run_one",
]
