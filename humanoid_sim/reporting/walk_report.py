"""The walk report: figures of a recorded walk and its picture (no ROS; matplotlib Agg).

A ``WalkLog`` holds what a run recorded, sampled at times ``t`` (world frame, z up, SI):
base position, centre of mass, measured ZMP, the support polygon at each sample, the
vertical force under each foot, the footprints (sole rectangles at touch-down) and which
other links touched the ground. ``walk_figures`` computes the headline figures (distance,
steps, ZMP-inside share, real-time factor, fell or not) and ``write_walk_report`` draws

- a top view of the CoM and ZMP paths over the footprints and support polygons, and
- the vertical foot forces over time against the robot's weight m g,

into a PNG, and writes the figures next to it as JSON (same stem, ``.json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from humanoid_sim.balance.zmp import signed_distance_to_polygon

STANDARD_GRAVITY = 9.81  # [m/s^2], for the m g reference line and default thresholds


class Footprint(NamedTuple):
    """One foot placement: ``link`` (foot link name), ``t`` touch-down time [s],
    ``corners`` the sole outline in the world, counter-clockwise, shape (k, 2) [m]."""

    link: str
    t: float
    corners: np.ndarray


def _array(name: str, value: object, shape_tail: tuple[int, ...], n: int | None) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim != 1 + len(shape_tail) or array.shape[1:] != shape_tail:
        raise ValueError(f"WalkLog.{name} must have shape (n{''.join(f', {s}' for s in shape_tail)}), got {array.shape}")
    if n is not None and len(array) != n:
        raise ValueError(f"WalkLog.{name} has {len(array)} samples, t has {n}")
    return array


@dataclass(frozen=True)
class WalkLog:
    """A recorded walk, n samples; validated on construction.

    t: simulation time [s], shape (n,), non-decreasing.
    base_position: base (pelvis) origin in the world [m], shape (n, 3).
    com: centre of mass in the world [m], shape (n, 3).
    zmp: measured ZMP of the ground reaction [m], shape (n, 3); NaN rows where there
        was no vertical ground reaction.
    support_polygons: per sample the support polygon, counter-clockwise, shape (k, 2) [m]
        (k = 0 when nothing touches the ground); length n.
    foot_force_z: foot link name -> vertical ground force on that foot [N], shape (n,) each.
    robot_mass: total mass [kg] (for m g and the default force thresholds).
    wall_time_s: wall-clock time the run took [s] (for the real-time factor); NaN if unknown.
    footprints: sole outlines at touch-down (drawn; not used for the figures).
    planned_zmp: the controller's ZMP reference [m], shape (n, 3), or None.
    non_foot_contacts: names of links other than the feet that touched the ground.
    mode: what was run ("walk", "stand", ...), printed on the picture.
    note: free text printed on the picture (e.g. why a walk was not possible).
    """

    t: np.ndarray
    base_position: np.ndarray
    com: np.ndarray
    zmp: np.ndarray
    support_polygons: tuple[np.ndarray, ...]
    foot_force_z: Mapping[str, np.ndarray]
    robot_mass: float
    wall_time_s: float = float("nan")
    footprints: tuple[Footprint, ...] = ()
    planned_zmp: np.ndarray | None = None
    non_foot_contacts: tuple[str, ...] = ()
    mode: str = "walk"
    note: str = ""

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float).reshape(-1)
        n = len(t)
        if n == 0:
            raise ValueError("WalkLog.t is empty: nothing was recorded")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0.0):
            raise ValueError("WalkLog.t must be finite and non-decreasing")
        set_ = object.__setattr__
        set_(self, "t", t)
        set_(self, "base_position", _array("base_position", self.base_position, (3,), n))
        set_(self, "com", _array("com", self.com, (3,), n))
        set_(self, "zmp", _array("zmp", self.zmp, (3,), n))
        if self.planned_zmp is not None:
            set_(self, "planned_zmp", _array("planned_zmp", self.planned_zmp, (3,), n))
        polygons = tuple(np.asarray(p, dtype=float).reshape(-1, 2) for p in self.support_polygons)
        if len(polygons) != n:
            raise ValueError(f"WalkLog.support_polygons has {len(polygons)} entries, t has {n}")
        set_(self, "support_polygons", polygons)
        forces = {}
        for link, values in self.foot_force_z.items():
            forces[str(link)] = _array(f"foot_force_z[{link!r}]", values, (), n)
        if not forces:
            raise ValueError("WalkLog.foot_force_z names no foot")
        set_(self, "foot_force_z", forces)
        if not (math.isfinite(self.robot_mass) and self.robot_mass > 0.0):
            raise ValueError(f"WalkLog.robot_mass must be finite and > 0, got {self.robot_mass!r}")
        set_(self, "non_foot_contacts", tuple(sorted(set(self.non_foot_contacts))))


class WalkFigures(NamedTuple):
    """Headline figures of a walk.

    duration_s: simulated time covered [s]; distance_m: horizontal displacement of the base
    from the first to the last sample [m]; forward_m: its component along world x [m];
    steps: touch-downs of a foot after it had lifted off; zmp_inside_share: share of samples
    whose ZMP lies inside (or on) the support polygon, samples without ground reaction
    counting as outside, in [0, 1]; real_time_factor: simulated / wall-clock time (NaN if
    unknown); min_base_height_m: lowest base height [m]; fell: the base went below the
    height limit or a link other than the feet touched the ground; fall_reason: why ("" if not).
    """

    duration_s: float
    distance_m: float
    forward_m: float
    steps: int
    zmp_inside_share: float
    real_time_factor: float
    min_base_height_m: float
    fell: bool
    fall_reason: str


def count_steps(force_z: np.ndarray, on_threshold: float, off_threshold: float) -> int:
    """Number of touch-downs of one foot after a lift-off (hysteresis on its vertical force).

    force_z: vertical ground force on the foot over time [N], shape (n,).
    The foot touches down when the force rises above ``on_threshold`` [N] and lifts off
    when it drops below ``off_threshold`` [N] (< on_threshold). Each touch-down that
    follows a lift-off is one step: the first landing (a foot starting on the ground or in
    the air) is not, and chatter between the thresholds is not.
    """
    if not on_threshold > off_threshold:
        raise ValueError(f"on_threshold ({on_threshold}) must exceed off_threshold ({off_threshold})")
    on_ground = False
    landed_before = False
    steps = 0
    for value in np.asarray(force_z, dtype=float).reshape(-1):
        if on_ground and value < off_threshold:
            on_ground = False
        elif not on_ground and value > on_threshold:
            on_ground = True
            steps += int(landed_before)
            landed_before = True
    return steps


def zmp_inside_share(zmp: np.ndarray, polygons: Sequence[np.ndarray], tolerance: float = 1e-6) -> float:
    """Share of samples whose ZMP (n, 3 or 2) is inside its support polygon (k, 2) [m].

    A ZMP within ``tolerance`` [m] outside the boundary counts as inside (numerical
    tolerance: in single support the ZMP may sit on the sole's edge). Samples without a
    ground reaction (NaN ZMP) or without a polygon of at least 3 vertices count as outside.
    """
    zmp = np.asarray(zmp, dtype=float)
    if len(zmp) == 0:
        return float("nan")
    inside = 0
    for point, polygon in zip(zmp, polygons):
        if len(polygon) < 3 or not np.all(np.isfinite(point[:2])):
            continue
        if signed_distance_to_polygon(point[:2], polygon) >= -tolerance:
            inside += 1
    return inside / len(zmp)


def walk_figures(
    log: WalkLog,
    min_base_height: float,
    on_threshold: float | None = None,
    off_threshold: float | None = None,
    zmp_tolerance: float = 1e-6,
) -> WalkFigures:
    """The figures of ``log``.

    min_base_height: the base (pelvis) must stay above this height [m], else the robot fell.
    on_threshold / off_threshold: foot force thresholds of ``count_steps`` [N]; default
    5 % and 1 % of the robot's weight.
    """
    weight = log.robot_mass * STANDARD_GRAVITY
    on = 0.05 * weight if on_threshold is None else on_threshold
    off = 0.01 * weight if off_threshold is None else off_threshold
    steps = sum(count_steps(force, on, off) for force in log.foot_force_z.values())
    displacement = log.base_position[-1, :2] - log.base_position[0, :2]
    duration = float(log.t[-1] - log.t[0])
    rtf = duration / log.wall_time_s if log.wall_time_s > 0.0 else float("nan")
    min_height = float(np.min(log.base_position[:, 2]))
    reasons = []
    if min_height < min_base_height:
        k = int(np.argmin(log.base_position[:, 2] >= min_base_height))
        reasons.append(f"base below {min_base_height:.3f} m at t = {log.t[k]:.2f} s")
    if log.non_foot_contacts:
        reasons.append(f"non-foot contact: {', '.join(log.non_foot_contacts)}")
    return WalkFigures(
        duration_s=duration,
        distance_m=float(np.hypot(*displacement)),
        forward_m=float(displacement[0]),
        steps=int(steps),
        zmp_inside_share=zmp_inside_share(log.zmp, log.support_polygons, zmp_tolerance),
        real_time_factor=float(rtf),
        min_base_height_m=min_height,
        fell=bool(reasons),
        fall_reason="; ".join(reasons),
    )


def figures_text(figures: WalkFigures) -> str:
    """One line of the figures, as the demo prints them."""
    return (
        f"distance {figures.distance_m:.3f} m (forward {figures.forward_m:+.3f} m), "
        f"steps {figures.steps}, ZMP inside {100.0 * figures.zmp_inside_share:.1f} %, "
        f"RTF {figures.real_time_factor:.2f}, "
        + (f"FELL ({figures.fall_reason})" if figures.fell else "did not fall")
        + f", {figures.duration_s:.2f} s simulated"
    )


def _polygon_changes(polygons: Sequence[np.ndarray], tolerance: float = 5e-3) -> list[int]:
    """Indices where the support polygon differs from the last kept one (vertex count or
    a vertex moved more than ``tolerance`` [m]): one outline per support phase."""
    kept: list[int] = []
    last: np.ndarray | None = None
    for k, polygon in enumerate(polygons):
        if len(polygon) < 3:
            continue
        if last is None or len(polygon) != len(last) or np.max(np.abs(polygon - last)) > tolerance:
            kept.append(k)
            last = polygon
    return kept


def write_walk_report(
    log: WalkLog, path: str | Path, min_base_height: float, title: str = "humanoid_sim walk"
) -> WalkFigures:
    """Draw the walk report picture to ``path`` (PNG) and its figures to ``path`` with
    suffix ``.json``; parent folders are created. Returns the figures."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon as PolygonPatch

    figures = walk_figures(log, min_base_height)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    fig, (top, forces) = plt.subplots(2, 1, figsize=(10, 11), gridspec_kw={"height_ratios": [3, 2]})
    fig.suptitle(f"{title} — mode {log.mode}\n{figures_text(figures)}", fontsize=10)

    colors = {}
    palette = ["tab:blue", "tab:red", "tab:green", "tab:purple"]
    for k, link in enumerate(log.foot_force_z):
        colors[link] = palette[k % len(palette)]
    for footprint in log.footprints:
        color = colors.get(footprint.link, "tab:gray")
        top.add_patch(PolygonPatch(footprint.corners, closed=True, facecolor=color, alpha=0.15, edgecolor=color))
    for k in _polygon_changes(log.support_polygons):
        top.add_patch(PolygonPatch(log.support_polygons[k], closed=True, fill=False, edgecolor="0.5", lw=0.6))
    top.plot([], [], color="0.5", lw=0.6, label="support polygons")
    top.plot(log.com[:, 0], log.com[:, 1], color="k", lw=1.5, label="CoM")
    top.plot(log.zmp[:, 0], log.zmp[:, 1], color="tab:orange", lw=0.8, label="ZMP (measured)")
    if log.planned_zmp is not None:
        top.plot(log.planned_zmp[:, 0], log.planned_zmp[:, 1], "--", color="tab:brown", lw=0.8, label="ZMP (planned)")
    top.plot(*log.com[0, :2], "o", color="k", ms=4, label="CoM at start")
    for link, color in colors.items():
        top.plot([], [], color=color, alpha=0.4, lw=6, label=f"footprints {link}")
    top.set_aspect("equal", adjustable="datalim")
    top.set_xlabel("x [m] (world)")
    top.set_ylabel("y [m] (world)")
    top.set_title("top view")
    top.grid(True, lw=0.3)
    top.legend(loc="best", fontsize=8)

    total = np.zeros_like(log.t)
    for link, values in log.foot_force_z.items():
        forces.plot(log.t, values, color=colors[link], lw=1.0, label=f"$f_z$ {link}")
        total = total + np.nan_to_num(values)
    forces.plot(log.t, total, color="k", lw=0.8, label="sum")
    forces.axhline(log.robot_mass * STANDARD_GRAVITY, color="0.4", ls="--", lw=0.8, label="m g")
    # Impacts can be orders of magnitude above m g; keep the scale readable and say so.
    peak = float(np.nanmax(total)) if np.any(np.isfinite(total)) else 0.0
    ceiling = 3.0 * log.robot_mass * STANDARD_GRAVITY
    if peak > ceiling:
        forces.set_ylim(top=ceiling)
        k = int(np.nanargmax(total))
        forces.annotate(f"peak {peak:.0f} N at {log.t[k]:.2f} s (clipped)", (log.t[k], ceiling),
                        xytext=(0, -14), textcoords="offset points", ha="center", fontsize=8)
    forces.set_xlabel("simulation time [s]")
    forces.set_ylabel("vertical foot force [N]")
    forces.set_title("vertical foot forces")
    forces.grid(True, lw=0.3)
    forces.legend(loc="best", fontsize=8)
    if log.note:
        fig.text(0.01, 0.005, log.note, fontsize=8, va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)

    record = {**figures._asdict(), "mode": log.mode, "note": log.note, "robot_mass_kg": log.robot_mass,
              "samples": int(len(log.t)), "picture": str(path)}
    path.with_suffix(".json").write_text(json.dumps(record, indent=2, allow_nan=True) + "\n")
    return figures
