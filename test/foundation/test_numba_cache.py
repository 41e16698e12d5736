"""The kernel cache directory follows the kernels' sources."""

from pathlib import Path

from humanoid_sim.numba_cache import kernel_sources_digest


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_digest_changes_when_any_kernel_file_changes(tmp_path):
    write(tmp_path / "a" / "kernels.py", "import numba\nX = 1\n")
    write(tmp_path / "b" / "kernels.py", "from numba import njit\nY = 2\n")
    before = kernel_sources_digest(tmp_path)
    write(tmp_path / "b" / "kernels.py", "from numba import njit\nY = 3\n")
    assert kernel_sources_digest(tmp_path) != before


def test_digest_ignores_files_without_kernels(tmp_path):
    write(tmp_path / "kernels.py", "import numba\n")
    write(tmp_path / "node.py", "print('hello')\n")
    before = kernel_sources_digest(tmp_path)
    write(tmp_path / "node.py", "print('changed')\n")
    assert kernel_sources_digest(tmp_path) == before


def test_digest_ignores_files_that_only_mention_numba(tmp_path):
    write(tmp_path / "kernels.py", "import numba\n")
    write(tmp_path / "node.py", '"""Warms up the numba kernels."""\nX = 1\n')
    before = kernel_sources_digest(tmp_path)
    write(tmp_path / "node.py", '"""Warms up the numba kernels."""\nX = 2\n')
    assert kernel_sources_digest(tmp_path) == before
    write(tmp_path / "node.py", '"""Warms up the numba kernels."""\n    from numba import njit\n')
    assert kernel_sources_digest(tmp_path) != before


def test_kernels_cached_follows_numba_cache_files(tmp_path, monkeypatch):
    from humanoid_sim import numba_cache

    package = tmp_path / "pkg"
    write(package / "a" / "kernels.py", "import numba\n")
    write(package / "b" / "node.py", "print('no kernels')\n")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert not numba_cache.kernels_cached(package)
    index = tmp_path / "cache" / numba_cache.kernel_cache_subpath(package / "a") / "kernels.f-1.py311.nbi"
    write(index, "")
    assert numba_cache.kernels_cached(package)


def test_kernel_cache_subpath_is_numbas():
    from numba.core.caching import _CacheLocator

    from humanoid_sim import numba_cache

    folder = numba_cache.PACKAGE_DIR / "dynamics"
    assert numba_cache.kernel_cache_subpath(folder) == _CacheLocator.get_suitable_cache_subpath(str(folder / "kernels.py"))


def test_numba_imported_first_still_caches_in_the_package_s_directory():
    """A program that imports numba before humanoid_sim (numba then never reads the variable
    the package sets) still caches the package's kernels in the directory named after all
    kernel files, not in numba's per-file places."""
    import os
    import subprocess

    from package_under_test import PACKAGE_DIR, python_command, subprocess_env

    env = subprocess_env({k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
    env["XDG_CACHE_HOME"] = "/nonexistent-cache-home"
    code = ("import numba\nimport humanoid_sim\nfrom numba.core import config\n"
            "from humanoid_sim.dynamics.kernels import rnea_nb\n"
            "print(config.CACHE_DIR)\nprint(type(rnea_nb._cache._impl.locator).__name__)\n")
    run = subprocess.run(python_command("-c", code), capture_output=True, text=True, env=env,
                         timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    cache_dir, locator = run.stdout.split()
    assert cache_dir == f"/nonexistent-cache-home/humanoid_sim/numba/{kernel_sources_digest(PACKAGE_DIR)}"
    assert locator.endswith("UserProvidedCacheLocator")  # numba: NUMBA_CACHE_DIR is used
