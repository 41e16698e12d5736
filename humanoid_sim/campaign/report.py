"""The campaign report: fall statistics of a results table as a PNG and an HTML page.

Panels: the fall probability over push direction and push impulse (a polar map: angle =
direction of the push in the world, radius = impulse [N s]), when pushes were varied; the
fall rate against each varied parameter (numbers in up to 8 bins, names per value); the
outcomes. The varied parameters are the scenario columns that take more than one value.
Fall probability: share of the runs that fell among those that ended ok or fell (runs
ended by an error count apart, listed by reason in the HTML page).
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from humanoid_sim.campaign.scenario import CONTROLLER_PREFIX, SCENARIO_PARAMETERS

__all__ = ["ReportFiles", "fall_rate_by", "varied_columns", "write_report"]

MAX_BINS = 8
POLAR_SECTORS = 12


class ReportFiles(NamedTuple):
    png: Path
    html: Path


def varied_columns(table: pa.Table) -> list[str]:
    """Scenario columns (parameters and controller.<name>) with more than one distinct value."""
    names = [c for c in table.column_names if c in SCENARIO_PARAMETERS or c.startswith(CONTROLLER_PREFIX)]
    return [c for c in names if len(set(table.column(c).to_pylist())) > 1]


def fall_rate_by(values: list, fell: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(labels, fall rate per group, runs per group): numbers in up to MAX_BINS equal bins,
    anything else per distinct value."""
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if numeric and len(set(values)) > MAX_BINS:
        x = np.asarray(values, dtype=float)
        edges = np.linspace(np.nanmin(x), np.nanmax(x), MAX_BINS + 1)
        index = np.clip(np.digitize(x, edges[1:-1]), 0, MAX_BINS - 1)
        labels = [f"{0.5 * (a + b):.3g}" for a, b in zip(edges[:-1], edges[1:])]
        groups = list(range(MAX_BINS))
    else:
        groups = sorted(set(values), key=lambda v: (str(type(v)), v))
        position = {g: i for i, g in enumerate(groups)}
        index = np.array([position[v] for v in values])
        labels = [f"{g:.3g}" if isinstance(g, float) else str(g) for g in groups]
    counts = np.bincount(index, minlength=len(groups)).astype(float)
    falls = np.bincount(index, weights=fell.astype(float), minlength=len(groups))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(counts > 0, falls / np.maximum(counts, 1), np.nan)
    return labels, rate, counts


def _polar(ax, table: pa.Table, fell: np.ndarray) -> None:
    direction = np.radians(np.asarray(table.column("push_direction_deg").to_pylist(), dtype=float)) % (2 * math.pi)
    impulse = np.asarray(table.column("push_impulse_ns").to_pylist(), dtype=float)
    unique_dir = np.unique(direction)
    if len(unique_dir) <= 16:  # a grid of directions: one sector around each
        step = 2 * math.pi / len(unique_dir) if len(unique_dir) > 1 else 2 * math.pi
        centres = unique_dir
        dir_index = np.searchsorted(unique_dir, direction)
        theta_edges = [(c - step / 2, c + step / 2) for c in centres]
    else:
        step = 2 * math.pi / POLAR_SECTORS
        dir_index = np.minimum((direction / step).astype(int), POLAR_SECTORS - 1)
        theta_edges = [(i * step, (i + 1) * step) for i in range(POLAR_SECTORS)]
    unique_imp = np.unique(impulse)
    if len(unique_imp) <= MAX_BINS:
        r_centres = unique_imp
        imp_index = np.searchsorted(unique_imp, impulse)
        half = np.diff(unique_imp).min() / 2 if len(unique_imp) > 1 else max(unique_imp[0], 1.0) / 2
        r_edges = [(max(c - half, 0.0), c + half) for c in r_centres]
    else:
        edges = np.linspace(impulse.min(), impulse.max(), MAX_BINS + 1)
        imp_index = np.clip(np.digitize(impulse, edges[1:-1]), 0, MAX_BINS - 1)
        r_edges = list(zip(edges[:-1], edges[1:]))
    import matplotlib
    import matplotlib.cm as cm

    cmap = matplotlib.colormaps["RdYlGn_r"]
    for i, (t0, t1) in enumerate(theta_edges):
        for j, (r0, r1) in enumerate(r_edges):
            mask = (dir_index == i) & (imp_index == j)
            if not mask.any():
                continue
            ax.bar(0.5 * (t0 + t1), r1 - r0, width=t1 - t0, bottom=r0, color=cmap(float(fell[mask].mean())),
                   edgecolor="white", linewidth=0.3)
    ax.set_theta_zero_location("E")
    ax.set_title("fall probability by push direction (angle, world: 0 = +x forward, 90 = +y left)\n"
                 "and impulse (radius) [N s]", fontsize=9)
    sm = cm.ScalarMappable(cmap=cmap)
    sm.set_clim(0.0, 1.0)
    ax.figure.colorbar(sm, ax=ax, shrink=0.6, label="fall probability")


def write_report(table: pa.Table, directory: str | Path, title: str = "campaign") -> ReportFiles:
    """Write report.png and report.html of the results `table` into `directory`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    outcomes = table.column("outcome").to_pylist()
    judged = np.array([o in ("ok", "fell") for o in outcomes])
    sub = table.filter(pa.array(judged)) if table.num_rows else table
    fell = np.array([o == "fell" for o in sub.column("outcome").to_pylist()]) if sub.num_rows else np.zeros(0, bool)
    varied = varied_columns(table)
    polar = sub.num_rows > 0 and "push_direction_deg" in table.column_names and (
        "push_direction_deg" in varied) and float(np.nanmax(sub.column("push_impulse_ns").to_pylist() or [0])) > 0
    cols = 3
    rows = 1 + math.ceil(len(varied) / cols)
    fig = plt.figure(figsize=(5 * cols, 4.2 * rows))
    fig.suptitle(f"{title}: {table.num_rows} runs, fall probability {fell.mean() if fell.size else float('nan'):.1%}"
                 f" ({int(fell.sum())} of {fell.size})", fontsize=12)
    if polar:
        _polar(fig.add_subplot(rows, cols, 1, projection="polar"), sub, fell)
    slot = cols + 1
    rates: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = {}
    for name in varied:
        labels, rate, counts = fall_rate_by(sub.column(name).to_pylist(), fell)
        rates[name] = (labels, rate, counts)
        ax = fig.add_subplot(rows, cols, slot)
        slot += 1
        ax.bar(range(len(labels)), np.nan_to_num(rate), color="tab:red", alpha=0.8)
        ax.set_xticks(range(len(labels)), labels, rotation=45 if len(labels) > 5 else 0, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_xlabel(name)
        ax.set_ylabel("fall rate")
        for i, n in enumerate(counts):
            ax.text(i, 0.02, f"n={int(n)}", ha="center", fontsize=6)
    ax = fig.add_subplot(rows, cols, 2)
    count = Counter(outcomes)
    ax.bar(list(count), list(count.values()), color="tab:blue")
    ax.set_title("outcomes")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    png = directory / "report.png"
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    png.write_bytes(buffer.getvalue())
    page = directory / "report.html"
    page.write_text(_html(table, title, varied, rates, count, buffer.getvalue()), encoding="utf-8")
    return ReportFiles(png, page)


def _html(table: pa.Table, title: str, varied: list[str], rates, count: Counter, png: bytes) -> str:
    esc = html.escape
    wall = [w for w in table.column("wall_time_s").to_pylist() if w is not None and w == w] if table.num_rows else []
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style></head><body>",
             f"<h1>{esc(title)}</h1>",
             f"<p>{table.num_rows} runs; outcomes: {esc(', '.join(f'{k} {v}' for k, v in count.most_common()))}; "
             f"run time {sum(wall):.0f} s of CPU in all, {np.mean(wall) if wall else float('nan'):.2f} s per run.</p>",
             f"<img alt='report' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"]
    for name in varied:
        labels, rate, counts = rates[name]
        parts.append(f"<h2>fall rate by {esc(name)}</h2><table><tr><th>{esc(name)}</th><th>runs</th>"
                     "<th>fall rate</th></tr>")
        parts += [f"<tr><td>{esc(lab)}</td><td>{int(n)}</td><td>{r:.1%}</td></tr>" for lab, r, n in zip(labels, rate, counts)]
        parts.append("</table>")
    reasons = Counter(r.split(" at t =")[0] for r in table.column("failure_reason").to_pylist() if r) if table.num_rows else {}
    if reasons:
        parts.append("<h2>failure reasons</h2><table><tr><th>reason</th><th>runs</th></tr>")
        parts += [f"<tr><td style='text-align:left'>{esc(r)}</td><td>{n}</td></tr>" for r, n in reasons.most_common(20)]
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)
