"""Which copy of humanoid_sim the suite tests, and how the processes it starts find that copy.

scripts/setup.sh installs the package into the venv and compiles its numba kernels there.
numba keeps a kernel's machine code per source folder path, so the source tree's kernels are a
second compilation (about six minutes on 2 cores). When the installed copy is the source tree,
file for file (the package and the data files it ships), the suite tests the installed copy:
the same code, already compiled. After any edit not yet installed, or without an install, it
tests the source tree. ``conftest.py`` imports this module before any test module, so every
``import humanoid_sim`` of the run resolves to the copy chosen here; the pytest header names it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import os
import sys
from pathlib import Path

__all__ = ["REPO", "PACKAGE_DIR", "REASON", "python_command", "subprocess_env"]

REPO = Path(__file__).resolve().parents[1]
SOURCE_PACKAGE = REPO / "humanoid_sim"
# Inside an installed copy: the data files setup.py copies from the source tree's folders.
SHIPPED_DATA = "share"


def _files(root: Path, skip_top: str | None = None) -> dict[str, str]:
    """{path relative to root: SHA-256 of its content} of every file but compiled bytecode."""
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if not path.is_file() or "__pycache__" in relative.parts or path.suffix == ".pyc":
            continue
        if skip_top is not None and relative.parts[0] == skip_top:
            continue
        found[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _installed_package() -> Path | None:
    """The humanoid_sim an interpreter without the source tree on its path would import."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != str(REPO)]
    spec = importlib.machinery.PathFinder.find_spec("humanoid_sim", path)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _differences(installed: Path) -> list[str]:
    """What differs between the installed copy and the source tree (empty: the same files)."""
    mine, theirs = _files(SOURCE_PACKAGE), _files(installed, skip_top=SHIPPED_DATA)
    differing = [f"humanoid_sim/{name}" for name in sorted(mine.keys() | theirs.keys())
                 if mine.get(name) != theirs.get(name)]
    for relative, digest in _files(installed / SHIPPED_DATA).items():
        source = REPO / relative
        if not source.is_file() or hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            differing.append(relative)
    return differing


def _choose() -> tuple[Path, str]:
    installed = _installed_package()
    if installed is None or installed == SOURCE_PACKAGE:
        return SOURCE_PACKAGE, "the source tree (no installed copy: scripts/setup.sh installs one)"
    differing = _differences(installed)
    if differing:
        more = f" and {len(differing) - 3} more" if len(differing) > 3 else ""
        return SOURCE_PACKAGE, (
            f"the source tree (the installed copy differs: {', '.join(differing[:3])}{more};"
            " scripts/setup.sh installs it again)"
        )
    return installed, "the installed copy, file for file the source tree (its kernels compiled by scripts/setup.sh)"


PACKAGE_DIR, REASON = _choose()


def _import_chosen_copy() -> None:
    """Put the chosen copy in sys.modules before anything else imports humanoid_sim."""
    loaded = sys.modules.get("humanoid_sim")
    if loaded is not None:
        if Path(loaded.__file__).resolve().parent != PACKAGE_DIR:
            raise RuntimeError(f"humanoid_sim was imported from {loaded.__file__} before the suite chose {PACKAGE_DIR}")
        return
    saved = sys.path[:]
    sys.path.insert(0, str(PACKAGE_DIR.parent))
    try:
        module = importlib.import_module("humanoid_sim")
    finally:
        sys.path[:] = saved
    if Path(module.__file__).resolve().parent != PACKAGE_DIR:
        raise RuntimeError(f"imported humanoid_sim from {module.__file__}, not the chosen {PACKAGE_DIR}")


_import_chosen_copy()


def subprocess_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a Python process that must import the copy under test: the source tree
    first on PYTHONPATH when it is the one tested, else PYTHONPATH without it."""
    env = dict(os.environ if base is None else base)
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != REPO]
    if PACKAGE_DIR == SOURCE_PACKAGE:
        entries.insert(0, str(REPO))
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        env.pop("PYTHONPATH", None)
    return env


def python_command(*args: str) -> list[str]:
    """``python -P ...``: -P keeps the working directory off sys.path, so ``-m`` and ``-c`` run
    from the repository import the copy ``subprocess_env`` points at, not the source tree."""
    return [sys.executable, "-P", *args]
