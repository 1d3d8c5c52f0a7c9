"""Tunables of the SVS engine; the defaults are the spec's numbers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Config:
    sync_interval_ms: int = 30_000  # the Sync Interest Timer (spec 4.1)
    sync_jitter: float = 0.10  # ... random +-10%, uniform
    suppression_ms: int = 200  # the suppression interval (spec 4.4)
    suppression_jitter: float = 0.50  # ... +-50%, uniform
    # "uniform" (2021, above) or "decaying": SVS v2's c*(1 - e^((v - c)/(c/10))), v uniform in [0, c),
    # c = suppression_ms - most members wait nearly c, a few fire early, so fewer answer at once.
    suppression_curve: str = "uniform"
    fetch_timeout_ms: int = 1_000  # a data interest unanswered this long is retried (the Interest Lifetime)
    # Not in the spec (0: off): a retry of a data interest that falls due less than this long after the
    # host's own input was last behind (``Channel.behind_at``) is put off till then: its answer may be
    # queued, not yet read.
    behind_timeout_ms: int = 0
    behind_fetch_window: int = 0  # ... and meanwhile up to this many in flight (0: ``fetch_window``)
    fetch_backoff_max_ms: int = 8_000  # retries wait 1, 2, 4, 8, 8 ... s
    fetch_window: int = 64  # data interests in flight at once, over all producers
    max_datagram_bytes: int = 1_200  # larger sync interests are split (1500-byte MTU, with the envelope)
    cache_size: int = 256  # publications kept (and exported) to answer data interests; older: DataWanted
    holders_per_producer: int = 4  # members remembered, per producer, as having its latest data
    future_bootstrap_s: int = 86_400  # v3: a vector whose bootstrap time is further ahead is ignored
    # Not in the spec (0: off): the longest a member stays silent. In a quiet group the periodic sync
    # interest is suppressed for all but one member; an application that tells who is present by their
    # datagrams sets this, and a member that sent no sync interest for this long sends its vector.
    keepalive_ms: int = 0
    # Not in the spec (0: off): after a publication the member says its vector again, ``repeat_ms`` +-50%
    # later, then at twice that gap, ``repeats`` times in all, unless it hears an up-to-date vector from
    # someone else first (Trickle's suppression, RFC 6206). Under loss, a member that missed the
    # publication's sync interest learns of it within seconds instead of at the next periodic one.
    repeat_ms: int = 0
    repeats: int = 3
    # What a member with a valid key can make another keep (not in the spec). Any member's vector may name
    # producers nobody else has heard of, at any number: at most ``max_producers`` are kept in all, and of
    # those at most ``max_hearsay`` known only from others' vectors (a producer that speaks for itself - its
    # own sync interest - or whose publication arrived is no longer hearsay). With ``adopt_own_seq`` a
    # vector showing our own producer ahead of us moves us past it (a member restored from a stale state
    # never reuses a number); a runtime that stores its number before sending has no stale state, and turns
    # it off so that no vector can make it skip numbers.
    max_producers: int = 1 << 20
    max_hearsay: int = 1 << 20
    adopt_own_seq: bool = True

    def __post_init__(self) -> None:
        if not (0 <= self.sync_jitter < 1 and 0 <= self.suppression_jitter < 1):
            raise ValueError("jitter is a fraction below 1")
        if min(self.sync_interval_ms, self.suppression_ms, self.fetch_timeout_ms, self.fetch_window,
               self.cache_size, self.holders_per_producer, self.max_producers, self.max_hearsay) < 1 \
                or min(self.repeat_ms, self.repeats, self.behind_timeout_ms, self.behind_fetch_window) < 0:
            raise ValueError("intervals, windows and sizes must be positive")
        if self.suppression_curve not in ("uniform", "decaying"):
            raise ValueError("suppression_curve is 'uniform' or 'decaying'")
        if self.max_datagram_bytes < 256:
            raise ValueError("max_datagram_bytes below 256 cannot hold a sync interest")
