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

It keeps only what a member joining later needs: chat messages. Members
mark every other datagram - sync and ephemeral messages, fetch requests -
as passing (kind 0x51, ``chat_app.crypto.channel.lasting``), which the store
reads without the key; a passing datagram still tells it a member is there
(and is served), it is just not kept. What it cannot tell without the key
is a member's datagram from garbage someone sent under the (public) tag:
so it keeps up to ``LIMIT`` per channel (the oldest go first), and members
refuse the garbage when served (``undecryptable``).

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
signs a request with the key of that tag (``Mailbox``): never to a peer
that merely announces the tag.
"""

from __future__ import annotations

from collections import deque

from chat_app.crypto import blind_id
from chat_app.crypto.channel import is_passing
from chat_app.address import Address
from chat_app.runtime.mailbox import MAILBOX_TAG, Mailbox

LIMIT = 100_000
"""Datagrams kept per blind channel."""
RESERVE_MS = 60_000
"""A peer is served the whole channel at most this often."""
PACE = 64
"""Datagrams sent per tick (``TICK_MS``) while serving: a burst a socket buffer holds."""
TICK_MS = 20
QUEUE = 4_096
"""Datagrams waiting to be sent at most: past it, a mailbox answers no collect request (it will be asked again)."""


class BlindStore:
    def __init__(self, store, tags: list[bytes]) -> None:
        self.store = store
        self.tags = set(tags)
        self._served: dict[tuple[bytes, Address], int] = {}
        self._queue: deque[tuple[bytes, Address]] = deque()
        self._next = None
        self.mailbox = Mailbox(store)

    @staticmethod
    def link_name(tag: bytes) -> str:
        return f"~{tag.hex()}"

    def replicated(self) -> tuple[str, ...]:
        """What a replication link is offered: each kept channel's datagram set (a mailbox is no channel)."""
        return tuple(datagram_set(t) for t in sorted(self.tags) if t != MAILBOX_TAG)

    def replicated_in(self, tag: bytes, data: bytes, now: int) -> bool:
        """Keep a datagram a replication link brought (it checked the tag and kind); False if held already."""
        return self.store.blind.keep(tag, blind_id(data), data, now, LIMIT)

    def keeps(self, tag: bytes | None, private: set[bytes]) -> bool:
        """Is a datagram under ``tag`` ours to keep blind (``private``: the tags we can open)?"""
        return tag is not None and (tag in self.tags or (MAILBOX_TAG in self.tags and tag not in private))

    def announced(self, channels: tuple[str, ...]) -> list[bytes]:
        """The tags among a peer's announced channels that we keep blind (and so serve it)."""
        tags = [_tag(name) for name in channels]
        return [t for t in tags if t is not None and t in self.tags and t != MAILBOX_TAG]

    def received(self, tag: bytes, data: bytes, addr: Address, now: int) -> str:
        """Keep a datagram of a blind channel unless it only passes; what to
        count (``blind_kept``, ``blind_repeated``, ``blind_passed``). A member
        sending one is served the channel. Anything else reaching a mailbox
        is a letter or a request (``Mailbox``)."""
        if tag not in self.tags or tag == MAILBOX_TAG:
            counted, letters = self.mailbox.received(tag, data, addr, now, QUEUE - len(self._queue))
            self._send(letters, addr, now)
            return counted
        if is_passing(data):
            counted = "blind_passed"
        else:
            counted = "blind_kept" if self.store.blind.keep(tag, blind_id(data), data, now, LIMIT) else "blind_repeated"
        if tag in self.tags:
            self.serve(tag, addr, now)
        return counted

    def serve(self, tag: bytes, addr: Address, now: int) -> None:
        """Send ``addr`` everything held for ``tag``, unless it was served lately."""
        if now - self._served.get((tag, addr), -RESERVE_MS) < RESERVE_MS:
            return
        self._served[(tag, addr)] = now
        if len(self._served) > 4096:
            self._served = {k: t for k, t in self._served.items() if now - t < RESERVE_MS}
        self._send(self.store.blind.held(tag), addr, now)

    def _send(self, datagrams: list[bytes], addr: Address, now: int) -> None:
        """Queue ``datagrams`` for ``addr``, paced (``due``)."""
        if datagrams:
            self._queue += [(data, addr) for data in datagrams]
            self._next = self._next or now

    def deadline(self) -> int | None:
        return self._next if self._queue else None

    def due(self, now: int) -> list[tuple[bytes, Address]]:
        """The datagrams to send now (a paced slice of the queue)."""
        if not self._queue or self._next is None or now < self._next:
            return []
        out = [self._queue.popleft() for _ in range(min(PACE, len(self._queue)))]
        self._next = now + TICK_MS if self._queue else None
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
