"""When a member sends its vector: the steady and suppression states of spec
section 4.4, with the Sync Interest Timer they share.

**Steady**: the timer runs 30 s +-10%; when it fires the member sends its
vector; an incoming vector that is up to date or newer resets it (someone
else just said what we would say). An incoming vector that is *outdated*
(it lacks something we have) moves the member to **suppression**: the timer
becomes 200 ms +-50%, incoming vectors are merged into an aggregate, and when
it fires the member sends its vector only if the aggregate is still outdated
- if another member answered first, it stays quiet. Either way it returns to
steady with a fresh 30 s timer.

An extension (``Config.repeat_ms``, off by default): after a publication
the steady timer first runs through a few short, doubling gaps - the member
repeats its vector - and only then the 30 s; an up-to-date vector from
someone else ends the repeats as it resets the timer.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import vector
from .config import Config
from .plain import name_from_plain, name_to_plain, vector_from_plain, vector_to_plain
from .jitter import Jitter
from .vector import Producer, Span

STEADY, SUPPRESSION = "steady", "suppression"


class SyncTimer:
    def __init__(self, config: Config, jitter: Jitter, now: int) -> None:
        self.config = config
        self.jitter = jitter
        self.state = STEADY
        self.due = now  # a fresh member announces itself at once
        self.last_emit = now  # when this member last sent its vector (``Config.keepalive_ms``)
        self.aggregate: dict[Producer, int] = {}
        self.aggregate_spans: list[Span] = []  # what the aggregated vectors spoke for
        self.repeat_gaps: list[int] = []  # the steady gaps left before the 30 s one, after a publication
        self.repeating = False  # the steady timer runs one of those gaps: what fires is a repeat

    def heard(self, theirs: Mapping[Producer, int], spans: list[Span], mine: Mapping[Producer, int],
              now: int) -> None:
        """An incoming vector (speaking for ``spans``), already merged into ``mine``."""
        if self.state == SUPPRESSION:
            for producer, seq in theirs.items():
                self.aggregate[producer] = max(seq, self.aggregate.get(producer, 0))
            self.aggregate_spans += [s for s in spans if s not in self.aggregate_spans]
        elif vector.is_outdated(theirs, mine, spans):
            self.state = SUPPRESSION
            self.due = now + self._suppression()
            self.aggregate = dict(theirs)
            self.aggregate_spans = spans
        else:
            self.repeat_gaps, self.repeating = [], False
            self.due = now + self._periodic()  # up to date or newer: ours can wait

    def fire(self, now: int, mine: Mapping[Producer, int]) -> bool | None:
        """At the timer: whether to send the vector (None: not due yet); then
        ``steady`` either way."""
        if now < self.due:
            return None
        return self.state == STEADY or vector.is_outdated(self.aggregate, mine, self.aggregate_spans)

    def keepalive_due(self, now: int) -> bool:
        keepalive = self.config.keepalive_ms
        return bool(keepalive) and now >= self.last_emit + keepalive

    def steady(self, now: int) -> None:
        """Back to steady, with a fresh 30 s timer (after any vector we send),
        or the next repeat's gap."""
        self.state = STEADY
        self.aggregate = {}
        self.aggregate_spans = []
        self.repeating = bool(self.repeat_gaps)
        if self.repeating:
            self.due = now + self.jitter.around(self.repeat_gaps.pop(0), 0.5)
        else:
            self.due = now + self._periodic()

    def published(self, now: int) -> None:
        """We just sent the vector of a new publication of ours."""
        self.repeat_gaps = [self.config.repeat_ms << i for i in range(self.config.repeats)] \
            if self.config.repeat_ms else []
        self.steady(now)

    def next_due(self) -> int:
        if self.config.keepalive_ms:
            return min(self.due, self.last_emit + self.config.keepalive_ms)
        return self.due

    def _suppression(self) -> int:
        if self.config.suppression_curve == "decaying":
            return self.jitter.decaying(self.config.suppression_ms)
        return self.jitter.around(self.config.suppression_ms, self.config.suppression_jitter)

    def _periodic(self) -> int:
        return self.jitter.around(self.config.sync_interval_ms, self.config.sync_jitter)

    # -------------------------------------------------------------- state

    def export(self) -> dict:
        return {
            "state": self.state, "sync_due": self.due, "last_emit": self.last_emit,
            "repeat_gaps": list(self.repeat_gaps), "repeating": self.repeating,
            "aggregate": vector_to_plain(self.aggregate),
            "aggregate_spans": [[name_to_plain(s.lo), name_to_plain(s.hi)] for s in self.aggregate_spans],
        }

    def restore(self, saved: dict) -> None:
        """Back to what ``export`` gave; a state saved before repeats (or
        keep-alives) lacks their fields."""
        self.state, self.due = saved["state"], saved["sync_due"]
        self.last_emit = saved.get("last_emit", 0)
        self.repeat_gaps = list(saved.get("repeat_gaps", []))
        self.repeating = saved.get("repeating", False)
        self.aggregate = vector_from_plain(saved["aggregate"])
        self.aggregate_spans = [Span(name_from_plain(lo), name_from_plain(hi)) for lo, hi in saved["aggregate_spans"]]
