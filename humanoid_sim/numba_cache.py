"""Where numba keeps the compiled kernels of this package on disk.

numba's own cache is keyed by the source file of each jitted function only: when a kernel
calls a kernel of another file and that file changes, the caller's cached machine code is
silently reused with the old callee inlined. So the whole package's kernels share one cache
directory named after a digest of every source file that uses numba: any change to any
kernel starts a fresh cache, and an unchanged install loads in a fraction of a second.

Runs before any kernel module is imported: ``humanoid_sim/__init__.py`` calls it (numba reads
NUMBA_CACHE_DIR when it is first imported; when a program imported numba first, its
configuration is set here too). A NUMBA_CACHE_DIR set by the user is respected.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# A line "import numba..." or "from numba... import" (not a mere mention in a docstring).
_IMPORTS_NUMBA = re.compile(rb"^[ \t]*(?:import|from)[ \t]+numba\b", re.MULTILINE)


def kernel_sources_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (first 16 hex digits) over the paths and contents of the files importing numba."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        content = path.read_bytes()
        if _IMPORTS_NUMBA.search(content):
            digest.update(path.relative_to(package_dir).as_posix().encode())
            digest.update(content)
    return digest.hexdigest()[:16]


def configure_numba_cache_dir() -> str:
    """Set NUMBA_CACHE_DIR (unless already set) and return the directory in use. numba reads
    that variable once, when it is first imported: in a program that imported numba before
    this package, numba's configuration is set to the same directory too (else the kernels
    would be cached in numba's own places, keyed by each file alone, and a kernel compiled
    against an older version of a kernel of another file could run)."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        os.environ["NUMBA_CACHE_DIR"] = str(
            cache_home / "humanoid_sim" / "numba" / kernel_sources_digest()
        )
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already started: its kernels are placed by config.CACHE_DIR
        config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
    return os.environ["NUMBA_CACHE_DIR"]


# Wall time of a first start's compilation of every kernel, measured on a 2-core machine (the
# node's and the walking controller's warm-up of a fresh install: 357 s): for the progress lines.
FIRST_COMPILE_ESTIMATE_S = 360


def kernel_cache_subpath(source_dir: Path) -> str:
    """The folder inside NUMBA_CACHE_DIR where numba keeps the cache of the kernels of the
    files in ``source_dir`` (numba's rule: the folder's name and a SHA-1 of its absolute path)."""
    path = os.path.abspath(source_dir)
    return f"{os.path.split(path)[-1]}_{hashlib.sha1(path.encode()).hexdigest()}"


def kernels_cached(package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether numba has cached kernels for every folder of this installed copy that has kernel
    files (False on the first start after an install or a change: they compile now)."""
    cache = Path(configure_numba_cache_dir())
    folders = {
        path.parent for path in package_dir.rglob("*.py") if _IMPORTS_NUMBA.search(path.read_bytes())
    }
    return all(any((cache / kernel_cache_subpath(folder)).glob("*.nbi")) for folder in folders)


def compile_notice() -> str:
    """One progress line for a start-up that is about to compile or load the kernels."""
    if kernels_cached():
        return "loading physics kernels from the cache..."
    return (
        f"compiling physics kernels (first start after install, ~{FIRST_COMPILE_ESTIMATE_S} s;"
        f" cached in {configure_numba_cache_dir()})..."
    )
