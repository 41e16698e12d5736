"""A 20-run campaign on a Ray cluster of two nodes on this machine (a head and a worker node,
one CPU each, each its own raylet and object store) gives, row for row, what the serial run
gives: seeded and deterministic.

The nodes publish the machine's own address, as ``ray start`` does by default: ray.init
replaces 127.0.0.1 in a cluster address with that address, so nodes bound to 127.0.0.1 only
(``--node-ip-address 127.0.0.1``) cannot be joined on a machine that has another interface."""

import math
from pathlib import Path

import pytest

from conftest import make_campaign
from humanoid_sim.campaign.executor import ExecutorConfig, execute
from humanoid_sim.campaign.run import NOT_DETERMINISTIC_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402


@pytest.fixture(scope="module")
def loopback_cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def varied_campaign():
    """20 seeded random runs of the standing robot, 1 s each, every kind of variation."""
    return make_campaign(duration_s=1.0, name="loopback", parameters={"push_start_s": 0.1}, vary={
        "mode": "random", "samples": 20, "parameters": {
            "push_direction_deg": {"uniform": [0, 360]}, "push_force_n": {"uniform": [0, 600]},
            "friction": [0.3, 1.0], "mass_scale": {"uniform": [0.9, 1.1]}, "latency_s": [0.0, 0.004],
            "sensor_noise_q": [0.0, 0.001], "joint_damping": {"uniform": [0, 3]}, "controller.kp": [700.0, 1000.0],
        }})


def assert_same_row(row, other, what):
    """Equal columns and values (NaN equals NaN)."""
    assert row.keys() == other.keys()
    for name, value in row.items():
        nan_both = isinstance(value, float) and math.isnan(value) and math.isnan(other[name])
        assert value == other[name] or nan_both, f"{what}, {name}: {value!r} != {other[name]!r}"


def rows_of(campaign, config):
    rows = []
    execute(campaign, campaign.runs(), rows.append, config)
    return {r["run_id"]: {k: v for k, v in r.items() if k not in NOT_DETERMINISTIC_COLUMNS} for r in rows}


def test_every_row_on_a_two_node_loopback_cluster_equals_the_serial_run(loopback_cluster, tmp_path, monkeypatch):
    """Run from a folder that holds another humanoid_sim (a decoy that cannot be imported), as a
    source tree beside an installed copy: Ray puts the driver's working directory first on its
    workers' path, and the workers still run the driver's copy (the executor's module docstring)."""
    decoy = tmp_path / "humanoid_sim"
    decoy.mkdir()
    (decoy / "__init__.py").write_text('raise ImportError("the decoy humanoid_sim of the working directory")\n')
    campaign = varied_campaign()
    serial = rows_of(campaign, ExecutorConfig(backend="serial", progress=False))
    monkeypatch.chdir(tmp_path)
    clustered = rows_of(campaign, ExecutorConfig(backend="ray", address=loopback_cluster.address, progress=False))
    assert sorted(serial) == sorted(clustered) == list(range(20))
    outcomes = {row["outcome"] for row in serial.values()}
    assert "ok" in outcomes and "fell" in outcomes  # the campaign exercises both ends
    for run_id, row in serial.items():
        assert_same_row(row, clustered[run_id], f"run {run_id}")
    assert len(loopback_cluster.list_all_nodes()) == 2
    assert not ray.is_initialized()  # the executor disconnected from the cluster it joined


def test_the_command_line_on_two_local_ray_workers_gives_the_serial_rows(tmp_path):
    from humanoid_sim.campaign.cli import main
    from humanoid_sim.campaign.results import ResultsTable

    grid = ROOT / "examples" / "campaigns" / "stand_push_grid.yaml"
    tables = {}
    for how in (["--serial"], ["--workers", "2"]):
        out = tmp_path / how[0].strip("-")
        assert main(["campaign", "run", str(grid), *how, "--limit", "6", "--output", str(out), "--no-progress"]) == 0
        tables[how[0]] = ResultsTable.find(out).read().drop_columns(list(NOT_DETERMINISTIC_COLUMNS)).to_pylist()
    assert len(tables["--serial"]) == len(tables["--workers"]) == 6
    for row, other in zip(tables["--serial"], tables["--workers"]):
        assert_same_row(row, other, f"run {row['run_id']}")
