"""Rich content: what a typed tool's ``format()`` may return instead of one string. Each block is a
frozen attrs class with its MCP wire form (``TextContent``, ``ImageContent``, ``AudioContent``,
``ResourceLink``, ``EmbeddedResource``); the helpers :func:`text`, :func:`image`, ... build them and
check them when they are made, so a bad block fails in the handler, not on the wire."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any

from attrs import frozen

__all__ = [
    "AudioBlock",
    "ContentBlock",
    "EmbeddedResourceBlock",
    "ImageBlock",
    "ResourceLinkBlock",
    "TextBlock",
    "audio",
    "embedded_resource",
    "image",
    "rendered",
    "resource_link",
    "text",
]

_MIME = re.compile(r"^[A-Za-z0-9][\w!#$&^.+-]*/[\w!#$&^.+-]+(\s*;.*)?$")


def _check_mime(mime_type: str, kind: str | None) -> None:
    if not isinstance(mime_type, str) or not _MIME.match(mime_type):
        raise ValueError(f"{mime_type!r} is not a MIME type (like 'image/png')")
    if kind is not None and not mime_type.lower().startswith(f"{kind}/"):
        raise ValueError(f"a {kind} block needs a {kind}/* MIME type, not {mime_type!r}")


def _bytes(data: Any, what: str) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"{what} must be bytes, not {type(data).__name__}")
    return bytes(data)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@frozen
class TextBlock:
    """Text for the model (``TextContent``); the parity lint reads these blocks."""

    text: str

    def wire(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@frozen(kw_only=True)
class ImageBlock:
    """An image (``ImageContent``): raw bytes, sent base64-encoded."""

    data: bytes
    mime_type: str

    def wire(self) -> dict[str, Any]:
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}


@frozen(kw_only=True)
class AudioBlock:
    """Audio (``AudioContent``): raw bytes, sent base64-encoded."""

    data: bytes
    mime_type: str

    def wire(self) -> dict[str, Any]:
        return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}


@frozen(kw_only=True)
class ResourceLinkBlock:
    """A link to a resource the client may read (``ResourceLink``), not its contents."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional = {"title": self.title, "description": self.description, "mimeType": self.mime_type, "size": self.size}
        out.update({key: value for key, value in optional.items() if value is not None})
        return out


@frozen(kw_only=True)
class EmbeddedResourceBlock:
    """A resource's contents carried in the result (``EmbeddedResource``): text or bytes."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None

    def wire(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            resource["mimeType"] = self.mime_type
        if self.blob is not None:
            resource["blob"] = _b64(self.blob)
        else:
            resource["text"] = self.text
        return {"type": "resource", "resource": resource}


ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | EmbeddedResourceBlock


def text(value: str) -> TextBlock:
    """A text block."""
    if not isinstance(value, str):
        raise TypeError(f"text() takes a str, not {type(value).__name__}")
    return TextBlock(value)


def image(data: bytes, mime_type: str) -> ImageBlock:
    """An image block: ``image(png_bytes, "image/png")``."""
    _check_mime(mime_type, "image")
    return ImageBlock(data=_bytes(data, "image data"), mime_type=mime_type)


def audio(data: bytes, mime_type: str) -> AudioBlock:
    """An audio block: ``audio(wav_bytes, "audio/wav")``."""
    _check_mime(mime_type, "audio")
    return AudioBlock(data=_bytes(data, "audio data"), mime_type=mime_type)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> ResourceLinkBlock:
    """A link to a resource: ``resource_link("file:///tmp/report.pdf", "report.pdf")``."""
    if not uri or not name:
        raise ValueError("a resource link needs a uri and a name")
    if mime_type is not None:
        _check_mime(mime_type, None)
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValueError(f"size must be a non-negative int, not {size!r}")
    return ResourceLinkBlock(uri=uri, name=name, title=title, description=description, mime_type=mime_type, size=size)


def embedded_resource(
    uri: str, *, text: str | None = None, blob: bytes | None = None, mime_type: str | None = None
) -> EmbeddedResourceBlock:
    """A resource's contents in the result: exactly one of ``text`` or ``blob`` (bytes)."""
    if not uri:
        raise ValueError("an embedded resource needs a uri")
    if (text is None) == (blob is None):
        raise ValueError("an embedded resource takes exactly one of text= or blob=")
    if mime_type is not None:
        _check_mime(mime_type, None)
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    data = _bytes(blob, "blob") if blob is not None else None
    return EmbeddedResourceBlock(uri=uri, text=text, blob=data, mime_type=mime_type)


_BLOCKS = (TextBlock, ImageBlock, AudioBlock, ResourceLinkBlock, EmbeddedResourceBlock)


def rendered(value: Any, tool: str) -> tuple[str, tuple[ContentBlock, ...] | None]:
    """What ``format()`` returned as ``(text, blocks)``: the text is the text blocks joined by a
    blank line (what the parity lint and the call log read); ``blocks`` is ``None`` for a plain
    string. A bare ``str`` in a list is a text block. Raises ``TypeError`` on anything else."""
    if isinstance(value, str):
        return value, None
    if not isinstance(value, Sequence):
        raise TypeError(f"format() of {tool} returned {type(value).__name__}, not a str or a list of content blocks")
    blocks: list[ContentBlock] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = TextBlock(item)
        if not isinstance(item, _BLOCKS):
            raise TypeError(f"format() of {tool}: item {index} is a {type(item).__name__}, not a content block")
        blocks.append(item)
    return joined_text(blocks), tuple(blocks)


def joined_text(blocks: Sequence[ContentBlock]) -> str:
    """The text blocks' text, joined by a blank line."""
    return "\n\n".join(block.text for block in blocks if isinstance(block, TextBlock))


def with_text_after(blocks: tuple[ContentBlock, ...], extra: str) -> tuple[ContentBlock, ...]:
    """``blocks`` with ``extra`` appended to the last text block (after a blank line), or as a new
    text block at the end when there is none."""
    if not extra:
        return blocks
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        if isinstance(block, TextBlock):
            merged = TextBlock(f"{block.text}\n\n{extra}" if block.text else extra)
            return (*blocks[:index], merged, *blocks[index + 1 :])
    return (*blocks, TextBlock(extra))
