"""The gate every datagram passes: budgeted, deduplicated, verified, counted.

Checking a signature costs tens of microseconds; refusing a datagram before
checking costs one. So a flood of bad signatures is cheap to stop but dear
to verify, and the gate spends its verifications where they pay:

- ``VerifyBudget``: each source address may have ``rate`` verifications a
  second (``burst`` at once). A datagram that fails costs ``penalty`` tokens,
  so a source sending garbage runs dry at once, while a real peer - whose
  datagrams verify - never notices. Over budget, a datagram is dropped before
  any cryptography and counted ``over_budget``.
- A cache of recently opened datagrams (by SHA-256 of the exact bytes):
  resends, repairs and fetch answers repeat bytes already verified, and a
  replay flood of one valid datagram costs a hash each. It is bounded in
  bytes as well as in entries (``bounded``): anyone with a key can
  send valid datagrams up to 64 KB, and each opened one holds its bytes and
  their parse.

A source over its budget loses its own datagrams too, good or bad: a peer
that sends more than ``rate`` a second from one address (or whose address
someone else floods) has the excess dropped unverified, like anyone's, and
recovers them as it recovers losses (resends, fetches, replication).

Source addresses on a LAN can be spoofed, so a flood sent under a real
peer's address spends that peer's budget; the budget bounds what any flood
costs the receiver, and the counters show it happening.

Pure: time comes in as ``now`` (milliseconds); no sockets, no clock.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from .bounded import ByteLru

from .channel import ChannelKey, Keyring, open_datagram
from .envelope import EnvelopeError, Kind, KnownKeys, Opened, check_sds, seal
from .keys import Identity

__all__ = ["Gate", "VerifyBudget"]


@dataclass
class _Bucket:
    tokens: float
    at: int


class VerifyBudget:
    """A token bucket per source, bounded in the number of sources it remembers."""

    def __init__(self, rate: float = 2_000, burst: float = 500, penalty: float = 50, max_sources: int = 1024) -> None:
        self.rate, self.burst, self.penalty, self.max_sources = rate, burst, penalty, max_sources
        self._buckets: OrderedDict[Hashable, _Bucket] = OrderedDict()

    def _bucket(self, source: Hashable, now: int) -> _Bucket:
        bucket = self._buckets.get(source)
        if bucket is None:
            bucket = self._buckets[source] = _Bucket(self.burst, now)
            if len(self._buckets) > self.max_sources:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(source)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate / 1000)
            bucket.at = now
        return bucket

    def spend(self, source: Hashable, now: int) -> bool:
        """Take one verification from ``source``'s budget; False if there is none left."""
        bucket = self._bucket(source, now)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def punish(self, source: Hashable, now: int) -> None:
        self._bucket(source, now).tokens -= self.penalty


class Gate:
    """Seals what this peer sends and opens what arrives, for public and private channels."""

    def __init__(self, identity: Identity, keyring: Keyring | None = None, budget: VerifyBudget | None = None,
                 known_keys: KnownKeys | None = None, recent: int = 4096, recent_bytes: int = 8 * 1024 * 1024) -> None:
        self.identity = identity
        self.keyring = keyring if keyring is not None else Keyring()
        self.budget = budget if budget is not None else VerifyBudget()
        self.known_keys = known_keys if known_keys is not None else KnownKeys()
        self.stats: Counter[str] = Counter()
        self._recent = ByteLru(recent, recent_bytes)  # digest -> the datagram opened

    def seal(self, kind: Kind, payload: bytes, channel: ChannelKey | None = None) -> bytes:
        if channel is None:
            return seal(self.identity, kind, payload)
        return channel.seal(self.identity, kind, payload)

    def join(self, name: str, passphrase: str) -> ChannelKey:
        self._recent.clear()
        return self.keyring.join(name, passphrase)

    def add(self, key: ChannelKey) -> None:
        """Keep a key derived earlier (a restart need not pay scrypt again)."""
        self._recent.clear()
        self.keyring.add(key)

    def leave(self, key: ChannelKey) -> None:
        self._recent.clear()  # nothing opened with that key may come out of the cache
        self.keyring.leave(key)

    def open(self, data: bytes, source: Hashable, now: int, digest: bytes | None = None) -> Opened:
        """Verify one datagram from ``source``. Raises ``EnvelopeError`` only, after counting it.
        ``digest``: ``data``'s SHA-256, if the caller has it already."""
        digest = digest or hashlib.sha256(data).digest()
        opened = self._recent.get(digest)
        if opened is not None:
            self.stats["repeated"] += 1
            return opened
        if not self.budget.spend(source, now):
            self.stats["over_budget"] += 1
            raise EnvelopeError("over_budget", f"{source} has used its verification budget")
        try:
            opened = open_datagram(data, self.known_keys, self.keyring)
            if opened.kind is Kind.SDS:
                opened = opened.with_message(check_sds(opened))
        except EnvelopeError as exc:
            self.stats[exc.reason] += 1
            self.budget.punish(source, now)
            raise
        self.stats["verified"] += 1
        self._recent.put(digest, opened, 2 * len(data))  # the bytes, and their parse
        return opened
