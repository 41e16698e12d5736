"""``humanoid_sim campaign run FILE`` and ``humanoid_sim campaign report DIR`` (console script).

    humanoid_sim campaign run examples/campaigns/stand_push_grid.yaml            # every local core (Ray)
    humanoid_sim campaign run FILE --workers 2 --output results/push            # 2 local workers
    humanoid_sim campaign run FILE --address 10.0.0.5:6379                       # an existing Ray cluster
    humanoid_sim campaign run FILE --serial --limit 50                           # in this process, 50 runs
    humanoid_sim campaign report results/push                                    # report.png + report.html

A run writes its table to --output (default campaign_results/<campaign name>/): finished
runs are flushed every few seconds, and running the same command again skips them
(resume). Exit code 0 when every run produced a row (falls included: they are results),
2 for a bad campaign file or arguments, 130 when interrupted (finished rows are kept).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from humanoid_sim.campaign.campaign_file import CampaignFileError, load_campaign
from humanoid_sim.campaign.executor import ExecutorConfig, execute
from humanoid_sim.campaign.report import write_report
from humanoid_sim.campaign.results import FORMATS, ResultsTable
from humanoid_sim.campaign.run import check_campaign

__all__ = ["main", "run_campaign"]

FLUSH_ROWS = 50
FLUSH_SECONDS = 10.0
DEFAULT_ROOT = Path("campaign_results")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="humanoid_sim", description="humanoid_sim command line")
    top = parser.add_subparsers(dest="command", required=True)
    campaign = top.add_parser("campaign", help="scenario campaigns: run one, report on one")
    sub = campaign.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a campaign file (resumes a started one)")
    run.add_argument("file", type=Path, help="campaign YAML (see humanoid_sim/campaign/campaign_file.py)")
    run.add_argument("--output", type=Path, default=None,
                     help="results folder (default campaign_results/<campaign name>)")
    run.add_argument("--format", choices=FORMATS, default=None,
                     help="results table format (default: the existing table's, else parquet)")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--serial", action="store_true", help="run in this process, one run after the other (no Ray)")
    where.add_argument("--address", default=None,
                       help="an existing Ray cluster (HOST:PORT, ray://HOST:PORT or auto); default: a local Ray")
    run.add_argument("--workers", type=int, default=None, help="local Ray workers (default: every core)")
    run.add_argument("--limit", type=int, default=None, help="only the first N runs of the campaign")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--report", action="store_true", help="write the report when done")
    report = sub.add_parser("report", help="write report.png and report.html of a campaign's results")
    report.add_argument("results", type=Path, help="results folder, or the campaign file (its default folder)")
    report.add_argument("--output", type=Path, default=None, help="where to write (default: the results folder)")
    return parser


def run_campaign(file: Path, output: Path | None = None, fmt: str | None = None,
                 executor: ExecutorConfig = ExecutorConfig(), limit: int | None = None) -> ResultsTable:
    """Run (or resume) a campaign file; returns its results table. Raises CampaignFileError."""
    campaign = load_campaign(file)
    directory = output or DEFAULT_ROOT / campaign.name
    try:
        table = ResultsTable.find(directory) if fmt is None else ResultsTable(directory, fmt)
    except FileNotFoundError:
        table = ResultsTable(directory, "parquet")
    runs = campaign.runs()
    if limit is not None:
        runs = runs[:limit]
    done = table.finished_keys()
    todo = [r for r in runs if r.key not in done]
    print(f"campaign {campaign.name}: {len(runs)} runs, {len(runs) - len(todo)} already in {table.path}, "
          f"{len(todo)} to run", file=sys.stderr, flush=True)
    if not todo:
        return table
    check_campaign(campaign)
    buffer: list[dict[str, Any]] = []
    last_flush = [time.monotonic()]

    def on_row(row: dict[str, Any]) -> None:
        buffer.append(row)
        if len(buffer) >= FLUSH_ROWS or time.monotonic() - last_flush[0] > FLUSH_SECONDS:
            table.append(buffer)
            buffer.clear()
            last_flush[0] = time.monotonic()

    start = time.monotonic()
    try:
        execute(campaign, todo, on_row, executor, already_done=len(runs) - len(todo))
    finally:
        table.append(buffer)
        buffer.clear()
    wall = time.monotonic() - start
    print(f"campaign {campaign.name}: {len(todo)} runs in {wall:.1f} s ({60.0 * len(todo) / wall:.1f} runs/min); "
          f"results in {table.path}", file=sys.stderr, flush=True)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    if options.action == "run":
        if options.workers is not None and options.workers < 1:
            print("humanoid_sim: --workers must be >= 1", file=sys.stderr)
            return 2
        executor = ExecutorConfig(backend="serial" if options.serial else "ray", address=options.address,
                                  workers=options.workers, progress=not options.no_progress)
        try:
            table = run_campaign(options.file, options.output, options.format, executor, options.limit)
        except CampaignFileError as exc:
            print(f"humanoid_sim: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("humanoid_sim: interrupted; finished runs are kept (run again to resume)", file=sys.stderr)
            return 130
        if options.report:
            files = write_report(table.read(), table.directory, table.directory.name)
            print(f"report: {files.png} {files.html}", file=sys.stderr)
        return 0
    results = options.results
    if results.is_file():
        try:
            results = DEFAULT_ROOT / load_campaign(results).name
        except CampaignFileError as exc:
            print(f"humanoid_sim: {exc}", file=sys.stderr)
            return 2
    try:
        table = ResultsTable.find(results)
    except FileNotFoundError as exc:
        print(f"humanoid_sim: {exc}", file=sys.stderr)
        return 2
    files = write_report(table.read(), options.output or results, results.resolve().name)
    print(f"report: {files.png} {files.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
