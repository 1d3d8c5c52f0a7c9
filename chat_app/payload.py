"""What travels inside SDS ``content``: a small CBOR map.

    {"kind": "text" | "me" | "topic" | "typing", "nick": str, "text": str,
     "seq": int (the author's per-channel sequence number, from 1), "sent_at": ms}

A ``file`` message offers a file: its text is the offer
(``chat_app.file_offer``), checked as strictly as the rest. It is parsed
once, here, and the ``FileOffer`` travels on with the payload (``offer``) to
the message's delivery.

A ``topic`` is a chat message like any other (stored, synced, replicated):
the channel's topic is the text of the latest one in log order.

``typing``, ``leave`` (sent on a clean exit) and ``away`` travel as SDS
ephemeral messages and carry no seq; only ``away`` carries text, its reason
(empty: back).
Decoding is strict: a payload from the network that does not fit is refused
with a one-line reason and the message is shown as undecodable, never crashes.

What the text fields may hold is the wire rule (``chat_app.wire_rule``),
checked here when a payload is made - to send, or decoded from a datagram -
and nowhere else.

A ``reply``, ``react``, ``edit`` or ``delete`` is about another message of
the same log, named by its id in ``about``: lowercase hex of a channel's
message id (32) or a direct message's (64), checked on decode like every
field. They are chat messages (stored, synced, replicated) so that every
peer derives the same thing from the same log (``chat_app.annotations``).
A ``delete`` carries no text.

Text is data: even what this rule lets through is shown only after
``inert_text.inert``, and so is what was stored before the rule existed.
"""

from __future__ import annotations

import copy

import re
from dataclasses import dataclass, field

import cbor2

from chat_app.file_offer import FileOffer, OfferError
from chat_app.wire_rule import nick_problem, reaction_problem, text_problem


KINDS = ("text", "me", "topic", "typing", "leave", "away", "reply", "react", "edit", "delete", "file")
EPHEMERAL_KINDS = ("typing", "leave", "away")
MAX_TEXT = 4000
MAX_INT64 = 2**63 - 1
"""The largest ``seq`` or ``sent_at`` we accept: what an SQLite INTEGER holds."""


ABOUT_KINDS = ("reply", "react", "edit", "delete")
"""Kinds about another message: they name it in ``about``, the others never do."""
ABOUT_LENGTHS = (32, 64)
"""How long a message id is in hex: a channel's (SDS, SVS), a direct message's (MVDS)."""
_ABOUT = re.compile("[0-9a-f]+")



class PayloadError(ValueError):
    """Content that is not a valid sds-chat payload."""


def about_problem(kind: str, about: str) -> str | None:
    """Why a ``kind`` payload may not name ``about`` (one line), or None."""
    if kind not in ABOUT_KINDS:
        return None if not about else f"a {kind} message is about no other message"
    if len(about) not in ABOUT_LENGTHS or not _ABOUT.fullmatch(about):
        return f"a {kind} needs the id of the message it is about: lowercase hex of 32 or 64 digits"
    return None


@dataclass(frozen=True, slots=True)
class Payload:
    kind: str
    nick: str
    text: str = ""
    seq: int = 0
    sent_at: int = 0
    about: str = ""  # the message a reply, reaction, edit or deletion is about: its id
    offer: FileOffer | None = field(default=None, init=False, repr=False, compare=False)
    """A ``file`` message's offer, parsed from ``text`` when the payload is made."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise PayloadError(f"unknown payload kind {self.kind!r}")
        if (problem := nick_problem(self.nick)) is not None:
            raise PayloadError(problem)
        if len(self.text) > MAX_TEXT:
            raise PayloadError(f"text longer than {MAX_TEXT} characters")
        if (problem := text_problem(self.text, self.kind)) is not None:
            raise PayloadError(problem)
        if not (0 <= self.seq <= MAX_INT64 and 0 <= self.sent_at <= MAX_INT64):
            raise PayloadError("seq and sent_at must be between 0 and 2^63 - 1")
        if self.kind not in EPHEMERAL_KINDS and (self.seq < 1 or not self.text and self.kind != "delete"):
            raise PayloadError("a chat message needs text and a sequence number >= 1")
        if self.kind == "file":
            try:
                object.__setattr__(self, "offer", FileOffer.parse(self.text))
            except OfferError as exc:
                raise PayloadError(str(exc)) from None
        if (problem := about_problem(self.kind, self.about)) is not None:
            raise PayloadError(problem)
        if self.kind == "react" and (problem := reaction_problem(self.text)) is not None:
            raise PayloadError(problem)
        if self.kind == "delete" and self.text:
            raise PayloadError("a deletion carries no text")

    def numbered(self, seq: int) -> Payload:
        """This payload, checked when it was made, with the sequence number it
        leaves with (a message held back gets its number when it goes)."""
        if seq == self.seq:
            return self
        if not 1 <= seq <= MAX_INT64:
            raise PayloadError("seq must be between 1 and 2^63 - 1")
        numbered = copy.copy(self)
        object.__setattr__(numbered, "seq", seq)
        return numbered

    def encode(self) -> bytes:
        data = {"kind": self.kind, "nick": self.nick, "sent_at": self.sent_at}
        if self.kind not in EPHEMERAL_KINDS:
            data |= {"text": self.text, "seq": self.seq}
        elif self.kind == "away":
            data["text"] = self.text
        if self.about:
            data["about"] = self.about
        return cbor2.dumps(data, canonical=True)

    @classmethod
    def try_decode(cls, content: bytes) -> Payload | None:
        """The payload, or None when the content is not one of ours."""
        try:
            return cls.decode(content)
        except PayloadError:
            return None

    @classmethod
    def decode(cls, content: bytes) -> Payload:
        """The payload in ``content``, or ``PayloadError`` with the reason.

        A received message's payload is read once, where it is checked
        (routing), and travels on with the message (``Checked.decoded``) to
        its retrieval hint and its delivery."""
        try:
            data = cbor2.loads(content)
        except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise PayloadError(f"content is not CBOR ({exc.__class__.__name__})") from None
        if not isinstance(data, dict):
            raise PayloadError("content is not a CBOR map")
        fields = {"kind": str, "nick": str, "text": str, "seq": int, "sent_at": int, "about": str}
        values = {}
        for name, kind in fields.items():
            if name in data:
                if not isinstance(data[name], kind) or isinstance(data[name], bool):
                    raise PayloadError(f"field {name!r} is not a {kind.__name__}")
                values[name] = data[name]
        if "kind" not in values or "nick" not in values:
            raise PayloadError("payload lacks kind or nick")
        return cls(**values)
