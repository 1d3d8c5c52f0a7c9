"""Everything one node keeps about one peer: the MVDS per-peer state.

``records`` are the spec's state: one per (type, message id), of type OFFER,
REQUEST or MESSAGE, each with its send count and the epoch it is next due.
There are never ACK records: an ack is owed once, for a message just
received, and waits in ``acks`` for the next payload only.

Order within a conversation comes from one rule on the sending side: a
payload that carries a message also carries every earlier message of the
same conversation this peer has not acknowledged (an earlier one still only
offered is sent outright, it would be requested anyway). A peer acknowledges
only what it delivered, so whatever a payload lacks of a conversation's past
the receiver already delivered: it delivers what is new in timestamp order
at once, with nothing to buffer, and one high-water timestamp per
conversation tells new from duplicate. Timestamps of one sender's
conversation strictly increase (the node stamps ``max(now, last + 1)``).
"""

from __future__ import annotations

from collections import Counter, OrderedDict

from sync.core.protocol import Peer

from . import payloads
from .config import Config
from .events import DmAcknowledged, DmDelivered, Event, Rejected
from .records import MESSAGE, OFFER, REQUEST, Key, Records
from .unacked import OwnMessage, Unacknowledged
from .wire import Message, Payload, message_id


class Session:
    """The MVDS state this node keeps for one ``peer``."""

    def __init__(self, peer: Peer, key: int, config: Config, stats: Counter) -> None:
        self.peer = peer
        self.key = key  # the node's handle for this session in its timer schedule
        self.config = config
        self.stats = stats
        self.records = Records(config, stats)
        self.own = Unacknowledged()  # our messages a record still refers to
        self.acks: dict[bytes, None] = {}  # owed once, never records
        self.acks_due: int | None = None
        self.delivered: dict[bytes, int] = {}  # group -> highest timestamp delivered
        self.recent: OrderedDict[bytes, None] = OrderedDict()
        self.letter_acks: OrderedDict[bytes, None] = OrderedDict()  # what we took from its letters (``letters``)
        self.last_payload_epoch = -1
        self.last_heard: int | None = None

    # ------------------------------------------------------------- sending

    def add_own(self, mid: bytes, message: OwnMessage, interactive: bool, epoch: int, now: int) -> None:
        """A new record is due at the next epoch - unless the peer seems away
        and earlier messages of the conversation wait for it: then it joins
        their next retransmission instead of sending them all once more."""
        due = epoch + 1
        if not interactive and self.silent(now):
            waiting = [self.records[(MESSAGE, m)].send_epoch for m in self.own.conversation(message.group_id)
                       if (MESSAGE, m) in self.records]
            due = max(due, min(waiting, default=due))
        self.own.add(mid, message)
        self.records.add(OFFER if interactive else MESSAGE, mid, due)

    def silent(self, now: int) -> bool:
        """Not heard from lately: probably away."""
        return self.last_heard is None or now - self.last_heard >= self.config.comeback_after_ms

    def reset_backoff(self, epoch: int) -> None:
        if self.records.reset(epoch):
            self.stats["backoff_reset"] += 1

    def next_epoch(self) -> int | None:
        """The epoch this session next has a payload to send, or None."""
        due = self.records.next_due()
        if self.acks_due is not None:
            due = self.acks_due if due is None else min(due, self.acks_due)
        return None if due is None else max(due, self.last_payload_epoch + 1)

    def compose(self, epoch: int, now: int) -> bytes | None:
        """This epoch's one payload for the peer, or None if nothing is due (see ``payloads``)."""
        return payloads.compose(self, epoch, now)

    # ----------------------------------------------------------- receiving

    def on_payload(self, payload: Payload, epoch: int, now: int, events: list[Event], live: bool = True) -> None:
        """A payload from the peer; not ``live``: its letter, through a
        mailbox - only its messages and acks count, and it says nothing of
        whether the peer is there (see ``letters``)."""
        if live:
            silent_since = self.last_heard
            self.last_heard = now
            if silent_since is None or now - silent_since >= self.config.comeback_after_ms:
                self.reset_backoff(epoch)
            self.letter_acks.clear()  # it is there: live acks and retransmissions take over
        for mid in payload.acks:
            self._on_ack(mid, events)
        if live:
            for mid in payload.requests:
                self._on_request(mid, epoch)
        # messages before offers: an offer of a message this very payload
        # carries is then answered with an ack, not a request
        for msg in sorted(payload.messages, key=lambda m: (m.timestamp, m.group_id, m.body)):
            mid = self._on_message(msg, epoch, now, events)
            if mid is not None and not live:
                self._ack_by_letter(mid)
        if live:
            for mid in payload.offers:
                self._on_offer(mid, epoch)

    def _on_ack(self, mid: bytes, events: list[Event]) -> None:
        for kind in (MESSAGE, OFFER):  # an acked offer: the peer holds it already
            if (kind, mid) in self.records:
                own = self._forget_own(mid, (kind, mid))
                self.stats["acknowledged"] += 1
                events.append(DmAcknowledged(self.peer, own.group_id, mid))
                return
        self.stats["ack_unknown"] += 1

    def _on_request(self, mid: bytes, epoch: int) -> None:
        if self.records.remove((OFFER, mid)):
            self.records.add(MESSAGE, mid, epoch + 1)
        elif (MESSAGE, mid) in self.records:  # asked again: our message was lost
            self.records.due_by((MESSAGE, mid), epoch + 1)
        else:
            self.stats["request_unknown"] += 1

    def _on_offer(self, mid: bytes, epoch: int) -> None:
        if mid in self.recent:  # delivered already: our ack was lost
            self._owe_ack(mid, epoch)
        elif (REQUEST, mid) in self.records:  # offered again: our request was lost
            self.records.due_by((REQUEST, mid), epoch + 1)
        elif len(self.records) >= self.config.max_records_per_peer:
            self.stats["records_full"] += 1
        else:
            self.records.add(REQUEST, mid, epoch + 1)

    def _on_message(self, msg: Message, epoch: int, now: int, events: list[Event]) -> bytes | None:
        """Deliver ``msg`` unless we had it; its id once acked (None: refused)."""
        if msg.timestamp > now + self.config.max_future_ms:
            self.stats["clock"] += 1
            events.append(Rejected("clock", f"clock: timestamp {msg.timestamp} is too far ahead"))
            return None
        group = msg.group_id
        if group not in self.delivered and len(self.delivered) >= self.config.max_conversations_per_peer:
            self.stats["conversations_full"] += 1
            events.append(Rejected("conversations_full", "conversations_full: too many conversations"))
            return None
        mid = message_id(group, msg.timestamp, msg.body)
        self.records.remove((REQUEST, mid))
        self._owe_ack(mid, epoch)  # every message received is acked, duplicates too
        if msg.timestamp <= self.delivered.get(group, -1):
            self.stats["duplicate"] += 1
            return mid
        self.delivered[group] = msg.timestamp
        self.recent[mid] = None
        if len(self.recent) > self.config.recent_ids:
            self.recent.popitem(last=False)
        self.stats["delivered"] += 1
        events.append(DmDelivered(self.peer, group, mid, msg.timestamp, msg.body))
        return mid

    def _ack_by_letter(self, mid: bytes) -> None:
        """Owe the peer, away, an ack in our letters too (the newest ``max_acks_per_payload``)."""
        self.letter_acks[mid] = None
        self.letter_acks.move_to_end(mid)
        if len(self.letter_acks) > self.config.max_acks_per_payload:
            self.letter_acks.popitem(last=False)

    def _owe_ack(self, mid: bytes, epoch: int) -> None:
        self.acks[mid] = None
        if self.acks_due is None:
            self.acks_due = epoch + 1

    # ------------------------------------------------------------- records

    def _forget_own(self, mid: bytes, key: Key) -> OwnMessage:
        self.records.remove(key)
        return self.own.pop(mid)

    # --------------------------------------------------------------- state

    def export(self) -> dict:
        return {
            "peer": _plain(self.peer),
            "key": self.key,
            "records": self.records.export(),
            "own": self.own.export(),
            "acks": list(self.acks),
            "acks_due": self.acks_due,
            "delivered": [[group, stamp] for group, stamp in self.delivered.items()],
            "recent": list(self.recent),
            "letter_acks": list(self.letter_acks),
            "last_payload_epoch": self.last_payload_epoch,
            "last_heard": self.last_heard,
        }

    @classmethod
    def restore(cls, state: dict, peer: Peer, config: Config, stats: Counter) -> Session:
        session = cls(peer, state["key"], config, stats)
        session.own.restore(state["own"])
        session.records.restore(state["records"])
        session.acks = dict.fromkeys(state["acks"])
        session.acks_due = state["acks_due"]
        session.delivered = {group: stamp for group, stamp in state["delivered"]}
        session.recent = OrderedDict.fromkeys(state["recent"])
        session.letter_acks = OrderedDict.fromkeys(state.get("letter_acks", ()))  # absent from states of before
        session.last_payload_epoch = state["last_payload_epoch"]
        session.last_heard = state["last_heard"]
        return session


def _plain(peer: Peer):
    """A peer as plain data: tuples (an address) as lists, as CBOR has them."""
    return [_plain(part) for part in peer] if isinstance(peer, tuple) else peer
