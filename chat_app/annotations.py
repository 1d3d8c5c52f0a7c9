"""What replies, reactions, edits and deletions make of the message they are about.

Each is a chat message of its own in the log (``chat_app.payload``), naming
its message in ``about``; nothing stored is ever changed. What a message has
become is derived from the message and the ones about it, in log order
((lamport, message_id), the order every peer agrees on), so every peer that
holds the same log shows the same thing, whatever order the messages arrived
in:

- an edit replaces the text, only from the author (the same sender key,
  whatever nick it takes); the last edit in log order wins. A file message
  takes none: its text is its offer, which an edit would change;
- a deletion, only from the author, leaves "(message deleted)" for good;
- a reaction is one per person (sender key) and emoji: a second identical
  one takes it back.

An edit or deletion by someone else changes nothing: ``derive`` names it as
refused, as it names everything about a message that cannot take one (a
reaction to a reaction). The store reads a message's annotations through an
index on ``about`` (``Store.about``), never by walking the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from chat_app.payload import ABOUT_KINDS

SHOWN_KINDS = ("text", "me", "topic", "reply", "file")
"""Kinds shown as a line of their own: the ones a reply, reaction, edit or deletion may be about."""
UNEDITABLE_KINDS = ("file",)
"""Kinds no edit may change: a file message's text is its offer."""
NOT_EDITABLE = "a file message cannot be edited: its text is the offer, which an edit would change"
CHANGING_KINDS = tuple(k for k in ABOUT_KINDS if k != "reply")
"""Kinds that change the message they are about rather than being shown as a line."""
DELETED = "(message deleted)"


class Logged(Protocol):
    """A stored message, as much of it as derivation reads."""

    message_id: str
    lamport: int
    sender_id: str
    kind: str | None
    text: str | None


@dataclass(frozen=True, slots=True)
class Derived:
    """A message as it now stands."""

    text: str
    edited: bool = False
    deleted: bool = False
    reactions: tuple[tuple[str, int], ...] = ()  # (emoji, how many people), in order of reacting

    @property
    def reaction_line(self) -> str:
        return reaction_line(self.reactions)


def reaction_line(reactions: Iterable[tuple[str, int]]) -> str:
    """Reactions as shown under the message: "👍 2  +1 1"."""
    return "  ".join(f"{emoji} {count}" for emoji, count in reactions)


def refusal(target: Logged | None, annotation: Logged) -> str | None:
    """Why ``annotation`` has no effect on ``target`` (None: the message it
    names is not in the log), or None when it counts."""
    if target is None:
        return "it is about a message not in the log"
    if target.kind not in SHOWN_KINDS:
        return f"it is about a {target.kind or 'undecodable'} message, which cannot take one"
    if annotation.kind in ("edit", "delete") and annotation.sender_id != target.sender_id:
        return f"an {annotation.kind} of someone else's message" if annotation.kind == "edit" \
            else "a deletion of someone else's message"
    if annotation.kind == "edit" and target.kind in UNEDITABLE_KINDS:
        return f"an edit of a {target.kind} message, which cannot take one"
    return None


def derive(target: Logged, about: Iterable[Logged]) -> tuple[Derived, list[Logged]]:
    """``target`` as the messages ``about`` it (in any order) leave it, and
    those of them that were refused, in log order."""
    text, edited, deleted = target.text or "", False, False
    reacted: dict[tuple[str, str], None] = {}  # (emoji, sender) currently on, in order of reacting
    refused = []
    for note in sorted(about, key=lambda m: (m.lamport, m.message_id)):
        if note.kind not in CHANGING_KINDS:
            continue
        if refusal(target, note) is not None:
            refused.append(note)
        elif note.kind == "edit" and not deleted:
            text, edited = note.text or "", True
        elif note.kind == "delete":
            deleted = True
        elif note.kind == "react":
            key = (note.text or "", note.sender_id)
            if key in reacted:
                del reacted[key]
            else:
                reacted[key] = None
    if deleted:
        return Derived(DELETED, deleted=True), refused
    counts: dict[str, int] = {}
    for emoji, _ in reacted:
        counts[emoji] = counts.get(emoji, 0) + 1
    return Derived(text, edited, reactions=tuple(counts.items())), refused
