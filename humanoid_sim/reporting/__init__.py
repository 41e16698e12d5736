"""Reports of simulation runs: figures computed from recorded logs, pictures (matplotlib Agg)."""

from humanoid_sim.reporting.walk_report import (
    Footprint,
    WalkFigures,
    WalkLog,
    count_steps,
    figures_text,
    walk_figures,
    write_walk_report,
    zmp_inside_share,
)

__all__ = [
    "Footprint",
    "WalkFigures",
    "WalkLog",
    "count_steps",
    "figures_text",
    "walk_figures",
    "write_walk_report",
    "zmp_inside_share",
]
