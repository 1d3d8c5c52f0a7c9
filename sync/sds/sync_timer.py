"""When to send a sync message (an empty message with our clock, causal
history and bloom filter, which is how acknowledgements and missing
messages travel when nobody speaks).

One falls due every ``sync_interval_ms``, plus a backoff of up to
``sync_backoff_ms`` derived from our id and a round counter (deterministic,
so a restored channel keeps the same schedule). It is skipped if anyone
broadcast in the channel since it fell due - someone else's message carries
the same information - unless a repair request is due, or we have been
silent for two intervals (a keep-alive, so a quiet reader stays counted as a
participant).

A burst's last content message gets a sync of its own (``settle_at``): one
falls due ``settle_sync_ms`` plus a backoff of up to as long after it, and
is skipped if anyone broadcast since - usually someone did, since everyone
who heard the message schedules one.
"""

from __future__ import annotations

from .config import Config
from .ids import hash64


class SyncTimer:
    __slots__ = ("_config", "_seed", "round", "due", "at", "last_activity", "last_sent", "settle_at",
                 "last_content")

    def __init__(self, config: Config, sender_id: str, channel_id: str, now: int) -> None:
        self._config, self._seed = config, (sender_id, channel_id)
        self.round = self.due = self.at = 0
        self.last_activity = self.last_sent = now
        self.settle_at: int | None = None
        self.last_content = now
        self.schedule(now)

    def schedule(self, now: int) -> None:
        self.round += 1
        backoff = hash64(*self._seed, str(self.round)) % (self._config.sync_backoff_ms + 1)
        self.due = now + self._config.sync_interval_ms
        self.at = self.due + backoff

    def heard(self, now: int, content: bool) -> None:
        """A message was broadcast in the channel (by us or anyone); ``content``:
        a chat message, not a sync."""
        self.last_activity = now
        if content and (settle := self._config.settle_sync_ms):
            # the backoff is a function of ``now`` alone: a batch's messages, which arrive at
            # one ``now``, work it out once
            if self.settle_at is None or self.last_content != now:
                self.settle_at = now + settle + hash64(*self._seed, "settle", str(now)) % (settle + 1)
            self.last_content = now

    def should_settle(self) -> bool:
        """At ``settle_at``: send the sync that settles a burst? Only if nobody
        broadcast since its last content message."""
        self.settle_at = None
        return self.last_activity <= self.last_content

    def should_send(self, now: int, repair_due: bool) -> bool:
        """At ``at``: send one now? (Either way, the next is scheduled.)"""
        quiet = self.last_activity < self.due
        keepalive = now - self.last_sent >= 2 * self._config.sync_interval_ms
        self.schedule(now)
        return quiet or repair_due or keepalive

    def export(self) -> list[int | None]:
        return [self.round, self.due, self.at, self.last_activity, self.last_sent, self.settle_at, self.last_content]

    def restore(self, saved: list[int | None]) -> None:
        """``saved`` by ``export``; one saved before settling syncs has five fields."""
        self.round, self.due, self.at, self.last_activity, self.last_sent = saved[:5]
        self.settle_at, self.last_content = saved[5:] or (None, self.last_activity)
