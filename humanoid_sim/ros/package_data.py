"""Where the package's data files (urdf/, config/, launch/) are, installed or from source.

Running from the source tree (``python -m humanoid_sim.ros.sim_node`` with the repository on
PYTHONPATH) uses the files next to the code, so edits take effect without reinstalling;
an installed package (colcon, or scripts/setup.sh's venv) uses
``get_package_share_directory('humanoid_sim')``.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = "humanoid_sim"
SOURCE_ROOT = Path(__file__).resolve().parents[2]


def package_file(relative: str) -> Path:
    """Path of a data file, e.g. ``package_file('urdf/humanoid.urdf')``.

    The source tree's copy when this module runs from a source checkout (a package.xml
    beside the package), else the ament share directory's. Raises FileNotFoundError naming
    the places searched.
    """
    candidates = []
    if (SOURCE_ROOT / "package.xml").is_file():
        candidates.append(SOURCE_ROOT / relative)
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            candidates.append(Path(get_package_share_directory(PACKAGE)) / relative)
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    for path in candidates:
        if path.is_file():
            return path
    searched = ", ".join(str(c) for c in candidates) or "(no source tree, no ament index)"
    raise FileNotFoundError(f"{PACKAGE} data file {relative!r} not found; searched: {searched}")
