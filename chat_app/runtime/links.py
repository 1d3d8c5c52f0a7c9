"""Replication links as the I/O adapter sees them.

A link is a TCP stream running the replication protocol with one peer (a
sans-I/O ``Connection``; ``CatchUp`` decides when to dial and reads its
events). The adapter opens a link, then feeds it frames, its idle timer and
the store's answers to the reads it asked for, all through the runtime's
face (``Runtime.stream_opened``, ``stream_frames``, ``stream_timer``,
``store_answered``), never through this class; each of those ends with the
link's step here: the entries that arrived go to their channel's engine and
that channel steps (so they are committed before anything is sent, as for
a datagram), and the link's events go to the user. Every entry point
returns True when the adapter should hang up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from chat_app.events import Emit
from chat_app.address import Address
from chat_app.runtime.catchup import CatchUp, Read
from chat_app.runtime.channels import Channels
from sync.replication import Connection


class Links:
    def __init__(self, catchup: CatchUp, channels: Channels, stats: Counter[str], emit: Emit) -> None:
        self.catchup = catchup
        self.channels = channels
        self.stats = stats
        self._emit = emit

    def open(self, address: Address, *, initiator: bool, now: int) -> Connection:
        return self.catchup.open(self.channels.replicated, address, initiator=initiator, now=now)

    def received(self, conn: Connection, frames: Sequence[bytes] | None, now: int) -> bool:
        """The frames one read of a link brought (None: the stream ended or
        failed, and ``conn`` is already closed). Each frame is taken in turn -
        the entries it carries checked and fed to their engines - and the
        channels they touched step once for all of them: one commit a read."""
        touched: dict[str, None] = {}
        done = False
        for data in (None,) if frames is None else frames:
            self.catchup.received(conn, data, now)
            if done := self._take(conn, now, touched):
                break  # the session is over: what follows is not for it
        self._commit(touched, now)
        return done

    def timer(self, conn: Connection, now: int) -> bool:
        conn.handle_timer(now)  # the link's own idle timeout
        return self._step(conn, now)

    def answer(self, conn: Connection, wanted: Read, answer, now: int) -> bool:
        """The store's answer to a read the link asked for (``CatchUp.reads``)."""
        self.catchup.answered(conn, wanted, answer)
        return self._step(conn, now)

    def _take(self, conn: Connection, now: int, touched: dict[str, None]) -> bool:
        """Feed what the link's last frame (or answer, or timer) brought to the
        engines, noting the channels touched; True when the link is done."""
        conversations = self.channels.conversations
        outcome = self.catchup.outcome(conn, set(conversations), now)
        for channel, entry in outcome.entries:
            if channel in conversations:
                conversations[channel].engine.receive_message(entry.parsed, now, self.catchup.links.get(conn))
                self.stats["replicated_in"] += 1
                touched[channel] = None
        kept = sum(self.channels.private.blind.replicated_in(tag, data, now) for tag, data in outcome.blind)
        self.stats["blind_replicated_in"] += kept
        self.stats.update(f"replication_{kind}" for kind in outcome.refused)
        self._emit(outcome.events)
        return outcome.over or conn.closed is not None

    def _step(self, conn: Connection, now: int) -> bool:
        touched: dict[str, None] = {}
        done = self._take(conn, now, touched)
        self._commit(touched, now)
        return done

    def _commit(self, touched: dict[str, None], now: int) -> None:
        """Step each channel the link touched: what it brought is committed
        before anything is sent, as for a datagram."""
        for channel in touched:
            self.channels.step(channel, now)
