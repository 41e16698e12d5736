"""When the simulation node hands freed memory back and renews its command readers (no rclpy).

Commands of a million values (8-20 MB serialized) cost memory in two places that outlive them:
- the C heap keeps large freed blocks (glibc arenas of the DDS threads): handed back by
  ``process_tuning.release_free_memory`` (malloc_trim);
- a best-effort DDS reader keeps, per sending writer, the sample it was reassembling when
  fragments stopped coming (a huge command that lost a fragment, or the sender's last one):
  Fast DDS frees it only when a newer fragmented sample of that writer arrives or the reader
  is deleted, not when the writer goes away. Only new readers give it back.

``MemoryWatch`` sees, once per diagnostics period, the count of rejected commands and the
resident size, and says what to do (``MemoryAction``): release during a flood of rejected
commands; when it has passed, release, then renew the command readers if the node stays more
than RENEW_GROWTH_MB above its size before the flood; a period after the old readers are
retired (``readers_retired``: rclpy deletes a reader when its executor lets go of it), release
and check again (the new readers may have caught the end of the flood: a sender's queue still
going out after the last rejection), up to RENEWALS_PER_FLOOD renewals; release when the
resident size grew by RELEASE_GROWTH_MB since the last release (samples lost in fragments reach
no callback).
"""

from __future__ import annotations

import enum

__all__ = ["RELEASE_GROWTH_MB", "RENEWALS_PER_FLOOD", "RENEW_GROWTH_MB", "MemoryAction", "MemoryWatch"]

# Growth of the resident size [MB] since the last release that calls for another one (a
# release costs ~0.2 ms; the resident size is read once per diagnostics period).
RELEASE_GROWTH_MB = 4.0
# Memory [MB] still held after a flood, over the size before it, for which the command readers
# are renewed (two new DDS readers, which take over once matched to the senders).
RENEW_GROWTH_MB = 4.0
# Renewals after one flood at most (the memory may stay for another reason than the readers).
RENEWALS_PER_FLOOD = 2


class MemoryAction(enum.Enum):
    """What the node does this diagnostics period."""

    NOTHING = "nothing"
    RELEASE = "release"  # malloc_trim
    RELEASE_AND_CHECK = "release_and_check"  # malloc_trim, then ask ``renew_readers`` with the new size


class MemoryWatch:
    """Release and renewal decisions of the simulation node (see the module docstring).

    resident_mb: the node's resident size now [MB]; renew_allowed: whether the command readers
    may be renewed (not in lock-step mode, whose reliable queue of commands must not be lost).
    """

    def __init__(self, resident_mb: float, renew_allowed: bool = True) -> None:
        self.renew_allowed = renew_allowed
        self._rejected = 0
        self._flood = False
        self._trailing = False  # release once more next period
        self._check = False  # release and check once more next period (after a renewal)
        self._flood_renewals = 0  # renewals since the last flood began
        self._calm_mb = resident_mb  # resident size in the last period without rejections
        self._released_mb = resident_mb  # resident size after the last release
        self.renewals = 0

    def period(self, rejected_total: int, resident_mb: float) -> MemoryAction:
        """The action for this period. rejected_total: commands rejected since the start;
        resident_mb: the resident size now [MB]. After a RELEASE or RELEASE_AND_CHECK, call
        ``released`` (resp. ``renew_readers``) with the size after it."""
        new_rejections = rejected_total != self._rejected
        self._rejected = rejected_total
        if new_rejections:
            if not self._flood:
                self._flood, self._flood_renewals = True, 0
            return MemoryAction.RELEASE
        if self._flood or self._check:
            self._trailing = self._flood
            self._flood = self._check = False
            return MemoryAction.RELEASE_AND_CHECK
        if self._trailing or resident_mb > self._released_mb + RELEASE_GROWTH_MB:
            self._trailing = False
            return MemoryAction.RELEASE
        self._calm_mb = resident_mb
        return MemoryAction.NOTHING

    @property
    def calm_mb(self) -> float:
        """The resident size [MB] in the last period without rejected commands."""
        return self._calm_mb

    def released(self, resident_mb: float) -> None:
        """The resident size [MB] after a release."""
        self._released_mb = resident_mb

    def readers_retired(self) -> None:
        """The command readers replaced by a renewal are gone: release and check next period."""
        self._check = True

    def renew_readers(self, resident_mb: float) -> bool:
        """After the release that ends a flood: whether to renew the command readers, the node
        being ``resident_mb`` [MB] large now. Call ``released`` afterwards either way."""
        renew = (self.renew_allowed and self._flood_renewals < RENEWALS_PER_FLOOD
                 and resident_mb > self._calm_mb + RENEW_GROWTH_MB)
        self._flood_renewals += renew
        self.renewals += renew
        return renew
