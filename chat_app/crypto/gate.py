"""The gate every datagram passes: budgeted, deduplicated, verified, counted.

Checking a signature costs tens of microseconds; refusing a datagram before
checking costs one. So a flood of bad signatures is cheap to stop but dear
to verify, and the gate spends its verifications where they pay:

- ``VerifyBudget``: each source address may have ``rate`` verifications a
  second (``burst`` at once). A datagram that fails costs ``penalty`` tokens,
  so a source sending garbage runs dry at once, while a real peer - whose
  datagrams verify - never notices. Over budget, a datagram is dropped before
  any cryptography and counted ``over_budget``.
- Opening is two steps, so the signature math can run elsewhere (on worker
  threads, a batch at a time): ``admit`` spends the budget and makes every
  check but the signature, ``accept`` takes the signature's verdict and
  finishes; ``open`` is both at once.
- An SDS message inside is parsed and checked here, once (``check_sds``),
  against the ``sds`` bounds the engines use, and travels on in the
  ``Opened`` it returns.

Bytes seen before are not the gate's business: whoever routes what it
opens remembers where a datagram went (``chat_app.runtime.envelopes``), so
a resend or a replay costs a hash there and never reaches the gate.

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

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

from chat_app.bounded import Latest
from sync.sds import Config

from .channel import ChannelKey, Keyring, read_datagram
from .envelope import SDS_BOUNDS, EnvelopeError, Kind, KnownKeys, Opened, Unverified, seal
from .keys import Identity

__all__ = ["Gate", "VerifyBudget"]


@dataclass
class _Bucket:
    tokens: float
    at: int


class VerifyBudget:
    """A token bucket per source, bounded in the number of sources it remembers."""

    def __init__(self, rate: float = 2_000, burst: float = 500, penalty: float = 50, max_sources: int = 1024) -> None:
        self.rate, self.burst, self.penalty = rate, burst, penalty
        self._buckets: Latest[Hashable, _Bucket] = Latest(max_sources)

    def _bucket(self, source: Hashable, now: int) -> _Bucket:
        bucket = self._buckets.get(source)
        if bucket is None:
            bucket = _Bucket(self.burst, now)
            self._buckets.put(source, bucket)
        else:
            self._buckets.touch(source)
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
                 known_keys: KnownKeys | None = None, sds: Config = SDS_BOUNDS) -> None:
        self.identity = identity
        self.keyring = keyring if keyring is not None else Keyring()
        self.budget = budget if budget is not None else VerifyBudget()
        self.known_keys = known_keys if known_keys is not None else KnownKeys()
        self.sds = sds  # the bounds an SDS message inside is checked against: the engines'
        self.stats: Counter[str] = Counter()

    def seal(self, kind: Kind, payload: bytes, channel: ChannelKey | None = None) -> bytes:
        if channel is None:
            return seal(self.identity, kind, payload)
        return channel.seal(self.identity, kind, payload)

    def join(self, name: str, passphrase: str) -> ChannelKey:
        return self.keyring.join(name, passphrase)

    def add(self, key: ChannelKey) -> None:
        """Keep a key derived earlier (a restart need not pay scrypt again)."""
        self.keyring.add(key)

    def leave(self, key: ChannelKey) -> None:
        self.keyring.leave(key)

    def open(self, data: bytes, source: Hashable, now: int) -> Opened:
        """Verify one datagram from ``source``. Raises ``EnvelopeError`` only, after counting it."""
        envelope = self.admit(data, source, now)
        return self.accept(envelope, envelope.verify(), source, now)

    def admit(self, data: bytes, source: Hashable, now: int) -> Unverified:
        """Spend one of ``source``'s verifications on ``data`` and check all but
        its signature: what is left to verify. Raises ``EnvelopeError`` only, after counting it."""
        if not self.budget.spend(source, now):
            self.stats["over_budget"] += 1
            raise EnvelopeError("over_budget", f"{source} has used its verification budget")
        try:
            return read_datagram(data, self.known_keys, self.keyring)
        except EnvelopeError as exc:
            self._refused(exc, source, now)
            raise

    def accept(self, envelope: Unverified, verified: bool, source: Hashable, now: int) -> Opened:
        """An admitted envelope, given its signature's verdict (``Unverified.verify``),
        with the SDS message inside checked. Raises ``EnvelopeError`` only, after counting it."""
        try:
            opened = envelope.accept(verified, self.known_keys, self.sds)
        except EnvelopeError as exc:
            self._refused(exc, source, now)
            raise
        self.stats["verified"] += 1
        return opened

    def _refused(self, exc: EnvelopeError, source: Hashable, now: int) -> None:
        self.stats[exc.reason] += 1
        self.budget.punish(source, now)

    def admit_unbudgeted(self, data: bytes) -> Unverified:
        """Check ``data`` in every way but its signature (``Unverified.verify``,
        on any thread) without spending anyone's budget: for what a link we
        chose or accepted brings. Raises ``EnvelopeError``."""
        return read_datagram(data, self.known_keys, self.keyring)

    def accept_unbudgeted(self, envelope: Unverified, verified: bool) -> Opened:
        """What ``admit_unbudgeted`` let through, given its signature's verdict,
        with the SDS message inside checked. Raises ``EnvelopeError``."""
        return envelope.accept(verified, self.known_keys, self.sds)
