"""PNG figures of the bench scripts: matplotlib without a display, and saving with a note."""

from __future__ import annotations

from pathlib import Path

__all__ = ["pyplot", "save"]


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> None:
    """Lay out ``fig``, write it to ``path`` (folders made) at 110 dpi and say so."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"\nwrote {path}")
