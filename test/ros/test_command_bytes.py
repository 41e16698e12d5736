"""Reading a serialized Float64MultiArray's values from its bytes (command_bytes), against
rclpy's own serialization: every layout a message may carry, lengths 0 to a few thousand."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from rclpy.serialization import serialize_message  # noqa: E402
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout  # noqa: E402

from humanoid_sim.ros.command_bytes import MAX_LAYOUT_DIMENSIONS, multi_array_values  # noqa: E402


def serialized(values: np.ndarray, labels: list[str], data_offset: int = 0) -> bytes:
    dims = [MultiArrayDimension(label=label, size=len(values), stride=len(values)) for label in labels]
    msg = Float64MultiArray(layout=MultiArrayLayout(dim=dims, data_offset=data_offset), data=values.tolist())
    return bytes(serialize_message(msg))


@pytest.mark.parametrize("labels", [[], [""], ["a"], ["ab", "abc"], ["joints", "x" * 7, "y" * 13]])
@pytest.mark.parametrize("n", [0, 1, 2, 29, 30, 4097])
def test_values_match_what_was_serialized(rng, labels, n):
    values = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
    count, read = multi_array_values(serialized(values, labels, data_offset=int(rng.integers(0, 9))))
    assert count == n
    np.testing.assert_array_equal(read, values)


def test_a_message_cut_short_gives_its_count_and_no_values(rng):
    data = serialized(rng.normal(size=30), ["joints"])
    count, read = multi_array_values(data[:-16])
    assert count == 30 and read is None


def test_what_it_does_not_walk_is_left_to_rclpy(rng):
    with pytest.raises(ValueError, match="layout dimensions"):
        multi_array_values(serialized(rng.normal(size=3), ["d"] * (MAX_LAYOUT_DIMENSIONS + 1)))
    little = serialized(rng.normal(size=3), [])
    with pytest.raises(ValueError, match="little-endian"):
        multi_array_values(little[:1] + b"\x00" + little[2:])  # the big-endian representation id
    with pytest.raises(ValueError):
        multi_array_values(little[:8])
