"""The wire rule: what the text fields of a payload may hold.

``chat_app.payload`` checks it when a payload is made - to send, or decoded
from a datagram - and nowhere else; mDNS announcements (a nick), ``/nick``
and ``--nick`` are held to the nick rule too:

- a nick: 1 to ``MAX_NICK`` characters, no control character (C0, DEL, C1,
  and the line and paragraph separators U+2028, U+2029, which would start a
  line of their own in a notice that names the nick), no bidirectional
  override or isolate (U+202A-U+202E, U+2066-U+2069), which would show the
  rest of a line - another nick, the text - reordered, no invisible
  character (Unicode's default-ignorable code points: zero-width spaces and
  joiners, variation selectors, Hangul fillers ...) and no space at either
  end, either of which would make a nick that looks like another's.
  A nick we take (``/nick``, ``--nick``) has no whitespace either: ``/msg``
  and ``/whois`` name a person in one word (``chosen_nick_problem``); a peer's
  nick with a space is still received, as peers before this rule sent it;
- the text of a message (``text``, ``me``, ``topic``): no control character
  but newline and tab. Overrides and isolates may be there: right-to-left
  writers use them, and every display removes them (``chat_app.inert_text``);
- an away reason: no control character at all, the separators included
  (it is shown on one line);
- a reaction: 1 to ``MAX_REACTION`` characters, no whitespace and no
  control character (it is shown beside others on one line).

Text is data: even what this rule lets through is shown only after
``inert_text.inert``.
"""

from __future__ import annotations

import re
import unicodedata

MAX_NICK = 32
MAX_REACTION = 16
ONE_LINE_KINDS = ("away",)
"""Kinds whose text is shown on one line: no newline or tab either."""
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1, line and paragraph separators
_MESSAGE_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab (09) and newline (0a)
_OVERRIDES = re.compile("[\u202a-\u202e\u2066-\u2069]")
_INVISIBLE = re.compile(  # Default_Ignorable_Code_Point (Unicode DerivedCoreProperties), the overrides apart
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2060-\u2065\u206a-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_SPACES = re.compile(r"\s")


def nick_problem(nick: str) -> str | None:
    """Why ``nick`` may not travel (one line), or None: the nick rule, for
    payloads, mDNS announcements, ``/nick`` and ``--nick`` alike."""
    if not 0 < len(nick) <= MAX_NICK:
        return f"a nick must be 1 to {MAX_NICK} characters"
    if found := _CONTROLS.search(nick):
        return f"a nick cannot hold a control character ({_named(found)})"
    if found := _OVERRIDES.search(nick):
        return f"a nick cannot hold a bidirectional override or isolate ({_named(found)})"
    if found := _INVISIBLE.search(nick):
        return f"a nick cannot hold an invisible character ({_named(found)})"
    if nick != nick.strip():
        return "a nick cannot begin or end with a space"
    return None


def chosen_nick_problem(nick: str) -> str | None:
    """Why the user may not take ``nick`` (one line), or None: the wire rule,
    and no whitespace, for a nick is addressed as one word (``/msg nick text``)."""
    if (problem := nick_problem(nick)) is not None:
        return problem
    if found := _SPACES.search(nick):
        return f"a nick cannot hold a space ({_named(found)})"
    return None


def without_invisibles(text: str) -> str:
    """``text`` without the code points that show as nothing (default ignorables)."""
    return _INVISIBLE.sub("", text)


def repaired_nick(nick: str, fallback: str) -> str:
    """A nick the user may take, made of ``nick`` (one saved before the rule):
    what the rule refuses dropped, spaces as ``_``, cut to ``MAX_NICK``;
    ``fallback`` (a valid nick) when nothing is left."""
    kept = _SPACES.sub("_", _INVISIBLE.sub("", _OVERRIDES.sub("", _CONTROLS.sub("", nick))).strip())[:MAX_NICK]
    return kept if chosen_nick_problem(kept) is None else fallback


def text_problem(text: str, kind: str = "text") -> str | None:
    """Why the text of a ``kind`` payload may not hold ``text`` (one line), or None."""
    if kind in ONE_LINE_KINDS:
        if found := _CONTROLS.search(text):
            return f"an away reason cannot hold a control character ({_named(found)})"
    elif found := _MESSAGE_CONTROLS.search(text):
        return f"a message cannot hold a control character ({_named(found)}; newline and tab may be there)"
    return None


def reaction_problem(text: str) -> str | None:
    """Why ``text`` is no reaction (one line), or None."""
    if not 0 < len(text) <= MAX_REACTION:
        return f"a reaction must be 1 to {MAX_REACTION} characters"
    if found := _CONTROLS.search(text) or _SPACES.search(text):
        return f"a reaction cannot hold a space or control character ({_named(found)})"
    return None


def _named(found: re.Match[str]) -> str:
    """The character found, named so that the reason stays one plain line."""
    code = ord(found.group())
    picture = 0x2400 + code if code < 0x20 else 0x2421 if code == 0x7F else None  # "SYMBOL FOR ESCAPE"
    name = unicodedata.name(chr(picture)).removeprefix("SYMBOL FOR ") if picture else unicodedata.name(chr(code), "")
    return f"U+{code:04X}" + (f" {name}" if name else "") + f" at character {found.start() + 1}"
