"""Where the package's data files (urdf/, config/, launch/) are, however it was installed.

Looked up, in this order (the first directory holding the file wins):
  1. the source tree, when this module runs from a checkout (a ``package.xml`` beside the
     package), so edits take effect without reinstalling;
  2. the ament index share directory (``colcon build``, or scripts/setup.sh's venv with
     ``AMENT_PREFIX_PATH`` set);
  3. the copy shipped inside the Python package (``humanoid_sim/share``, written by setup.py's
     build step: found through ``importlib.resources`` after any ``pip install``, wherever
     the package lands: a venv, ``--prefix``, ``--target``, a wheel);
  4. ``<sys.prefix>/share/humanoid_sim`` (setup.py's data_files of a pip install).
A file found nowhere raises ``DataFileNotFoundError`` listing every place searched.
Imports no ROS package (ament_index_python is optional).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from humanoid_sim.errors import DataFileNotFoundError

__all__ = ["PACKAGE", "ament_share_directory", "package_file", "share_directories"]

PACKAGE = "humanoid_sim"
SOURCE_ROOT = Path(__file__).resolve().parents[1]
# Folder inside the Python package that setup.py fills with the share/ data files.
PACKAGE_DATA_FOLDER = "share"


def ament_share_directory(package: str) -> Path | None:
    """The share directory of ``package`` in the ament index, None when the index (or
    ament_index_python) does not know it."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        return None


def _ament_share() -> Path | None:
    return ament_share_directory(PACKAGE)


def share_directories() -> list[tuple[str, Path]]:
    """(how found, directory) of every candidate share directory, in lookup order."""
    dirs: list[tuple[str, Path]] = []
    if (SOURCE_ROOT / "package.xml").is_file():
        dirs.append(("source tree", SOURCE_ROOT))
    ament = _ament_share()
    if ament is not None:
        dirs.append(("ament index", ament))
    try:
        packaged = resources.files(PACKAGE) / PACKAGE_DATA_FOLDER
        dirs.append(("package data", Path(str(packaged))))
    except (ModuleNotFoundError, TypeError):
        pass
    dirs.append(("pip data files", Path(sys.prefix) / "share" / PACKAGE))
    return dirs


def package_file(relative: str) -> Path:
    """Absolute path of a data file, e.g. ``package_file('config/initial_poses.yaml')``.

    relative: path inside the share directory, '/'-separated. Raises DataFileNotFoundError
    naming every place searched (see the module docstring for the order).
    """
    searched = []
    for how, directory in share_directories():
        path = directory / relative
        if path.is_file():
            return path
        searched.append(f"{path} ({how})")
    raise DataFileNotFoundError(relative, searched)
