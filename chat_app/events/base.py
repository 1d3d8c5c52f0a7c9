"""The base of every application event, and how it is written as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class AppEvent:
    name: ClassVar[str] = ""
    printed: ClassVar[bool] = True
    """Whether headless mode writes this event out."""
    _optional: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the JSON when None, False or an empty tuple."""
    _when_known: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the JSON when None (unknown); an empty tuple is written."""
    _unprinted: ClassVar[tuple[str, ...]] = ()
    """Fields never written in the JSON: values handed on to the program's own
    parts, already said by another field (a file offer, by the text)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object headless mode prints for this event."""
        out: dict[str, Any] = {"event": self.name}
        for name, left_out in _json_shape(type(self)):
            value = getattr(self, name)
            if left_out is None or not left_out(value):
                out[name] = _plain(value)
        return out

    def json_line(self) -> str:
        """One line of ASCII: whatever a peer put in a nick or a text, every
        control, bidirectional and other non-ASCII character is written as a
        ``\\uXXXX`` escape, so the line is inert on any terminal."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=True)


Emit = Callable[[AppEvent], None]
"""How events reach a user interface."""


def _carries_nothing(value: Any) -> bool:
    return value is None or value is False or value == ()


def _unknown(value: Any) -> bool:
    return value is None


@cache
def _json_shape(cls: type[AppEvent]) -> tuple[tuple[str, Callable[[Any], bool] | None], ...]:
    """``cls``'s fields in order but the unprinted, each with the test that
    leaves it out of the JSON (None: always written); worked out once per class."""
    return tuple((f.name, _carries_nothing if f.name in cls._optional else _unknown if f.name in cls._when_known
                  else None) for f in fields(cls) if f.name not in cls._unprinted)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
