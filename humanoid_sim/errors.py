"""The exceptions of humanoid_sim, one tree under ``HumanoidSimError``.

Each also derives from the built-in exception code written before this tree would catch
(``KeyError`` for an unknown name, ``FileNotFoundError`` for a missing data file), so
``except KeyError`` keeps working. Messages list the valid names.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["DataFileNotFoundError", "HumanoidSimError", "InvalidValueError", "UnknownNameError"]


class HumanoidSimError(Exception):
    """Base of every error humanoid_sim raises on purpose."""


class UnknownNameError(HumanoidSimError, KeyError):
    """A pose, link, joint or other named thing that does not exist.

    kind: what was looked up ("initial pose", "link", ...); name: the name given;
    valid: the names that exist (listed in the message, sorted).
    """

    def __init__(self, kind: str, name: str, valid: Iterable[str], context: str = "") -> None:
        self.kind, self.name, self.valid = kind, name, tuple(sorted(valid))
        where = f" {context}" if context else ""
        listing = ", ".join(self.valid) or "(none)"
        super().__init__(f"unknown {kind} {name!r}{where}; valid {kind}s: {listing}")

    def __str__(self) -> str:  # KeyError's str() would quote the whole message
        return str(self.args[0])


class InvalidValueError(HumanoidSimError, ValueError):
    """A value of the right name but unusable (wrong shape, not finite, out of range); the
    message says which value and what it must be."""


class DataFileNotFoundError(HumanoidSimError, FileNotFoundError):
    """A data file of the package (pose, config, URDF, mesh) that is named but not found.

    relative: its path inside the package's share directory (e.g. ``config/walking.yaml``);
    searched: every place looked at, in order (listed in the message).
    """

    def __init__(self, relative: str, searched: Iterable[str]) -> None:
        self.relative, self.searched = relative, tuple(searched)
        super().__init__(
            f"humanoid_sim data file {relative!r} not found; searched: {', '.join(self.searched) or '(nowhere)'}"
        )

    def __str__(self) -> str:  # FileNotFoundError's str() formats (errno, strerror)
        return str(self.args[0])
