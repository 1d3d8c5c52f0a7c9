"""What goes into the one payload a node sends a peer in an epoch.

Owed acknowledgements first (they ride on any payload, even before they are
due); then, for each conversation with a message due, its unacknowledged
messages up to the latest due one, oldest first - the order rule of
``session``; then the offers and requests due, as ids. Everything counts
against ``max_payload_bytes``; what does not fit waits as long as what did.
To a peer that seems away, messages and offers travel together on one
schedule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .records import MESSAGE, OFFER, Key
from .wire import Message, Payload

if TYPE_CHECKING:
    from .session import Session

ID_COST = 34  # bytes an id adds to a payload (tag, length, 32 bytes)
MESSAGE_COST = 24  # a message's framing beyond its group id and body
PAYLOAD_HEADROOM = 64  # kept free of a payload's budget: the estimates above are close, not exact


def compose(session: Session, epoch: int, now: int) -> bytes | None:
    """This epoch's one payload for the peer, or None if nothing is due."""
    if epoch <= session.last_payload_epoch:
        return None
    due = session.records.pop_due(epoch)
    payload, budget = Payload(), session.config.max_payload_bytes - PAYLOAD_HEADROOM
    if session.acks:  # owed acks ride on any payload, even before they are due
        acks = list(session.acks)[: session.config.max_acks_per_payload]
        for mid in acks:
            del session.acks[mid]
        payload.acks.extend(acks)
        budget -= ID_COST * len(acks)
        session.acks_due = epoch + 1 if session.acks else None
    sent: set[Key] = set()
    silent = session.silent(now)
    budget = _add_messages(session, payload, due, epoch, budget, sent, silent)
    ids = [key for key in due if key not in sent and key in session.records]
    if silent and any(kind == OFFER for kind, _ in ids):
        # to a peer away, offers too travel together, on one schedule
        taken = set(ids)
        ids += [key for key in session.records if key[0] == OFFER and key not in sent and key not in taken]
    offers: list[Key] = []
    for key in ids:
        if budget < ID_COST:
            break
        (payload.offers if key[0] == OFFER else payload.requests).append(key[1])
        budget -= ID_COST
        session.records.sent(key, epoch)
        sent.add(key)
        if key[0] == OFFER:
            offers.append(key)
    if silent and len(offers) > 1:
        session.records.align(offers, epoch)
    # What did not fit waits as long as what did: it would otherwise
    # drag the same unacknowledged prefix along again before its acks
    # could be back.
    for key in due:
        if key not in sent and key in session.records:
            session.records.postpone(key, epoch + session.config.backoff_base_epochs)
    if not (payload.acks or payload.offers or payload.requests or payload.messages):
        return None
    session.last_payload_epoch = epoch
    session.stats["payloads_sent"] += 1
    return payload.SerializeToString()

def _add_messages(session: Session, payload: Payload, due: list[Key], epoch: int, budget: int, sent: set[Key],
                  silent: bool) -> int:
    """Each conversation with a due message sends its unacknowledged
    messages up to the latest due one, oldest first (see the module
    docstring of ``session`` for why); a prefix when they do not all fit. To a peer
    that seems away they then travel as one train, at the pace of the
    most-sent among them, rather than each dragging the rest along on
    its own schedule."""
    latest: dict[bytes, int] = {}
    for kind, mid in due:
        if kind == MESSAGE:
            own = session.own[mid]
            latest[own.group_id] = max(latest.get(own.group_id, -1), own.timestamp)
    for group, upto in latest.items():
        train: list[Key] = []
        for mid in session.own.conversation(group):
            own = session.own[mid]
            cost = MESSAGE_COST + len(own.group_id) + len(own.body)
            if own.timestamp > upto or (cost > budget and payload.messages):
                break
            budget -= cost
            if session.records.remove((OFFER, mid)):  # an earlier offer goes as the message itself
                session.records.add(MESSAGE, mid, epoch)
                session.stats["offer_promoted"] += 1
            payload.messages.append(Message(group_id=own.group_id, timestamp=own.timestamp, body=own.body))
            session.records.sent((MESSAGE, mid), epoch)
            sent.add((MESSAGE, mid))
            sent.add((OFFER, mid))
            train.append((MESSAGE, mid))
        if silent and len(train) > 1:
            session.records.align(train, epoch)
    return budget
