"""The results table: rows kept on disk as they come, one per key, in both formats."""

import math

import pytest

from humanoid_sim.campaign.results import ResultsTable


def row(run_id, key, outcome="ok", margin=0.01):
    return {"run_id": run_id, "key": key, "seed": 7, "push_force_n": 10.0 * run_id, "terrain": "",
            "outcome": outcome, "fell": outcome == "fell", "fall_time_s": float("nan"), "failure_reason": "",
            "min_zmp_margin_m": margin}


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_rows_come_back_sorted_one_per_key_across_appends(tmp_path, fmt):
    table = ResultsTable(tmp_path / "out", fmt)
    assert not table.exists() and table.finished_keys() == set()
    table.append([row(2, "c"), row(0, "a")])
    table.append([row(1, "b", "fell")])
    table.append([row(2, "c", margin=0.5)])  # the same run again: the last row counts
    assert table.finished_keys() == {"a", "b", "c"}
    read = ResultsTable.find(tmp_path / "out").read()
    assert read.column("run_id").to_pylist() == [0, 1, 2]
    assert read.column("outcome").to_pylist() == ["ok", "fell", "ok"]
    assert read.column("min_zmp_margin_m").to_pylist() == [0.01, 0.01, 0.5]
    assert read.column("failure_reason").to_pylist() == ["", "", ""]
    fall = read.column("fall_time_s").to_pylist()[0]
    assert fall is None or math.isnan(fall)


def test_find_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="runs.parquet"):
        ResultsTable.find(tmp_path)
    with pytest.raises(ValueError, match="parquet, csv"):
        ResultsTable(tmp_path, "xlsx")
