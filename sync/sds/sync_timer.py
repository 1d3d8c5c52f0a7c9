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
"""

from __future__ import annotations

from .config import Config
from .ids import hash64


class SyncTimer:
    __slots__ = ("_config", "_seed", "round", "due", "at", "last_activity", "last_sent")

    def __init__(self, config: Config, sender_id: str, channel_id: str, now: int) -> None:
        self._config, self._seed = config, (sender_id, channel_id)
        self.round = self.due = self.at = 0
        self.last_activity = self.last_sent = now
        self.schedule(now)

    def schedule(self, now: int) -> None:
        self.round += 1
        backoff = hash64(*self._seed, str(self.round)) % (self._config.sync_backoff_ms + 1)
        self.due = now + self._config.sync_interval_ms
        self.at = self.due + backoff

    def should_send(self, now: int, repair_due: bool) -> bool:
        """At ``at``: send one now? (Either way, the next is scheduled.)"""
        quiet = self.last_activity < self.due
        keepalive = now - self.last_sent >= 2 * self._config.sync_interval_ms
        self.schedule(now)
        return quiet or repair_due or keepalive

    def export(self) -> list[int]:
        return [self.round, self.due, self.at, self.last_activity, self.last_sent]

    def restore(self, saved: list[int]) -> None:
        self.round, self.due, self.at, self.last_activity, self.last_sent = saved
