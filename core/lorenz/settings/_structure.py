"""Structuring untrusted config maps into attrs classes, strictly: :func:`structure`.

The cattrs converter that does the work lives in :mod:`._converter`, imported on first need: a
section that is absent, or gives only strings and booleans to keys that take them as they are (the
embedded default's ``tracker: {kind: local}``), is built directly, which is exactly what the
converter would build (``tests/test_settings_structure.py`` checks the two agree).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

__all__ = ["structure"]

T = TypeVar("T")


def structure(raw: Any, cls: type[T], label: str) -> T:
    """Structure ``raw`` into the strict attrs section ``cls``; errors are :class:`ConfigError`.

    Keys may be given in camelCase too (snake_case wins); unknown keys are an error naming each
    with the closest known key (``server contains unsupported keys: prot (did you mean "port"?)``).
    """
    if isinstance(raw, Mapping):
        verbatim, required = _shape(cls)
        if all(type(value) is verbatim.get(key) for key, value in raw.items()) and required <= raw.keys():
            return cls(**raw)
    from ._converter import structure_strictly  # cattrs is slow to import: load it on first need

    return structure_strictly(raw, cls, label)


#: Declared types whose given value the converter keeps as it is, and the one type it keeps.
_VERBATIM: dict[object, type] = {str: str, str | None: str, bool: bool}
_SHAPES: dict[type, tuple[dict[str, type], frozenset[str]]] = {}


def _shape(cls: type) -> tuple[dict[str, type], frozenset[str]]:
    """The fields of ``cls`` a value of one exact type structures into unchanged (that type, by
    field name), and the fields without a default."""
    shape = _SHAPES.get(cls)
    if shape is None:
        hints = typing.get_type_hints(cls)
        fields = attrs.fields(cls)
        verbatim = {
            field.name: _VERBATIM[hints[field.name]]
            for field in fields
            if hints[field.name] in _VERBATIM
            and field.init
            and field.alias == field.name
            and field.validator is None
            and field.converter is None
        }
        required = frozenset(field.name for field in fields if field.default is attrs.NOTHING)
        shape = _SHAPES[cls] = (verbatim, required)
    return shape
