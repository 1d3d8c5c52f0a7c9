"""Events about people behind the keys: whois, trust, and a trusted nick speaking with another key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .base import AppEvent


@dataclass(frozen=True, slots=True)
class Whois(AppEvent):
    """Everyone who has used ``nick``: one entry per key (``sender_id``,
    ``fingerprint``, ``short`` - the suffix that tells equal nicks apart -,
    ``addresses``, ``first_seen``, ``last_seen``, ``trusted``, and ``was``: the
    sender id it had before keys, if it proved it)."""

    name: ClassVar[str] = "whois"
    nick: str
    people: tuple[dict, ...]


@dataclass(frozen=True, slots=True)
class Trusted(AppEvent):
    """The user compared fingerprints: ``nick`` is the holder of this key."""

    name: ClassVar[str] = "trusted"
    nick: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Verified(AppEvent):
    """A person the user verified (``/trust``, this run or before) is here
    with the key checked: told once a run, so the client can mark them."""

    name: ClassVar[str] = "verified"
    nick: str
    sender_id: str


@dataclass(frozen=True, slots=True)
class KeyChanged(AppEvent):
    """Someone speaks as a trusted nick with another key: not the person trusted."""

    name: ClassVar[str] = "key_changed"
    nick: str
    sender_id: str
    fingerprint: str
    trusted_fingerprint: str
