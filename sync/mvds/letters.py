"""Letters: what a mailbox carries to a peer that is away, and back.

A live payload to a peer that is away cannot reach it, and in interactive
mode it carries only offers, which only we could answer. A *letter* is the
payload a store peer (a mailbox) holds for the peer until it returns,
whoever is online then. So it is self-contained, written in batch mode
whatever mode the live session runs:

- every message of ours the peer has not acknowledged, each conversation
  oldest first - the order rule of ``session``, so the receiver delivers
  what is new in it at once, in order, and drops what it had (live or from
  an earlier letter) by the conversation's high-water timestamp;
- acks for the messages we took from the peer's letters (``letter_acks``):
  it is away, and would otherwise learn of them only when both sides are
  online together. Acks are never retransmitted, so they are kept for
  letters until the peer is heard from directly again; from then on the
  live session's retransmissions and acks do the work.

It carries no offers and no requests, and taking one is no sign of life:
the author wrote it when it wrote it (``MvdsNode.receive(letter=True)``).
Each letter replaces the author's previous one at the mailbox (the runtime
and the mailbox see to that), so it is written anew whenever what it would
hold may have changed, and it never needs to say what it supersedes.

A letter is *due* - worth handing to the mailboxes along with what the
live session sends - while a message of ours has waited ``letter_after_ms``
for its ack, or the peer has been silent for ``comeback_after_ms``, or
acks of its letters are owed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .payloads import ID_COST, MESSAGE_COST, PAYLOAD_HEADROOM
from .wire import Message, Payload

if TYPE_CHECKING:
    from .session import Session


def due(session: Session, now: int) -> bool:
    """Whether the peer probably will not get what we send it live."""
    if session.letter_acks:
        return True
    oldest = min((session.own[next(session.own.conversation(group))].timestamp for group in session.own.groups()),
                 default=None)
    return oldest is not None and (session.silent(now) or now - oldest >= session.config.letter_after_ms)


def compose(session: Session) -> bytes | None:
    """The letter for the peer: acks of its letters, then our unacknowledged
    messages, each conversation oldest first, as many as fit one payload (a
    prefix: the rest follows once the peer has acknowledged these)."""
    payload, budget = Payload(), session.config.max_payload_bytes - PAYLOAD_HEADROOM
    payload.acks.extend(session.letter_acks)
    budget -= ID_COST * len(payload.acks)
    for group in session.own.groups():
        for mid in session.own.conversation(group):
            own = session.own[mid]
            cost = MESSAGE_COST + len(own.group_id) + len(own.body)
            if cost > budget:
                break
            budget -= cost
            payload.messages.append(Message(group_id=own.group_id, timestamp=own.timestamp, body=own.body))
    return payload.SerializeToString() if payload.acks or payload.messages else None
