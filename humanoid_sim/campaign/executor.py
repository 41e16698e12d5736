"""Where a campaign's runs execute: serially in this process, or as Ray tasks on every local
core or on an existing Ray cluster. Ray does the distribution; this module only submits one
task per run, collects the rows as they finish, shows a progress bar with an ETA (tqdm) and
hands every row to a callback (the results table).

On a cluster, every node needs humanoid_sim and its dependencies importable by Ray's workers
(the same install as the driver's). The workers are also given the driver's humanoid_sim
folder on PYTHONPATH: nodes that share the file system (a loopback cluster, a shared home)
then run exactly the driver's code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from tqdm import tqdm

from humanoid_sim.campaign.campaign_file import Campaign
from humanoid_sim.campaign.parameter_space import RunSpec
from humanoid_sim.campaign.run import failed_row, run_one

__all__ = ["ExecutorConfig", "connect_ray", "execute"]

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class ExecutorConfig:
    """backend: "serial" (this process) or "ray"; address: an existing Ray cluster ("auto",
    "HOST:PORT" or "ray://HOST:PORT"), None to start a local Ray with `workers` CPUs (None:
    every core); progress: show the bar (on stderr)."""

    backend: str = "ray"
    address: str | None = None
    workers: int | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if self.backend not in ("serial", "ray"):
            raise ValueError(f"backend {self.backend!r}; valid backends: serial, ray")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers = {self.workers}: must be >= 1")


def _bar(total: int, initial: int, enabled: bool, what: str) -> tqdm:
    return tqdm(total=total, initial=initial, disable=not enabled, unit="run", desc=what, dynamic_ncols=True,
                smoothing=0.1)


def execute(campaign: Campaign, runs: Sequence[RunSpec], on_row: Callable[[dict[str, Any]], None],
            config: ExecutorConfig = ExecutorConfig(), already_done: int = 0) -> None:
    """Run `runs` and call on_row(row) for each as it finishes (in finishing order).
    already_done: runs finished earlier (the bar starts there)."""
    total = already_done + len(runs)
    if config.backend == "serial":
        with _bar(total, already_done, config.progress, f"{campaign.name} (serial)") as bar:
            for spec in runs:
                row = run_one(campaign, spec)
                on_row(row)
                bar.update(1)
        return
    _execute_ray(campaign, runs, on_row, config, total, already_done)


def connect_ray(config: ExecutorConfig) -> bool:
    """Connect this process to Ray as `config` says (a cluster at config.address, else a new
    local Ray with config.workers CPUs), its workers given the driver's humanoid_sim on
    PYTHONPATH. Returns False when already connected (nothing done), True otherwise."""
    import ray

    if ray.is_initialized():
        return False
    pythonpath = os.pathsep.join(filter(None, [PACKAGE_PARENT, os.environ.get("PYTHONPATH")]))
    kwargs: dict[str, Any] = dict(
        # "local": a new local Ray even when this machine runs a cluster started by `ray start`
        address=config.address or "local",
        runtime_env={"env_vars": {"PYTHONPATH": pythonpath}},
        log_to_driver=False,
        include_dashboard=False,
        logging_level="warning",
    )
    if config.address is None:
        kwargs["num_cpus"] = config.workers or os.cpu_count() or 1
    ray.init(**kwargs)
    return True


def _execute_ray(campaign: Campaign, runs: Sequence[RunSpec], on_row: Callable[[dict[str, Any]], None],
                 config: ExecutorConfig, total: int, already_done: int) -> None:
    import ray

    started_here = connect_ray(config)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        task = ray.remote(num_cpus=1, max_retries=1)(run_one)
        campaign_ref = ray.put(campaign)
        pending = {task.remote(campaign_ref, spec): spec for spec in runs}
        desc = f"{campaign.name} (ray, {cpus} CPU{'s' if cpus != 1 else ''})"
        with _bar(total, already_done, config.progress, desc) as bar:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=min(len(pending), 16), timeout=0.5)
                for ref in done:
                    spec = pending.pop(ref)
                    try:
                        row = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # the worker died (not a run's failure)
                        row = failed_row(spec, "worker_error", f"{type(exc).__name__}: {str(exc)[:500]}")
                    on_row(row)
                    bar.update(1)
    finally:
        if started_here:
            ray.shutdown()
