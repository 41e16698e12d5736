"""The demo runner (python -m humanoid_sim.ros.demo): two node processes over DDS, progress
lines, the walk report at the end, clean shutdown at the end and on SIGINT."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from package_under_test import REPO, python_command, subprocess_env

pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
pytest.importorskip("matplotlib", reason="matplotlib draws the walk report")


def _demo(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        python_command("-m", "humanoid_sim.ros.demo", *args), env=subprocess_env(), cwd=REPO,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs,
    )


def _children_of(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def test_demo_stands_and_writes_the_report(tmp_path):
    report = tmp_path / "walk_report.png"
    demo = _demo("--mode", "stand", "--loop-mode", "lockstep", "--duration", "0.5", "--report", str(report))
    output, _ = demo.communicate(timeout=400)
    assert demo.returncode == 0, output
    assert "t_sim" in output  # progress lines
    assert report.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figures = json.loads(report.with_suffix(".json").read_text())
    assert figures["mode"] == "stand" and "holding controller" in figures["note"]
    assert figures["duration_s"] >= 0.45
    assert figures["steps"] == 0
    assert figures["fell"] is False
    assert figures["distance_m"] < 2e-3
    assert figures["zmp_inside_share"] >= 0.95
    assert figures["real_time_factor"] > 0.0
    assert f"steps {figures['steps']}" in output and "did not fall" in output


def test_demo_stops_its_nodes_and_reports_on_sigint(tmp_path):
    report = tmp_path / "interrupted.png"
    demo = _demo("--mode", "stand", "--loop-mode", "lockstep", "--duration", "60", "--report", str(report))
    lines = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # wait for simulated time to pass (a progress line with t_sim > 0)
        line = demo.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.strip().startswith("t_sim") and float(line.split()[1]) > 0.05:
            break
    nodes = _children_of(demo.pid)
    assert len(nodes) == 2, "".join(lines)
    demo.send_signal(signal.SIGINT)
    output, _ = demo.communicate(timeout=60)
    output = "".join(lines) + output
    assert demo.returncode == 0, output
    assert "interrupted by SIGINT" in output
    assert report.is_file() and report.with_suffix(".json").is_file()
    for pid in nodes:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]


class _QueuedSamples:
    """An executor whose every spin records the next queued sample (sim time [s])."""

    def __init__(self, recorder, times) -> None:
        self.recorder, self.times, self.spins = recorder, list(times), 0

    def spin_once(self, timeout_sec: float) -> None:
        self.spins += 1
        if self.times:
            self.recorder.rows["t"].append(self.times.pop(0))


def test_the_samples_queued_behind_the_states_are_recorded_before_the_run_ends():
    """The states reached the run's end with samples still queued (a loaded machine): the demo
    records them up to the end, one sample period short at most, and stops there; it gives up
    at the deadline or on an interrupt."""
    from humanoid_sim.model import load_urdf
    from humanoid_sim.ros.demo import FOOT_LINKS, SAMPLE_RATE_HZ, WalkRecorder, drain_samples

    recorder = WalkRecorder(load_urdf(REPO / "urdf" / "humanoid.urdf"), FOOT_LINKS)
    assert recorder.last_sample_time() == -float("inf")
    period = 1.0 / SAMPLE_RATE_HZ
    recorder.rows["t"].extend([0.0, 0.01, 0.41])
    queued = _QueuedSamples(recorder, [0.42 + period * i for i in range(20)])
    drain_samples(queued, recorder, 0.5, time.monotonic() + 60.0, [])
    assert 0.5 - period <= recorder.last_sample_time() < 0.5  # 0.49: the samples of the run, no more
    assert queued.spins == 8 and len(queued.times) == 12
    stalled = _QueuedSamples(recorder, [])
    drain_samples(stalled, recorder, 1.0, time.monotonic() + 0.2, [])  # nothing comes: the deadline ends it
    assert stalled.spins >= 1 and recorder.last_sample_time() < 0.5
    interrupted = _QueuedSamples(recorder, [0.6])
    drain_samples(interrupted, recorder, 1.0, time.monotonic() + 60.0, ["SIGINT"])
    assert interrupted.spins == 0
