"""Where a campaign's runs execute: serially in this process, or as Ray tasks on every local
core or on an existing Ray cluster. Ray does the distribution; this module only submits one
task per run, collects the rows as they finish, shows a progress bar with an ETA (tqdm) and
hands every row to a callback (the results table).

On a cluster, every node needs humanoid_sim and its dependencies importable by Ray's workers
(the same install as the driver's). Nodes that share the file system (a loopback cluster, a
shared home) run exactly the driver's copy: each task puts the driver's humanoid_sim folder
first on its worker's path before it imports anything of humanoid_sim (_task_in_drivers_copy).
Ray itself puts the driver's working directory first there: started from a source tree with the
package installed, the workers imported the tree's copy while the driver ran the installed one,
and compiled that copy's kernels, several minutes per worker.
"""

from __future__ import annotations

import os
import pickle
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
        task = ray.remote(num_cpus=1, max_retries=1)(_task_in_drivers_copy(PACKAGE_PARENT))
        campaign_ref = ray.put(pickle.dumps(campaign))
        pending = {task.remote(campaign_ref, pickle.dumps(spec)): spec for spec in runs}
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


def _task_in_drivers_copy(package_parent: str) -> Callable[[bytes, bytes], dict[str, Any]]:
    """The Ray task of one run: run_one of the humanoid_sim in ``package_parent`` (the driver's),
    where that folder exists on the worker's node, else of the node's own install. The task is a
    closure, which Ray's pickler sends by value, and it takes the campaign and the run as pickled
    bytes: nothing of humanoid_sim is imported in the worker before the task has put the driver's
    folder first on sys.path. Raises ImportError when the worker had already imported another copy."""

    def run(campaign_blob: bytes, spec_blob: bytes) -> dict[str, Any]:
        import os
        import pickle
        import sys

        drivers = os.path.join(package_parent, "humanoid_sim")
        shared = os.path.isdir(drivers)
        if shared and sys.path[:1] != [package_parent]:
            sys.path.insert(0, package_parent)
        import humanoid_sim
        from humanoid_sim.campaign.run import run_one as run_here

        if shared and os.path.dirname(os.path.abspath(humanoid_sim.__file__)) != os.path.abspath(drivers):
            raise ImportError(f"this worker runs the humanoid_sim of {os.path.dirname(humanoid_sim.__file__)}, "
                              f"not the driver's {drivers}")
        return run_here(pickle.loads(campaign_blob), pickle.loads(spec_blob))

    return run
