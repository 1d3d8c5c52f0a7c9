"""The client's settings: a small TOML file in the data directory
(``settings.toml``), read with ``tomllib`` and meant to be edited by hand.

    nick = "alice"              # used when --nick is not given
    theme = "nord"              # F2 or the palette change it
    highlight = ["lunch", "deploy"]   # words that count as a mention
    typing = true               # show who is typing (Ctrl+T)
    bell = true                 # ring on a mention
    notify = true               # a desktop notification (OSC 9 / 777) on a mention
    joins = true                # join, part, quit and nick lines in channels (F4)
    last_channel = "general"    # the client opens on it
    closed = ["0a1b…"]          # direct conversations closed with /part (ids)

The client rewrites the file when a setting changes from the keyboard (the
theme, typing, the channel on screen, a closed conversation); a file it cannot read is reported in
one line and left alone, and the defaults are used.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

FILE_NAME = "settings.toml"
TYPES = {"highlight": list, "closed": list, "typing": bool, "bell": bool, "notify": bool, "joins": bool}  # else str

HEADER = """\
# sds-chat client settings; edit freely (TOML). Keys:
#   nick          your name when --nick is not given
#   theme         textual-dark, nord, gruvbox, textual-light, ... (F2 cycles)
#   highlight     words that count as a mention, besides your nick
#   typing        show who is typing (Ctrl+T toggles)
#   bell          ring the terminal bell on a mention
#   notify        a desktop notification (OSC 9 / OSC 777) on a mention
#   joins         show join, part, quit and nick-change lines (F4 toggles)
#   last_channel  the channel the client opens on
#   closed        direct conversations closed with /part (ids); a new message reopens one
"""


class SettingsError(ValueError):
    """The file is there but is not settings this client understands."""


@dataclass
class Settings:
    nick: str | None = None
    theme: str | None = None
    highlight: list[str] = field(default_factory=list)
    typing: bool = True
    bell: bool = True
    notify: bool = True
    joins: bool = True
    last_channel: str | None = None
    closed: list[str] = field(default_factory=list)

    @classmethod
    def path(cls, data_dir: Path) -> Path:
        return data_dir / FILE_NAME

    @classmethod
    def load(cls, data_dir: Path) -> Settings:
        """The settings in ``data_dir`` (defaults if there is no file);
        raises ``SettingsError`` with a one-line reason."""
        try:
            text = cls.path(data_dir).read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            raise SettingsError(f"cannot read {cls.path(data_dir)}: {exc.strerror}") from None
        try:
            values = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{cls.path(data_dir)}: {exc}") from None
        return cls.from_dict(values)

    @classmethod
    def from_dict(cls, values: dict) -> Settings:
        settings = cls()
        for f in fields(cls):
            if f.name not in values:
                continue
            value = values[f.name]
            expected = TYPES.get(f.name, str)
            if not isinstance(value, expected) or (expected is list and not all(isinstance(w, str) for w in value)):
                raise SettingsError(f"{FILE_NAME}: {f.name} should be {_kind(expected)}, not {value!r}")
            setattr(settings, f.name, value)
        return settings

    def save(self, data_dir: Path) -> None:
        """Write the file whole (a temporary file, then a rename)."""
        lines = [HEADER]
        for key, value in asdict(self).items():
            if value is not None:
                lines.append(f"{key} = {_toml(value)}")
        path = self.path(data_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".toml.partial")
        partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(partial, path)


def nick_setting(data_dir: Path) -> str | None:
    """The nick in the settings file, if it has a usable one."""
    try:
        return Settings.load(data_dir).nick or None
    except SettingsError:
        return None


def _toml(value: str | bool | list[str]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_string(v) for v in value) + "]"
    return _string(value)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, except that TOML also
    wants DEL escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _kind(expected: type) -> str:
    return {list: "a list of strings", bool: "true or false", str: "a string"}[expected]
