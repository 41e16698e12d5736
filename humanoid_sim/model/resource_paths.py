"""Resolving the resource URIs of a URDF (``package://``, ``file://``, relative).

``package://pkg/rest`` is looked up, in this order, in
  (a) the ``package_paths`` search directories given by the caller (a directory
      that contains ``pkg/`` or is itself named ``pkg``),
  (b) the directories in the environment variable ``HUMANOID_SIM_PACKAGE_PATH``
      (``os.pathsep``-separated, same rule),
  (c) the ament index (``ament_index_python``) when it is importable,
  (d) the ``share`` directory of the example-robot-data wheel
      (``<site-packages>/cmeel.prefix/share``).
``file://`` URIs and plain relative paths are relative to the URDF's directory.
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from humanoid_sim.model.errors import UrdfError
from humanoid_sim.package_data import ament_share_directory

PACKAGE_PATH_ENV = "HUMANOID_SIM_PACKAGE_PATH"


def example_robot_data_share_dirs() -> list[Path]:
    """The ``cmeel.prefix/share`` dirs of installed cmeel wheels (example-robot-data)."""
    candidates: list[str] = []
    try:
        candidates.extend(site.getsitepackages())
    except AttributeError:  # some virtualenv flavours lack it
        pass
    candidates.extend(p for p in sys.path if p)
    found: list[Path] = []
    for base in candidates:
        share = Path(base) / "cmeel.prefix" / "share"
        if share.is_dir() and share not in found:
            found.append(share)
    return found


def _search_dirs(package_paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    dirs = [Path(p) for p in package_paths]
    env = os.environ.get(PACKAGE_PATH_ENV, "")
    dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    return dirs


def find_package(package: str, package_paths: Sequence[str | os.PathLike[str]] = ()) -> Path:
    """Directory of ROS package ``package`` (see module docstring for the order).

    Raises UrdfError naming the package and listing the directories searched.
    """
    searched: list[str] = []
    for d in _search_dirs(package_paths):
        if (d / package).is_dir():
            return d / package
        if d.name == package and d.is_dir():
            return d
        searched.append(str(d))
    ament = ament_share_directory(package)
    if ament is not None and ament.is_dir():
        return ament
    searched.append("ament index")
    for share in example_robot_data_share_dirs():
        if (share / package).is_dir():
            return share / package
        searched.append(str(share))
    raise UrdfError(
        f"package {package!r} not found; searched: {', '.join(searched) or 'nothing'}"
        f" (pass package_paths=... or set {PACKAGE_PATH_ENV})"
    )


def resolve_uri(
    uri: str,
    base_dir: Path,
    package_paths: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Absolute path of a URDF resource URI; does not check that the file exists.

    uri: ``package://pkg/rel``, ``file:///abs``, ``file://rel``, or a path.
    base_dir: directory of the URDF file (the working directory for XML strings).
    """
    if uri.startswith("package://"):
        rest = uri[len("package://") :].lstrip("/")  # talos writes package:///pkg/...
        package, _, rel = rest.partition("/")
        if not package:
            raise UrdfError(f"resource {uri!r}: no package name")
        return find_package(package, package_paths) / unquote(rel)
    if uri.startswith("file://"):
        parsed = urlparse(uri)
        path = Path(unquote(parsed.netloc + parsed.path))
        return path if path.is_absolute() else base_dir / path
    if "://" in uri:
        raise UrdfError(f"resource {uri!r}: unsupported URI scheme (package://, file:// or a path)")
    path = Path(uri)
    return path if path.is_absolute() else base_dir / path
