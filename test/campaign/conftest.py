"""Campaigns built in code for the campaign tests: the bundled humanoid, short runs."""

from pathlib import Path

import pytest

from humanoid_sim.campaign import campaign_from_dict

ROOT = Path(__file__).resolve().parents[2]


def make_campaign(duration_s: float = 0.6, controller=None, parameters=None, vary=None, name: str = "test",
                  base_dir: Path = ROOT, **top):
    """A campaign of the standing humanoid from the campaign-file mapping (paths from base_dir,
    then the repository root)."""
    data = {"name": name, "duration_s": duration_s, "seed": 5, "robot": {"urdf": "urdf/humanoid.urdf"},
            "controller": controller or {"kind": "stand"}, "parameters": parameters or {}, "vary": vary or {}}
    data.update(top)
    return campaign_from_dict(data, base_dir)


@pytest.fixture
def campaign_factory():
    return make_campaign
