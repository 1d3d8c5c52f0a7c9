"""Events about files, for the client and headless mode (JSON lines there).

Names are the sender's, as offered: a display shows them through ``inert``;
``saved`` is the name this peer chose (``safe_name``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chat_app.events import AppEvent


@dataclass(frozen=True, slots=True)
class FileOffered(AppEvent):
    """A file message arrived (``own``: ours, sent); ``/accept number`` fetches it."""

    name: ClassVar[str] = "file_offer"
    number: int
    channel: str
    nick: str | None
    file_name: str
    size: int
    media: str
    sha256: str
    own: bool
    auto: bool  # under the automatic size limit: fetched without asking


@dataclass(frozen=True, slots=True)
class FileProgress(AppEvent):
    name: ClassVar[str] = "file_progress"
    number: int
    channel: str
    file_name: str
    done: int
    size: int
    bytes_per_s: int


@dataclass(frozen=True, slots=True)
class FileReceived(AppEvent):
    """Every byte arrived and the whole file matched its SHA-256."""

    name: ClassVar[str] = "file_received"
    number: int
    channel: str
    file_name: str
    path: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class FileSourceLeft(AppEvent):
    """A holder was left for another: ``reason`` says why, in one line."""

    name: ClassVar[str] = "file_source_left"
    number: int
    address: str
    reason: str


@dataclass(frozen=True, slots=True)
class FileList(AppEvent):
    """``/files``: every offer seen, each ``{number, channel, nick, name, size, state, done}``."""

    name: ClassVar[str] = "files"
    files: tuple[dict, ...]
