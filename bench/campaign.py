"""Campaign throughput: runs per minute serially, on 2 local Ray workers and on a 2-node Ray
cluster on this machine (a head and a worker node, one CPU each), and the scaling efficiency
(runs/min on 2 workers / (2 x serial runs/min); the target is >= 90 % on 2 idle cores).

Each mode first runs a warm-up wave (every worker imports humanoid_sim and loads numba's
cache once: seconds, not part of the steady rate), then the timed runs. The campaign is the
standing robot under seeded random pushes (1 s of simulated time per run) unless a campaign
file is given. The machine's load (uptime) is printed beside the figures: on a shared
machine the efficiency says more about the other processes than about Ray.

Each mode's rate is the best of --repeat passes over the same runs.

Usage: python bench/campaign.py [--runs 40] [--repeat 3] [--file CAMPAIGN.yaml] [--modes serial,local,cluster]
(source scripts/env.sh first).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from humanoid_sim.campaign import campaign_from_dict, load_campaign  # noqa: E402
from humanoid_sim.campaign.executor import ExecutorConfig, connect_ray, execute  # noqa: E402

WORKERS = 2


def default_campaign(runs: int):
    return campaign_from_dict({
        "name": "bench", "seed": 11, "duration_s": 1.0, "controller": {"kind": "stand"},
        "parameters": {"push_start_s": 0.2},
        "vary": {"mode": "random", "samples": runs, "parameters": {
            "push_direction_deg": {"uniform": [0, 360]}, "push_force_n": {"uniform": [0, 300]}}},
    }, REPO)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(campaign, runs, config) -> tuple[float, float]:
    """(wall [s], mean run wall time [s]) of `runs` through the executor."""
    rows = []
    start = time.perf_counter()
    execute(campaign, runs, rows.append, config)
    wall = time.perf_counter() - start
    return wall, sum(r["wall_time_s"] for r in rows) / len(rows)


def measure(mode: str, campaign, n: int, repeat: int) -> float:
    """Runs per minute of `mode` (serial, local, cluster) over n runs of the campaign: the best
    of `repeat` passes over the same runs (other processes only ever slow a pass down)."""
    runs = campaign.runs()
    warm, timed_runs = runs[: 2 * WORKERS], runs[2 * WORKERS: 2 * WORKERS + n]
    cluster = None
    if mode == "serial":
        config = ExecutorConfig(backend="serial", progress=False)
    else:
        address = None
        if mode == "cluster":
            from ray.cluster_utils import Cluster

            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            address = cluster.address
        connect_ray(ExecutorConfig(address=address, workers=WORKERS))
        config = ExecutorConfig(backend="ray", progress=False)
    try:
        execute(campaign, warm, lambda row: None, config)
        before = load()
        wall, per_run = min(timed(campaign, timed_runs, config) for _ in range(repeat))
    finally:
        if mode != "serial":
            import ray

            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    rate = 60.0 * len(timed_runs) / wall
    print(f"{mode:8s}: {len(timed_runs)} runs in {wall:6.1f} s (best of {repeat}) = {rate:6.1f} runs/min "
          f"(mean run {per_run:.2f} s) | {before} before, {load()} after", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs per mode (default 40)")
    parser.add_argument("--file", type=Path, default=None, help="a campaign file instead of the standing pushes")
    parser.add_argument("--modes", default="serial,local,cluster", help="comma-separated: serial, local, cluster")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per mode, the best counts (default 3)")
    options = parser.parse_args()
    campaign = load_campaign(options.file) if options.file else default_campaign(options.runs + 2 * WORKERS)
    if len(campaign.runs()) < options.runs + 2 * WORKERS:
        parser.error(f"the campaign has {len(campaign.runs())} runs; --runs {options.runs} needs "
                     f"{options.runs + 2 * WORKERS} (warm-up included)")
    print(f"campaign {campaign.name}: {campaign.duration_s:g} s of simulated time per run; {os.cpu_count()} cores; "
          f"{load()}", flush=True)
    rates = {mode: measure(mode, campaign, options.runs, options.repeat) for mode in options.modes.split(",")}
    for mode in ("local", "cluster"):
        if "serial" in rates and mode in rates:
            print(f"scaling efficiency, {mode} on {WORKERS} workers: "
                  f"{100.0 * rates[mode] / (WORKERS * rates['serial']):.0f} % (target >= 90 % on idle cores)")


if __name__ == "__main__":
    main()
