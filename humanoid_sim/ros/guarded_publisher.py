"""A publisher whose failed sends are counted and logged, never raised.

A DDS write can fail for reasons that say nothing about the simulation: on a loaded machine
Fast DDS gives up on a reliable sample whose history slot it could not free in time ("cannot
publish data"). rclpy raises that from ``publish``; raised inside a service callback or the
physics loop, it stopped the whole node (seen under load: /clock published while a reset
answered set_simulation_state). A dropped message of a stream is what a subscriber of a
simulator must expect anyway; a dead simulator is not. So the node's publishers drop the
message, count it, and say so (one warning per few seconds, with the running count).
A message of the wrong type still raises: that is a bug.
"""

from __future__ import annotations

from typing import Any

from rclpy.publisher import Publisher

__all__ = ["WARNING_PERIOD_S", "GuardedPublisher", "guarded_publisher"]

# At most one warning about failed sends per this many seconds (all publishers of a node).
WARNING_PERIOD_S = 5.0


class GuardedPublisher(Publisher):
    """rclpy's Publisher (made by ``Node.create_publisher(..., publisher_class=GuardedPublisher)``)
    whose ``publish`` turns a middleware failure into a dropped message.

    failures: messages dropped so far; logger: where the warning goes (the node sets it; None:
    nowhere); last_error: the middleware's words for the last failure."""

    failures: int = 0
    last_error: str = ""
    logger: Any = None

    def publish(self, msg: Any) -> None:
        try:
            super().publish(msg)
        except RuntimeError as exc:  # rclpy's RCLError: the middleware did not take the message
            self.failures += 1
            self.last_error = str(exc)
            if self.logger is not None:
                self.logger.warning(
                    f"a message on {self.topic_name} was dropped ({exc}); {self.failures} on this topic so far",
                    throttle_duration_sec=WARNING_PERIOD_S,
                )


def guarded_publisher(node: Any, msg_type: Any, topic: str, qos: Any, **options: Any) -> GuardedPublisher:
    """``node.create_publisher(msg_type, topic, qos, **options)`` as a GuardedPublisher that
    warns through the node's logger."""
    publisher = node.create_publisher(msg_type, topic, qos, publisher_class=GuardedPublisher, **options)
    publisher.logger = node.get_logger()
    return publisher
