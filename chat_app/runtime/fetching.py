"""Fetching missing messages, and serving others' fetches within a budget.

When the engine reports a message as missing, we ask for it (at once, or
after ``FETCH_GRACE_MS`` when we are behind): its author if we know where
the author is, else everyone in the channel, at most once per id every
``FETCH_RETRY_MS``. A peer that holds a requested message answers
with the message's original SDS datagram. Both sides are pure bookkeeping
here: they say what to send to whom, and the runtime sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from chat_app.net.frames import encode_fetch
from chat_app.net.udp import Address
from chat_app.runtime.peers import PeerTable

FETCH_GRACE_MS = 1_000
"""While we are behind (``BEHIND``), a message is fetched only once it has
been missing this long (the engine reports what is still missing every
2 s): it is most likely waiting in our socket queue, and in an overloaded
channel asking at once had authors send nearly every message twice, on top
of the load. Otherwise it is asked for at once."""
BEHIND = 32
"""Datagrams read off the socket in one go: this many say we are behind."""
FETCH_RETRY_MS = 2_000
FETCH_BUDGET = 128
"""Messages served per requesting address per second: a fetch request is tiny
and its answer is not, so without a budget a spoofed request would turn us
into an amplifier."""
MAX_ASKED = 100_000
"""Ids remembered for the retry interval; past this the oldest are forgotten."""

Send = tuple[bytes, Address | None]  # None: broadcast to the channel


class Fetcher:
    def __init__(self) -> None:
        self._asked: dict[str, tuple[int, int | None]] = {}  # id -> (first reported missing, last asked)
        self._served: dict[Address, tuple[int, int]] = {}  # address -> (second, messages served)

    def requests(self, channel: str, missing: Iterable[tuple[str, str | None]], peers: PeerTable,
                 now: int, behind: bool = False) -> tuple[list[Send], int, int]:
        """(message_id, sender_id) pairs to ask for: the datagrams to send
        (to an author, or to None for the whole channel), how many ids, and
        how many of them were asked for before (a fetch did not bring them)."""
        by_target: dict[Address | None, list[str]] = {}
        again = 0
        for mid, sender in missing:
            first, asked_at = self._asked.setdefault(mid, (now, None))
            if behind and now - first < FETCH_GRACE_MS:
                continue
            if asked_at is not None:
                if now - asked_at < FETCH_RETRY_MS:
                    continue
                again += 1
            self._asked[mid] = (first, now)
            author = peers.get(sender or "")
            by_target.setdefault(author.address if author else None, []).append(mid)
        if len(self._asked) > MAX_ASKED:
            for mid in list(self._asked)[: MAX_ASKED // 2]:
                del self._asked[mid]
        sends = [(encode_fetch(channel, ids), target) for target, ids in by_target.items()]
        return sends, sum(len(ids) for ids in by_target.values()), again

    def answers(self, message_ids: list[str], addr: Address, wire_of: Callable[[str], bytes | None],
                now: int) -> tuple[list[bytes], int]:
        """The stored datagrams to send back to ``addr``, and how many ids
        were refused for being over its budget this second."""
        second, served = self._served.get(addr, (now // 1000, 0))
        if second != now // 1000:
            second, served = now // 1000, 0
            if len(self._served) > 1024:
                self._served.clear()
        out: list[bytes] = []
        refused = 0
        for mid in message_ids:
            if served >= FETCH_BUDGET:
                refused = 1
                break
            wire = wire_of(mid)
            if wire is not None:
                served += 1
                out.append(wire)
        self._served[addr] = (second, served)
        return out, refused
