"""When the simulation node releases freed memory and renews its command readers (memory_watch):
decisions from the rejected-command count and the resident size alone, no rclpy."""

from __future__ import annotations

from humanoid_sim.ros.memory_watch import (
    RELEASE_GROWTH_MB,
    RENEW_GROWTH_MB,
    RENEWALS_PER_FLOOD,
    MemoryAction,
    MemoryWatch,
)

BASE = 300.0  # resident size before anything happens [MB]


def test_a_calm_node_does_nothing():
    watch = MemoryWatch(BASE)
    for _ in range(5):
        assert watch.period(0, BASE + 0.5 * RELEASE_GROWTH_MB) is MemoryAction.NOTHING
    assert watch.renewals == 0


def test_a_flood_releases_while_it_lasts_then_checks_and_releases_once_more():
    watch = MemoryWatch(BASE)
    assert watch.period(0, BASE) is MemoryAction.NOTHING
    for total, size in ((100, BASE + 30.0), (2500, BASE + 45.0)):
        assert watch.period(total, size) is MemoryAction.RELEASE
        watch.released(size - 5.0)
    assert watch.period(2500, BASE + 40.0) is MemoryAction.RELEASE_AND_CHECK
    assert watch.renew_readers(BASE + 27.0)  # partly received samples still held
    watch.released(BASE + 27.0)
    assert watch.period(2500, BASE + 27.0) is MemoryAction.RELEASE  # what the old readers freed meanwhile
    watch.released(BASE + 0.5)
    assert watch.period(2500, BASE + 0.5) is MemoryAction.NOTHING
    assert watch.renewals == 1


def test_readers_are_not_renewed_when_the_flood_left_nothing():
    watch = MemoryWatch(BASE)
    assert watch.period(10, BASE + 1.0) is MemoryAction.RELEASE
    watch.released(BASE + 1.0)
    assert watch.period(10, BASE + 1.0) is MemoryAction.RELEASE_AND_CHECK
    assert not watch.renew_readers(BASE + 0.5 * RENEW_GROWTH_MB)
    assert watch.renewals == 0


def test_lockstep_never_renews_its_reliable_queue():
    watch = MemoryWatch(BASE, renew_allowed=False)
    assert watch.period(3, BASE + 50.0) is MemoryAction.RELEASE
    assert watch.period(3, BASE + 50.0) is MemoryAction.RELEASE_AND_CHECK
    assert not watch.renew_readers(BASE + 50.0)


def test_growth_without_rejections_is_released_and_the_calm_size_follows_the_node():
    watch = MemoryWatch(BASE)
    grown = BASE + RELEASE_GROWTH_MB + 1.0  # samples lost in fragments: no callback, no count
    assert watch.period(0, grown) is MemoryAction.RELEASE
    watch.released(grown)  # nothing was freed: the node is this large now
    assert watch.period(0, grown + 0.1) is MemoryAction.NOTHING  # measured from the last release
    assert watch.calm_mb == grown + 0.1
    # a flood now is measured against that size
    assert watch.period(5, grown + 30.0) is MemoryAction.RELEASE
    assert watch.period(5, grown + 30.0) is MemoryAction.RELEASE_AND_CHECK
    assert not watch.renew_readers(grown + 1.0)


def test_retired_readers_are_released_and_checked_a_period_later_twice_per_flood_at_most():
    watch = MemoryWatch(BASE)
    assert watch.period(0, BASE) is MemoryAction.NOTHING
    assert watch.period(7, BASE + 30.0) is MemoryAction.RELEASE
    held = BASE + 8.0  # the end of the flood reached the new readers too
    for renewal in range(RENEWALS_PER_FLOOD):
        assert watch.period(7, held) is MemoryAction.RELEASE_AND_CHECK
        assert watch.renew_readers(held)
        watch.released(held)
        watch.readers_retired()  # rclpy deletes them once the executor lets go of them
    assert watch.period(7, held) is MemoryAction.RELEASE_AND_CHECK
    assert not watch.renew_readers(held)  # held for another reason: no endless renewals
    watch.released(held)
    assert watch.renewals == RENEWALS_PER_FLOOD
    # the next flood may renew again
    assert watch.period(9, held + 20.0) is MemoryAction.RELEASE
    assert watch.period(9, held + 20.0) is MemoryAction.RELEASE_AND_CHECK
    assert watch.renew_readers(held + 20.0)
