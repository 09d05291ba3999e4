"""The request-head limit: a request's line and header fields, up to and including the blank
line that ends them, may take at most :data:`MAX_HEAD_BYTES`, whether they arrive whole or in
pieces. h11 alone bounds only a head still incomplete; a head of any size sent at once got
through. A head past the limit is answered :data:`HEADERS_TOO_LARGE` before h11 parses it.
"""

from __future__ import annotations

import re

__all__ = ["HEADERS_TOO_LARGE", "MAX_HEAD_BYTES", "HeadMeter"]

MAX_HEAD_BYTES = 16 * 1024

_TOO_LARGE_TEXT = b"Request Header Fields Too Large: a request's headers may take at most 16 KiB"
HEADERS_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT)
)

#: What ends a head, as h11 reads it (a bare LF is a line end too).
_BLANK_LINE = re.compile(rb"\n\r?\n")


class HeadMeter:
    """Counts the bytes of the head a connection is receiving, over the pieces it arrives in.

    Scanning stops at the limit, so refusing an oversized head costs one bounded search.
    """

    __slots__ = ("read", "tail")

    def __init__(self) -> None:
        #: Bytes of the unfinished head received before.
        self.read = 0
        #: Its last two bytes: a blank line may straddle two pieces.
        self.tail = b""

    def fits(self, data: bytes) -> bool:
        """Whether the head stays within the limit with ``data`` added (its end in ``data``, or
        not yet come)."""
        room = MAX_HEAD_BYTES - self.read
        if self.tail:
            found = _BLANK_LINE.search(self.tail + data[:room]) is not None
        else:
            found = _BLANK_LINE.search(data, 0, room) is not None
        return found or len(data) <= room

    def add(self, data: bytes) -> None:
        """Count ``data`` as part of a head not yet finished."""
        self.read += len(data)
        self.tail = (self.tail + data[-2:])[-2:]

    def restart(self, buffered: bytes = b"") -> None:
        """Start on a new head, of which ``buffered`` has already arrived."""
        self.read = 0
        self.tail = b""
        if buffered:
            self.add(buffered)
