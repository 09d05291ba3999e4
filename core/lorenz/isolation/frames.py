"""The frames of the pipe between the host and an isolated pack's process, as bytes.

A frame is a 4-byte big-endian length (:data:`HEADER`), then that many bytes of UTF-8 JSON. This
module reads and writes them, bounded in size, on a blocking descriptor (the child) or fed from an
asyncio pipe (the host); what a frame holds, and how it is encoded, is :mod:`.protocol`'s.
A reader of calls and replies parses with pydantic_core (several times faster than the json
module), and with the json module what that refuses (nesting past 200, an escaped lone surrogate).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from typing import Any

__all__ = [
    "HEADER",
    "MAX_CONTROL_FRAME_BYTES",
    "PIPE_READ_BYTES",
    "FrameReader",
    "ProtocolError",
    "read_frame",
    "small_reads",
    "write_all",
]

HEADER = struct.Struct(">I")
#: How much one read of a pipe takes at most (below glibc's 128 KiB mmap threshold).
PIPE_READ_BYTES = 64 * 1024

#: The largest hello, survey or launch frame (a pack's tool specs, the settings slice).
MAX_CONTROL_FRAME_BYTES = 64 * 1024 * 1024


class ProtocolError(ValueError):
    """A frame that is too large, not JSON, or not the message expected."""


class FrameReader:
    """Splits a byte stream into decoded frames, refusing one longer than ``limit`` bytes.
    ``fast``: parse with pydantic_core (a reader of calls or replies; a survey child's reads
    stay without it)."""

    def __init__(self, limit: int, *, fast: bool = False) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._decode: Callable[[bytes], Any] = _fast_decoder() if fast else _decode

    def feed(self, data: bytes) -> list[Any]:
        """The complete frames ``data`` finishes (JSON values, decoded); raises :class:`ProtocolError`."""
        buffer = self._buffer
        if not buffer and len(data) >= HEADER.size:  # the common case: one whole frame, not copied
            (size,) = HEADER.unpack_from(data)
            if len(data) == HEADER.size + size and size <= self.limit:
                return [self._decode(data[HEADER.size :])]
        buffer += data
        frames: list[Any] = []
        offset = 0
        while len(buffer) - offset >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer, offset)
            if size > self.limit:
                msg = f"a frame of {size:,} bytes (more than {self.limit:,})"
                raise ProtocolError(msg)
            end = offset + HEADER.size + size
            if len(buffer) < end:
                break
            frames.append(self._decode(bytes(buffer[offset + HEADER.size : end])))
            offset = end
        del buffer[:offset]
        return frames


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:  # UnicodeDecodeError included
        msg = f"a frame that is not JSON ({exc})"
        raise ProtocolError(msg) from None


def _fast_decoder() -> Callable[[bytes], Any]:
    from pydantic_core import from_json  # only where calls and replies are read

    def decode(body: bytes) -> Any:
        try:
            return from_json(body)
        except ValueError:  # deeper than it goes, or what it refuses: the json module decides
            return _decode(body)

    return decode


def read_frame(fd: int, limit: int = MAX_CONTROL_FRAME_BYTES) -> Any:
    """One frame read from ``fd``, blocking; ``None`` at end of file."""
    head = _read_exactly(fd, HEADER.size)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > limit:
        msg = f"a frame of {size:,} bytes (more than {limit:,})"
        raise ProtocolError(msg)
    body = _read_exactly(fd, size)
    if body is None:
        msg = "a frame cut short"
        raise ProtocolError(msg)
    return _decode(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def small_reads(transport: object) -> None:
    """Have an asyncio pipe transport read at most :data:`PIPE_READ_BYTES` at a time: its default
    256 KiB buffer is an mmap, an mremap and a munmap per read, that is per call."""
    if hasattr(transport, "max_size"):
        transport.max_size = PIPE_READ_BYTES


def write_all(fd: int, data: bytes) -> None:
    """``data`` written to ``fd`` whole, blocking."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
