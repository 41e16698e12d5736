"""The torque values of a serialized std_msgs/Float64MultiArray, found in its bytes (no rclpy).

The node takes effort_controller/commands raw: a message's ``data`` length is read first, so a
command of the wrong length (a million values, say) is refused without building a message or
converting a value, and a command of the right length becomes a numpy view of its bytes.

CDR layout (after the 4-byte encapsulation header; primitives aligned to their size, counted
from the byte after the header): ``layout.dim`` (uint32 count; per dimension a string label as
uint32 length with its NUL, the bytes, then uint32 size and uint32 stride), ``layout.data_offset``
(uint32), ``data`` (uint32 count, then float64 values aligned to 8).
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["MAX_LAYOUT_DIMENSIONS", "multi_array_values"]

_HEADER = 4  # encapsulation header; alignment counts from the byte after it
# Dimensions of ``layout`` read in Python; a message with more is deserialized instead (a torque
# command has 0 or 1; walking a million labels byte by byte would cost more than rclpy does).
MAX_LAYOUT_DIMENSIONS = 8


def _aligned(offset: int, size: int) -> int:
    return offset + (-(offset - _HEADER) % size)


def multi_array_values(data: bytes) -> tuple[int, np.ndarray | None]:
    """(number of values, the values) of a serialized Float64MultiArray.

    The values are a read-only float64 view of ``data`` (shape (n,)), or None when ``n`` exceeds
    the bytes present. ValueError when the bytes are not a little-endian CDR message this reader
    walks (big endian, more than MAX_LAYOUT_DIMENSIONS dimensions, cut short): deserialize those.
    """
    if len(data) < _HEADER + 12 or data[1] != 1:
        raise ValueError("not a little-endian CDR Float64MultiArray")
    (dimensions,) = struct.unpack_from("<I", data, _HEADER)
    if dimensions > MAX_LAYOUT_DIMENSIONS:
        raise ValueError(f"{dimensions} layout dimensions")
    offset = _HEADER + 4
    for _ in range(dimensions):
        (label,) = struct.unpack_from("<I", data, offset)
        offset = _aligned(offset + 4 + label, 4) + 8  # label bytes, then size and stride
    offset = _aligned(offset, 4) + 4  # data_offset
    (count,) = struct.unpack_from("<I", data, offset)
    offset = _aligned(offset + 4, 8) if count else offset + 4
    if offset + 8 * count > len(data):
        return count, None
    return count, np.frombuffer(data, dtype="<f8", count=count, offset=offset)
