"""Tunables of the SDS engine, with the defaults the app runs on."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .bloom import wire_size
from .dialects import check_compact_size

SECOND = 1_000
MINUTE = 60 * SECOND


@dataclass(frozen=True, slots=True)
class Config:
    # Send
    causal_history_size: int = 3
    """How many preceding log ids each message carries (the spec suggests 2-3)."""

    # Bloom filter of received ids. 500 ids at 1% fills 622 bytes on the wire
    # (7 slices x 685 bits + a 22-byte header): a short chat message with
    # three history entries still fits one 1,400-byte datagram.
    #
    # Sizing it to the message rate. The filter rolls over at capacity and
    # keeps the newest half, so it always holds at least the last
    # capacity / 2 ids. A message of ours is acknowledged by a peer's filter
    # only if that id is still in it when the peer next sends (a message or a
    # sync), so with R messages a second in the whole channel
    #
    #     capacity / 2  >=  R x (gap between a peer's sends + its lag in reading)
    #
    # 500 covers R = 250/s for a peer that chats every 100 ms with 0.9 s of
    # lag, or R = 25/s for a silent reader heard only by its 10 s syncs (those
    # fall back on causal history, which acknowledges a message as soon as any
    # peer's next message names it). ``bloom_capacity_for`` computes it; past
    # about 1,100 ids at 1% the filter alone outgrows a 1,400-byte datagram.
    bloom_capacity: int = 500
    bloom_error_rate: float = 0.01

    # Acknowledgement
    ack_certainty: float = 1e-6
    """Bloom filters alone acknowledge a message once the chance that every
    filter holding it is a false positive falls below this (with full filters
    at 1% that takes three distinct peers; emptier filters, fewer) *and* every
    active participant's filter holds it (see ``participant_timeout_ms``)."""

    participant_timeout_ms: int = 60 * SECOND
    """Bloom filters acknowledge a message only once every participant heard
    from within this window holds it (a peer that went quiet stops counting).
    Each participant sends at least a sync every ``2 * sync_interval_ms``, so
    a silent but present reader is never mistaken for a departed one."""

    max_participants: int = 256
    """Senders remembered (when last heard, their latest bloom filter); the
    least recently heard is forgotten beyond this, and anyone silent for
    ``lost_after_ms``. Anyone can make up sender ids: this bounds what a
    flood of them costs."""
    max_filter_bytes: int = 1024 * 1024
    """The participants' latest bloom filters, kept for the watch, in bytes
    together (a filter may be up to a datagram long): beyond it the least
    recently heard participants' filters are let go first. 55 filters of
    @waku/sds's 18,752 bytes, 1,600 of ours."""

    max_watched: int = 1024
    """Acknowledged own messages watched for peers that still lack them
    (see ``Channel._acknowledge``); the oldest are let go beyond this."""

    resend_unacknowledged_ms: int = 3 * SECOND
    resend_possibly_acknowledged_ms: int = 15 * SECOND
    resend_max_interval_ms: int = 60 * SECOND
    """Each resend of a message doubles its period, up to this: a message
    nobody took after a few tries most likely waits for an absent peer."""
    max_resends_per_s: int = 50
    """All resends of a channel together, at most (a second's worth may go
    at once): a peer alone with 100,000 unacknowledged messages must not
    spend its time resending them."""
    max_resent_copies_per_s: int = 200
    """The same cap counted in copies: every participant receives each
    resend, so a larger group may have fewer messages resent (a 20-member
    channel 10 a second). When a channel is overloaded nothing is
    acknowledged in time, and resending at the full rate to everyone
    multiplied the overload (a 20 x 10 msg/s run: three resent copies
    received for every new message)."""

    # Incoming buffer. Anyone with a key can name made-up history and have
    # their messages wait for it, so everything a sender makes us keep -
    # held messages and the missing ids they introduce - is charged to that
    # sender, in count and in bytes, and bounded per sender and in all.
    lost_after_ms: int = 5 * MINUTE
    """How long a missing dependency is waited for before it is ``Lost``.
    Long enough for one full SDS-R round (up to ``repair_t_max_ms`` to ask,
    up to ``repair_t_max_ms`` to be answered)."""
    max_incoming: int = 10_000
    """Messages waiting for their history, from all senders together."""
    max_incoming_bytes: int = 16 * 1024 * 1024
    """Their wire bytes and the missing ids they stand for, together. Past
    either bound the sender holding the most bytes gives up its oldest
    first (an id no message waits for, then a message); a message from that
    very sender is refused (``incoming_full``)."""
    max_held_per_sender: int = 256
    """Messages one sender may have waiting: at 30% loss in a 20-peer x
    10 msg/s channel a peer holds dozens per sender for a few seconds.
    Beyond it the sender's next one is refused (``held_full``) and comes
    back as a resend, a fetch answer or by replication."""
    max_held_bytes_per_sender: int = 512 * 1024
    """The bytes one sender may have us keep for it: its waiting messages
    and the missing ids charged to it. About 15 of @waku/sds's 34 KB
    messages, 500 of ours."""
    max_missing: int = 4096
    """Missing ids tracked, from all senders; those named only by sync
    messages (which nobody waits for) up to a quarter of it. Beyond, a sync
    message's unknown history is not chased."""
    max_missing_per_sender: int = 512
    """Missing ids charged to one sender: the message that first named
    them, or a sync message while no message waits for them. Two full
    causal histories of @waku/sds (200 each): a late joiner's first
    messages may name many ids we never held."""
    max_gapped_per_sender: int = 8
    """When history is given up as lost, a sender's messages that waited for
    it are delivered with the gap only while that sender has at most this
    many waiting; beyond, they are refused (``unfounded``) and the history
    is not recorded as lost. Honest history goes missing for good rarely
    (its author, or whoever cites it, can serve it); a sender whose many
    messages all wait for history nobody has is making it up."""
    max_lost: int = 1024
    """Ids given up as lost that are remembered (one referenced again after
    that is waited for again)."""

    # Periodic sync
    sync_interval_ms: int = 10 * SECOND
    sync_backoff_ms: int = 3 * SECOND
    """A sync is skipped if anyone broadcast in the channel during a random
    backoff of up to this long after it fell due."""
    settle_sync_ms: int = 1 * SECOND
    """A sync also falls due this long, plus a backoff of up to as long, after
    the last content message sent or received, and is skipped if anyone
    broadcast since (0: never). The last message of a burst names nothing
    after it: lost to someone, it was otherwise named only by the next
    periodic sync, up to ``sync_interval_ms`` later. In a busy channel the
    next message comes first, so nothing more is sent."""

    # SDS-R repair
    repair_t_min_ms: int = 30 * SECOND
    repair_t_max_ms: int = 120 * SECOND
    repair_max_requests: int = 3
    expected_participants: int = 100
    repair_cache_size: int = 4096
    """Wire bytes kept for messages we may be asked to rebroadcast..."""
    repair_cache_bytes: int = 8 * 1024 * 1024
    """... and at most this many bytes of them, the oldest let go first."""

    # Limits on what the network may hand us
    max_datagram_bytes: int = 65_507
    max_id_length: int = 256
    max_entries: int = 256
    """Causal history and repair entries per message: @waku/sds sends its
    last 200 messages as history."""
    max_hint_bytes: int = 1024
    max_future_ms: int = 7 * 24 * 60 * MINUTE
    """Reject Lamport timestamps this far beyond our clock: one peer must not
    be able to drive the channel's clock to the end of uint64."""

    def __post_init__(self) -> None:
        positive = (
            "bloom_capacity", "resend_unacknowledged_ms",
            "resend_possibly_acknowledged_ms", "lost_after_ms", "max_incoming", "max_incoming_bytes",
            "max_held_per_sender", "max_held_bytes_per_sender", "max_missing", "max_missing_per_sender",
            "max_lost", "max_filter_bytes", "repair_cache_bytes", "sync_interval_ms", "participant_timeout_ms",
            "repair_t_max_ms", "expected_participants", "max_datagram_bytes",
            "max_id_length", "max_entries", "max_watched", "max_participants",
            "resend_max_interval_ms", "max_resends_per_s", "max_resent_copies_per_s",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")
        if self.causal_history_size < 0 or self.repair_max_requests < 0 or self.max_gapped_per_sender < 0:
            raise ValueError("sizes must be >= 0")
        if not 0 < self.bloom_error_rate < 1 or not 0 < self.ack_certainty < 1:
            raise ValueError("probabilities must lie strictly between 0 and 1")
        if not 0 <= self.repair_t_min_ms < self.repair_t_max_ms:
            raise ValueError("need 0 <= repair_t_min_ms < repair_t_max_ms")
        check_compact_size(wire_size(self.bloom_capacity, self.bloom_error_rate))

    @staticmethod
    def bloom_capacity_for(messages_per_s: float, gap_ms: int, lag_ms: int = 1000) -> int:
        """The capacity whose newest half still holds every id a peer received
        ``gap_ms + lag_ms`` ago, at ``messages_per_s`` in the whole channel
        (see the note on ``bloom_capacity``)."""
        return max(2, math.ceil(2 * messages_per_s * (gap_ms + lag_ms) / SECOND))

    @property
    def num_response_groups(self) -> int:
        """SDS-R: one response group per 128 participants."""
        return self.expected_participants // 128 + 1

    @property
    def log_ack_certainty(self) -> float:
        return math.log(self.ack_certainty)
