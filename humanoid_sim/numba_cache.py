"""Where numba keeps the compiled kernels of this package on disk.

numba's own cache is keyed by the source file of each jitted function only: when a kernel
calls a kernel of another file and that file changes, the caller's cached machine code is
silently reused with the old callee inlined. So the whole package's kernels share one cache
directory named after a digest of every source file that uses numba: any change to any
kernel starts a fresh cache, and an unchanged install loads in a fraction of a second.

Must run before numba is first imported (numba reads NUMBA_CACHE_DIR at import);
``humanoid_sim/__init__.py`` calls it. A NUMBA_CACHE_DIR set by the user is respected.
"""

from __future__ import annotations

import hashlib
import os
import re
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
    """Set NUMBA_CACHE_DIR (unless already set) and return the directory in use."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        os.environ["NUMBA_CACHE_DIR"] = str(
            cache_home / "humanoid_sim" / "numba" / kernel_sources_digest()
        )
    return os.environ["NUMBA_CACHE_DIR"]
