"""Tunables of the MVDS engine, and the retransmission schedule they define."""

from __future__ import annotations

import enum
from dataclasses import dataclass

SECOND = 1_000


class Mode(enum.StrEnum):
    """How a message travels (mvds.txt, "Flow"): pushed at once, or offered
    first and sent only when the peer asks for it."""

    BATCH = "batch"
    INTERACTIVE = "interactive"


@dataclass(frozen=True, slots=True)
class Config:
    epoch_ms: int = 300
    """Length of one epoch. At most one payload goes to a peer per epoch, and
    a new record or an ack waits for the next one (as the deployed MVDS did,
    with 300 ms epochs)."""

    # Retransmission: a record sent for the n-th time waits backoff(n) epochs.
    backoff_base_epochs: int = 2
    """First wait. Two epochs cover a LAN round trip: the peer answers on its
    next epoch, so the ack is normally back before the record is due again."""
    backoff_cap_epochs: int = 128
    """The wait doubles up to this (38 s at 300 ms epochs) ..."""
    backoff_floor_epochs: int = 16
    """... then drops back to this (4.8 s) and doubles again, so a record never
    waits so long that a peer who came back unnoticed waits minutes for it."""
    comeback_after_ms: int = 30 * SECOND
    """A peer not heard from this long is taken to be away; hearing from it
    again counts as its coming back: its records' backoff resets and they go
    out at once. (The runtime also says so with ``peer_seen`` when discovery
    finds it, or when it hears the peer's keep-alive, sent every ~23 s: a
    quiet peer that is there is never taken to be away.)"""

    interactive_from_bytes: int = 1024
    """Bodies at least this long go in interactive mode (and every body to a
    peer not heard from for ``comeback_after_ms``): while the peer is away
    only the 32-byte offer is retransmitted, the body travels once, on
    request. To a peer that is there, shorter ones are cheaper and two round
    trips faster pushed (batch)."""

    letter_after_ms: int = 3 * SECOND
    """A message not acknowledged this long (or any, to a peer silent for
    ``comeback_after_ms``) goes into a letter for the mailboxes too
    (``letters``): on a LAN an ack takes milliseconds, so three seconds and
    three sendings unanswered mean the peer has most likely gone."""

    # Limits: what a peer can make us hold, and what fits one UDP datagram.
    max_body_bytes: int = 32_000
    max_payload_bytes: int = 60_000
    max_acks_per_payload: int = 512
    max_records_per_peer: int = 4_096
    max_conversations_per_peer: int = 1_024
    max_peers: int = 4_096
    max_group_id_bytes: int = 64
    max_future_ms: int = 3_600 * SECOND
    """A message stamped further ahead of our clock than this is refused: its
    timestamp would otherwise hold back every later message of its sender."""
    recent_ids: int = 256
    """Ids of recently delivered messages kept per peer, so a re-offer of one
    (our ack was lost) is answered with an ack instead of a request."""

    def __post_init__(self) -> None:
        if min(self.epoch_ms, self.backoff_base_epochs, self.backoff_floor_epochs) < 1:
            raise ValueError("epochs and backoffs are at least 1")
        if not self.backoff_base_epochs <= self.backoff_cap_epochs >= self.backoff_floor_epochs:
            raise ValueError("the backoff cap must be at least the base and the floor")
        if self.max_body_bytes + self.max_acks_per_payload * 34 + 256 > self.max_payload_bytes:
            raise ValueError("a largest body and a full set of acks must fit one payload")

    def backoff(self, send_count: int) -> int:
        """Epochs to wait after a record's ``send_count``-th sending: doubling
        from the base up to the cap, then cycling from the floor to the cap."""
        interval, rest = self.backoff_base_epochs, max(send_count, 1) - 1
        while rest and interval * 2 <= self.backoff_cap_epochs:
            interval, rest = interval * 2, rest - 1
        if not rest:
            return interval
        cycle = []
        step = self.backoff_floor_epochs
        while step <= self.backoff_cap_epochs:
            cycle.append(step)
            step *= 2
        return cycle[(rest - 1) % len(cycle)]
