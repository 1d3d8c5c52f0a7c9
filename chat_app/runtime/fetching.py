"""Fetching missing messages, and serving others' fetches within a budget.

The engine reports a message as missing once, when it is first named. We
ask for it at once (or after ``FETCH_GRACE_MS`` when we are behind): its
author if we know where the author is, else everyone in the channel. While
the engine still misses it we ask again, on a schedule of our own that backs
off from ``FETCH_RETRY_MS`` to ``FETCH_RETRY_MAX_MS``: anyone can name ids
that exist nowhere, and one asked for every 2 s for the 5 minutes the
engine waits cost 150 requests (now 78); in an overloaded channel, where
requests and answers are lost, asking every few seconds is still what brings
the rest. At most
``MAX_WANTED`` ids are followed, the oldest let go first. A peer that holds
a requested message answers with the message's original datagram. Both
sides are pure bookkeeping here: they say what to send to whom, and the
runtime sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chat_app.bounded import Latest
from chat_app.net.frames import MAX_IDS, encode_fetch
from chat_app.address import Address
from chat_app.runtime.peers import PeerTable
from sync.core import Schedule

FETCH_GRACE_MS = 1_000
"""While we are behind (``BEHIND``), a message is fetched only once it has
been missing this long: it is most likely waiting in our socket queue, and
in an overloaded channel asking at once had authors send nearly every
message twice, on top of the load. Otherwise it is asked for at once."""
BEHIND = 32
"""Datagrams read off the socket in one go: this many say we are behind."""
FETCH_RETRY_MS = 500
"""The first wait for an answer. On a LAN one comes within tens of
milliseconds (a busy peer reads its socket every 150 ms at most); waiting
2 s before asking again - and before replicating with everyone - was most
of a lost message's delay at 30% loss, where half the requests or their
answers are lost."""
FETCH_RETRY_MAX_MS = 4_000
"""Each request not answered doubles the wait before the next, up to this:
the first that did not help also replicates with everyone in the channel,
and asking less often than that slowed an overloaded channel's catching up."""
MAX_WANTED = 16_384
"""Missing ids followed for retries (a few channels' worth of the engine's
``max_missing``); past this the oldest are let go."""
FETCH_BUDGET = 128
"""Messages served per requesting address per second: a fetch request is tiny
and its answer is not, so without a budget a spoofed request would turn us
into an amplifier."""

Send = tuple[bytes, Address | None]  # None: broadcast to the channel


class Backlog:
    """Whether our reading of the socket is behind (``BEHIND``): the one
    notion of it that every part waiting for an answer goes by - an SDS
    channel's fetches (``FETCH_GRACE_MS``), an SVS member's retries and the
    grace before it replicates (``svs_conversation``). What is missing, or
    the answer to what we asked for, is then most likely in our own queue."""

    def __init__(self) -> None:
        self.behind = False
        self._behind_at: int | None = None  # when we last read a batch that said so

    def read(self, datagrams: int, now: int) -> None:
        """``datagrams`` were read off the socket in one go."""
        self.behind = datagrams >= BEHIND
        if self.behind:
            self._behind_at = now

    def last_behind(self, now: int) -> int | None:
        """When our input was last behind: ``now`` until a read says it no
        longer is (a loop busy for seconds has not looked at its socket)."""
        return now if self.behind else self._behind_at


@dataclass(slots=True)
class Due:
    """A channel's fetch requests due now: the ids to ask of each address
    (None: of the whole channel), and how many were asked for before."""

    ids: dict[Address | None, list[str]]
    again: int = 0
    first_again: int = 0  # of ``again``, asked for a second time now

    def sends(self, channel: str) -> list[Send]:
        return [(encode_fetch(channel, ids[i:i + MAX_IDS]), target) for target, ids in self.ids.items()
                for i in range(0, len(ids), MAX_IDS)]

    @property
    def asked(self) -> int:
        return sum(len(ids) for ids in self.ids.values())


@dataclass(slots=True)
class _Wanted:
    channel: str
    author: str | None
    asked: int = 0  # requests sent so far


class Fetcher:
    def __init__(self) -> None:
        self._wanted: Latest[str, _Wanted] = Latest(MAX_WANTED)  # message id -> what to ask, oldest first
        self._due: Schedule[str] = Schedule()  # message id -> when to ask (again)
        self._served: dict[Address, tuple[int, int]] = {}  # address -> (second, messages served)

    def want(self, channel: str, missing: Iterable[tuple[str, str | None]], now: int, behind: bool = False) -> None:
        """``(message_id, author)`` pairs newly missing in ``channel``: to be
        asked for now, or after ``FETCH_GRACE_MS`` if we are behind."""
        at = now + FETCH_GRACE_MS if behind else now
        for mid, author in missing:
            if mid in self._wanted:
                continue
            self._due.set(mid, at)
            if (oldest := self._wanted.put(mid, _Wanted(channel, author))) is not None:
                self._due.discard(oldest)

    def next_due(self) -> int | None:
        return self._due.next_due()

    def requests(self, peers: PeerTable, now: int, still_missing: Callable[[str, str], bool]) -> dict[str, Due]:
        """What is due, per channel: the ids to ask of each author (or of the
        whole channel), and how many of them were asked for before (a fetch
        did not bring them). An id no longer missing (``still_missing(channel,
        id)``) is let go."""
        by_channel: dict[str, Due] = {}
        for mid in self._due.pop_due(now):
            wanted = self._wanted[mid]
            if not still_missing(wanted.channel, mid):
                del self._wanted[mid]
                continue
            due = by_channel.setdefault(wanted.channel, Due({}))
            due.again += wanted.asked > 0
            due.first_again += wanted.asked == 1
            self._due.set(mid, now + min(FETCH_RETRY_MS << wanted.asked, FETCH_RETRY_MAX_MS))
            wanted.asked += 1
            author = peers.get(wanted.author or "")
            due.ids.setdefault(author.address if author else None, []).append(mid)
        return by_channel

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
