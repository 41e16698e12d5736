"""The controller of a run: walking parameters (nested by dots) from the file and the run,
and user classes by import path."""

import pytest

from conftest import make_campaign
from humanoid_sim.campaign import CampaignFileError
from humanoid_sim.campaign.controllers import build_controller, import_controller_class
from humanoid_sim.campaign.run import load_model


def test_walking_parameters_from_the_file_and_nested_ones_from_the_run():
    campaign = make_campaign(controller={"kind": "walk", "parameters": {"walk_speed": 0.1}, "control_dt": 0.002},
                             parameters={"controller.com.kp": 150.0, "controller.footsteps.step_width": 0.2})
    model = load_model(campaign.robot.urdf)
    controller, control_dt = build_controller(campaign.controller, model, campaign.runs()[0].scenario)
    config = controller.config
    assert (config.com.kp, config.com.kd, config.footsteps.step_width, config.walk_speed) == (150.0, 20.0, 0.2, 0.1)
    assert control_dt == config.control_dt == 0.002
    assert config.preview_time == 1.6  # the rest from config/walking.yaml


def test_a_user_class_is_imported_by_path_with_a_message_for_each_mistake(tmp_path):
    (tmp_path / "my_controllers.py").write_text("class NoUpdate:\n    def reset(self, q, v, t):\n        pass\n")
    with pytest.raises(CampaignFileError, match="cannot import 'nowhere_module'"):
        import_controller_class("nowhere_module:X")
    with pytest.raises(CampaignFileError, match="has no update"):
        import_controller_class("my_controllers:NoUpdate", str(tmp_path))
    with pytest.raises(CampaignFileError, match="classes there: NoUpdate"):
        import_controller_class("my_controllers.Other", str(tmp_path))
    assert import_controller_class("humanoid_sim.control.holding_controller:HoldingController").__name__ == \
        "HoldingController"
