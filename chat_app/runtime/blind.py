"""Keeping and serving a private channel without its key: a blind store.

A store peer started with ``--channel ~<tag>`` (the channel's tag in hex,
which members see in announcements and which reveals nothing) announces
the tag like a member, so members send it the channel's datagrams. It cannot
open them: it keeps each one by its blind id (SHA-256 of the bytes, and
members' ciphertext is deterministic, so a message is one row however many
members pass it on), and when a peer of the channel appears - a datagram
with the tag from a new address, or an announcement listing it - it sends
that peer every datagram it holds, paced. The member opens and verifies
them as it does any datagram: the store can drop or withhold, never forge.

Who is served must first show it receives at its address: a source
address is forged at will on a LAN, and mDNS announcements name any address,
so serving whoever a datagram or announcement names would let one tiny
forged datagram have the store send a third host the whole channel. So, the
way DTLS and QUIC check an address before sending much to it, a serve for
an address not proven sends it a challenge instead (``Cookies``: a cookie
bound to the tag and the address, kept nowhere; 34 bytes, fewer than the
smallest datagram that asks, so no gain), at most ``CHALLENGE_RATE`` a
second to one address (``blind_challenged``). A member sends the cookie back
under the same tag (``chat_app.crypto.channel.proof``), and the store, the
cookie good, remembers the address as proven for ``PROVEN_MS`` (the
``PROVEN`` latest) and serves it (``blind_proven``); a cookie forged, stale,
or minted for another address or tag is dropped (``blind_bad_proof``). What
arrives under the tag from an address not proven is kept all the same: only
serving waits. A late member is served one round trip later.

It keeps only what a member joining later needs: chat messages. Members
mark every other datagram - sync and ephemeral messages, fetch requests -
as passing (kind 0x51, ``chat_app.crypto.channel.lasting``), which the store
reads without the key; a passing datagram still tells it a member is there
(and is served, once proven), it is just not kept. What it cannot tell without the key
is a member's datagram from garbage someone sent under the (public) tag:
so it keeps up to ``LIMIT`` datagrams and ``BYTES`` bytes per channel (the
oldest go first), and members refuse the garbage when served
(``undecryptable``).

Nor can it check a signature, so what anyone sends under the tag costs it
no verification; each source address still has a budget (``RATE`` a second,
``BURST`` at once), spent before any store work: over it, a datagram is
dropped and counted ``blind_over_budget``. Serving is bounded too: a serve
holds no datagrams, only its place in the channel, and each tick sends a
page read from the store (``PACE`` in all, the serves taking turns); at most
``SERVING`` run at once, and a peer asking past that is refused
(``blind_serve_busy``), not marked served: its next datagram or
announcement asks again. A late member is served the whole channel, later.

It also catches up over replication, where a public channel's entries are
addressed by author and sequence number, which it cannot read. So a private
channel goes by another name on replication links, its datagram set
``=<tag>``: the set of its chat messages' datagrams, each by its blind id.
Members can compute it (the ciphertext of a message is a function of its
stored envelope), a blind store holds it, and set reconciliation over blind
ids (an item per datagram, ``(blind id, log_id("=<tag>"), 1)``) tells each
side which datagrams the other lacks, both ways. Members replicate a private
channel with each other by this set too, never by its logs, which would show
an outsider who wrote how much (``catchup.replicated_as``).

A mailbox store (``chat_app.runtime.mailbox``) is a blind store that also
keeps letters under any other tag it is handed, and hands them to whoever
signs a request with the key of that tag (``Mailbox``), at an address
proven as above (the challenge goes under that tag): never to a peer that
merely announces the tag, nor to where a replayed request points.
"""

from __future__ import annotations

import hmac
import os
from collections import Counter, deque
from dataclasses import dataclass

from chat_app.bounded import Latest
from chat_app.crypto import VerifyBudget, blind_id
from chat_app.crypto.channel import COOKIE_BYTES, challenge, is_passing
from chat_app.address import Address
from chat_app.runtime.mailbox import MAILBOX_TAG, Mailbox

LIMIT = 100_000
"""Datagrams kept per blind channel."""
BYTES = 64 << 20
"""Bytes kept per blind channel (the oldest go first), at most about 1,000 datagrams as large as a datagram."""
RATE, BURST = 200, 500
"""Datagrams a source address may have kept or served with a second (``BURST`` at once); past it they are dropped."""
SERVING = 64
"""Serves running at once: past it, a peer asking is refused (it asks again with its next datagram)."""
RESERVE_MS = 60_000
"""A peer is served the whole channel at most this often."""
PACE = 64
"""Datagrams sent per tick (``TICK_MS``) while serving: a burst a socket buffer holds."""
TICK_MS = 20
COOKIE_MS = 30_000
"""A cookie's time bucket: one is good in the bucket it was minted in and the next (30 to 60 s)."""
CHALLENGE_RATE, CHALLENGE_BURST = 1, 2
"""Challenges sent one address a second (``CHALLENGE_BURST`` at once): a lost one goes again on its next datagram."""
PROVEN = 4_096
"""Proven (tag, address) pairs remembered: past it, the one proven longest ago must prove again."""
PROVEN_MS = 600_000
"""An address stays proven this long: a LAN hands addresses out again."""
QUEUE = 4_096
"""Letters waiting to be sent at most: past it, a mailbox answers no collect request (it will be asked again)."""
QUEUE_BYTES = 16 << 20
"""Bytes of letters waiting to be sent past which a mailbox answers no collect request (one adds 4 MiB at most)."""


@dataclass
class _Serve:
    """A peer being sent a channel: where in it (received_at, rowid), and up to when it was held."""
    tag: bytes
    addr: Address
    until: int
    after: tuple[int, int] = (-1, -1)


class Cookies:
    """Stateless cookies: a truncated HMAC-SHA256 of a tag, an address and
    a time bucket under a secret of this process alone, so a host sees the
    cookie for an address only if it receives there, and nothing is kept per
    challenge sent."""

    def __init__(self) -> None:
        self._secret = os.urandom(32)

    def mint(self, tag: bytes, addr: Address, now: int) -> bytes:
        return self._cookie(tag, addr, now // COOKIE_MS)

    def valid(self, tag: bytes, addr: Address, cookie: bytes, now: int) -> bool:
        """Was ``cookie`` minted for ``tag`` and ``addr`` in this bucket or the one before?"""
        bucket = now // COOKIE_MS
        return any(hmac.compare_digest(cookie, self._cookie(tag, addr, b)) for b in (bucket, bucket - 1))

    def _cookie(self, tag: bytes, addr: Address, bucket: int) -> bytes:
        where = f"{addr[0]}|{addr[1]}".encode()
        message = tag + len(where).to_bytes(1, "big") + where + bucket.to_bytes(8, "big", signed=True)
        return hmac.digest(self._secret, message, "sha256")[:COOKIE_BYTES]


class BlindStore:
    def __init__(self, store, tags: list[bytes]) -> None:
        self.store = store
        self.tags = set(tags)
        self._served: dict[tuple[bytes, Address], int] = {}
        self._queue: deque[tuple[bytes, Address]] = deque()  # letters, held until sent
        self._queued_bytes = 0
        self._serving: deque[_Serve] = deque()  # serves of a channel, by place: their datagrams stay in the store
        self._next = None
        self._budget = VerifyBudget(rate=RATE, burst=BURST, penalty=0, max_sources=4096)
        self._cookies = Cookies()
        self._proven: Latest[tuple[bytes, Address], int] = Latest(PROVEN)  # -> when it was proven
        self._challenges = VerifyBudget(rate=CHALLENGE_RATE, burst=CHALLENGE_BURST, penalty=0, max_sources=4096)
        self.mailbox = Mailbox(store, self)
        self.stats: Counter[str] = Counter()
        """Counted beside what ``received`` returns (a serve refused); the runtime shares its own."""

    @staticmethod
    def link_name(tag: bytes) -> str:
        return f"~{tag.hex()}"

    def replicated(self) -> tuple[str, ...]:
        """What a replication link is offered: each kept channel's datagram set (a mailbox is no channel)."""
        return tuple(datagram_set(t) for t in sorted(self.tags) if t != MAILBOX_TAG)

    def replicated_in(self, tag: bytes, data: bytes, now: int) -> bool:
        """Keep a datagram a replication link brought (it checked the tag and kind); False if held already."""
        return self.store.blind.keep(tag, blind_id(data), data, now, LIMIT, BYTES)

    def keeps(self, tag: bytes | None, private: set[bytes]) -> bool:
        """Is a datagram under ``tag`` ours to keep blind (``private``: the tags we can open)?"""
        return tag is not None and (tag in self.tags or (MAILBOX_TAG in self.tags and tag not in private))

    def announced(self, channels: tuple[str, ...]) -> list[bytes]:
        """The tags among a peer's announced channels that we keep blind (and so serve it)."""
        tags = [_tag(name) for name in channels]
        return [t for t in tags if t is not None and t in self.tags and t != MAILBOX_TAG]

    def received(self, tag: bytes, data: bytes, addr: Address, now: int) -> str:
        """Keep a datagram of a blind channel unless it only passes; what to
        count (``blind_kept``, ``blind_repeated``, ``blind_passed``, or
        ``blind_over_budget``: dropped first). A member sending one is served
        the channel. Anything else reaching a mailbox is a letter or a
        request (``Mailbox``, which budgets its own)."""
        if tag not in self.tags or tag == MAILBOX_TAG:
            counted, letters = self.mailbox.received(tag, data, addr, now, self._room())
            self._send(letters, addr, now)
            return counted
        if not self._budget.spend(addr, now):
            return "blind_over_budget"
        if is_passing(data):
            counted = "blind_passed"
        else:
            kept = self.store.blind.keep(tag, blind_id(data), data, now, LIMIT, BYTES)
            counted = "blind_kept" if kept else "blind_repeated"
        if tag in self.tags:
            self.serve(tag, addr, now)
        return counted

    def proved(self, tag: bytes, cookie: bytes, addr: Address, now: int) -> str:
        """A proof from ``addr``: if its cookie is good, ``addr`` is proven
        for ``tag`` and served - a channel kept, or, at a mailbox, the
        letters filed under ``tag`` (its cookie was minted for a signed
        collect only); what to count (``blind_proven``, ``mailbox_proven``,
        ``blind_bad_proof``, ``blind_over_budget``)."""
        channel = tag in self.tags and tag != MAILBOX_TAG
        letters = not channel and MAILBOX_TAG in self.tags and tag != MAILBOX_TAG
        if not (channel or letters):
            return "blind_bad_proof"
        if not self._budget.spend(addr, now):
            return "blind_over_budget"
        if not self._cookies.valid(tag, addr, cookie, now):
            return "blind_bad_proof"
        self._proven.put((tag, addr), now)
        if channel:
            self.serve(tag, addr, now)
            return "blind_proven"
        self._send(self.mailbox.collected(tag, addr, now, self._room())[1], addr, now)
        return "mailbox_proven"

    def proven(self, tag: bytes, addr: Address, now: int) -> bool:
        """Has ``addr`` sent back a cookie for ``tag`` in the last ``PROVEN_MS``?"""
        return now - self._proven.get((tag, addr), -PROVEN_MS) < PROVEN_MS

    def serve(self, tag: bytes, addr: Address, now: int) -> None:
        """Send ``addr`` everything held for ``tag`` (paced, a page at a time:
        ``due``) if it is proven to receive there (else challenge it), unless
        it was served lately - or ``SERVING`` serves run already, or the
        peers served lately fill their table: refused then
        (``blind_serve_busy``), not remembered, so it is served when it asks again."""
        if now - self._served.get((tag, addr), -RESERVE_MS) < RESERVE_MS:
            return
        if not self.proven(tag, addr, now):
            self.challenge(tag, addr, now)
            return
        if len(self._served) >= 4096:
            self._served = {k: t for k, t in self._served.items() if now - t < RESERVE_MS}
        if len(self._serving) >= SERVING or len(self._served) >= 4096:
            self.stats["blind_serve_busy"] += 1
            return
        self._served[(tag, addr)] = now
        self._serving.append(_Serve(tag, addr, now))
        self._next = self._next or now

    def challenge(self, tag: bytes, addr: Address, now: int) -> None:
        """Ask ``addr`` to show it receives there (``CHALLENGE_RATE`` a second at most, and not past ``QUEUE``)."""
        if len(self._queue) >= QUEUE or not self._challenges.spend(addr, now):
            return
        self.stats["blind_challenged"] += 1
        self._send([challenge(tag, self._cookies.mint(tag, addr, now))], addr, now)

    def _room(self) -> int:
        """Letters that may still be queued: none past ``QUEUE_BYTES``."""
        return QUEUE - len(self._queue) if self._queued_bytes < QUEUE_BYTES else 0

    def _send(self, datagrams: list[bytes], addr: Address, now: int) -> None:
        """Queue ``datagrams`` (letters, or a challenge) for ``addr``, paced (``due``)."""
        if datagrams:
            self._queue += [(data, addr) for data in datagrams]
            self._queued_bytes += sum(len(data) for data in datagrams)
            self._next = self._next or now

    def deadline(self) -> int | None:
        return self._next if self._queue or self._serving else None

    def due(self, now: int) -> list[tuple[bytes, Address]]:
        """The datagrams to send now: a paced slice of the letters and challenges, then of
        the serves, each read from the store, one page a serve, in turn."""
        if not (self._queue or self._serving) or self._next is None or now < self._next:
            return []
        out = [self._queue.popleft() for _ in range(min(PACE, len(self._queue)))]
        self._queued_bytes -= sum(len(data) for data, _ in out)
        while len(out) < PACE and self._serving:
            serve, room = self._serving.popleft(), PACE - len(out)
            page = self.store.blind.page(serve.tag, serve.after, serve.until, room)
            out += [(data, serve.addr) for _, data in page]
            if len(page) == room:  # more may follow: its next turn comes after the others'
                serve.after = page[-1][0]
                self._serving.append(serve)
        self._next = now + TICK_MS if self._queue or self._serving else None
        return out


DATAGRAM_SET = "="


def datagram_set(tag: bytes) -> str:
    """The name of a private channel's datagram set on replication links."""
    return f"{DATAGRAM_SET}{tag.hex()}"


def datagram_set_tag(name: str) -> bytes | None:
    """The tag behind a datagram set's name (None: not one)."""
    return _tag("~" + name[1:]) if name.startswith(DATAGRAM_SET) else None


def _tag(link_name: str) -> bytes | None:
    """The tag a ``~`` name announces (None: not one; announcements are anyone's to make up)."""
    if not link_name.startswith("~") or len(link_name) != 33:
        return None
    try:
        return bytes.fromhex(link_name[1:])
    except ValueError:
        return None
