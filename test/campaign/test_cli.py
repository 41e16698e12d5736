"""``humanoid_sim campaign run`` runs, resumes and reports; a bad file is exit code 2."""

from pathlib import Path

from humanoid_sim.campaign.cli import main
from humanoid_sim.campaign.results import ResultsTable

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "examples" / "campaigns" / "stand_push_grid.yaml"


def test_run_resume_and_report(tmp_path, capsys):
    out = tmp_path / "grid"
    assert main(["campaign", "run", str(GRID), "--serial", "--limit", "3", "--output", str(out), "--no-progress"]) == 0
    first = ResultsTable.find(out).read()
    assert first.column("run_id").to_pylist() == [0, 1, 2]
    capsys.readouterr()
    # Again with two more runs: the three finished ones are kept and skipped.
    assert main(["campaign", "run", str(GRID), "--serial", "--limit", "5", "--output", str(out), "--no-progress"]) == 0
    assert "3 already in" in capsys.readouterr().err
    table = ResultsTable.find(out).read()
    assert table.column("run_id").to_pylist() == [0, 1, 2, 3, 4]
    assert table.column("wall_time_s").to_pylist()[:3] == first.column("wall_time_s").to_pylist()  # not rerun
    assert main(["campaign", "report", str(out)]) == 0
    assert (out / "report.png").stat().st_size > 0 and (out / "report.html").stat().st_size > 0


def test_csv_results(tmp_path):
    out = tmp_path / "csv"
    args = ["campaign", "run", str(GRID), "--serial", "--limit", "2", "--output", str(out), "--format", "csv",
            "--no-progress"]
    assert main(args) == 0
    assert ResultsTable.find(out).format == "csv"
    assert ResultsTable.find(out).read().num_rows == 2


def test_a_bad_campaign_file_is_exit_code_2_with_one_message(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("campaign: {name: x, duration_s: 1, vary: {parameters: {gravity: [1, 2]}}}\n")
    assert main(["campaign", "run", str(bad), "--serial"]) == 2
    err = capsys.readouterr().err
    assert "gravity" in err and "valid parameters" in err and "Traceback" not in err
    assert main(["campaign", "report", str(tmp_path / "nothing")]) == 2
