"""Replication links as the I/O adapter sees them.

A link is a TCP stream running the replication protocol with one peer (a
sans-I/O ``Connection``; ``CatchUp`` decides when to dial and reads its
events). The adapter opens a link, then feeds it frames, its idle timer and
the store's answers to the reads it asked for, all through the runtime's
face (``Runtime.stream_opened``, ``stream_admit`` and ``stream_verified``,
``stream_timer``, ``store_answered``), never through this class; each of
those ends with the link's step here: the entries that arrived go to their
channel's engine and that channel steps (so they are committed before
anything is sent, as for a datagram), and the link's events go to the user.
Every entry point returns True when the adapter should hang up.

The frames of a read go in in two steps, as a batch of datagrams does
(``chat_app.runtime.arrivals``): ``admit`` decodes each and opens each entry
all but its signature; the signatures are checked wherever the adapter likes
(``verify_all``: on worker threads); ``verified`` hands each frame to the
link, and the entry it carries, opened and verified, to the check that
answers the link's ``EntryArrived``. An entry is opened only in a session
open for it: any other closes the link unopened, as it did before anything
was checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from chat_app.crypto import Unverified
from chat_app.events import Emit
from chat_app.address import Address
from chat_app.runtime.arrivals import verify_all
from chat_app.runtime.catchup import CatchUp, LinkOutcome, Read
from chat_app.runtime.channels import Channels
from chat_app.runtime.envelopes import Admitted
from chat_app.runtime.routing import Refused, SdsDatagram
from sync.replication import Connection, EntryMessage, Message, ReplicationError, read_message


@dataclass(frozen=True, slots=True)
class LinkFrame:
    """One frame of a read, decoded (or why it could not be)."""

    message: Message | ReplicationError
    entry: Admitted | SdsDatagram | Refused | None = None
    """The entry it carries as far as it is opened (``CatchUp.admit_entry``);
    None for no entry, or one not to be opened."""


@dataclass(frozen=True, slots=True)
class LinkRead:
    """The frames one read of a link brought, admitted, in their order."""

    frames: list[LinkFrame]
    to_verify: list[Unverified]
    """The entries' signatures left to check, in order: one verdict each for ``Links.verified``."""


class Links:
    def __init__(self, catchup: CatchUp, channels: Channels, stats: Counter[str], emit: Emit) -> None:
        self.catchup = catchup
        self.channels = channels
        self.stats = stats
        self._emit = emit

    def open(self, address: Address, *, initiator: bool, now: int) -> Connection:
        return self.catchup.open(self.channels.replicated, address, initiator=initiator, now=now)

    def received(self, conn: Connection, frames: Sequence[bytes] | None, now: int) -> bool:
        """The frames one read of a link brought, both steps at once, the
        signatures checked here (None: the stream ended or failed, and
        ``conn`` is already closed)."""
        if frames is None:
            return self._step(conn, now)
        read = self.admit(conn, frames)
        return self.verified(conn, read, verify_all(read.to_verify), now)

    def admit(self, conn: Connection, frames: Sequence[bytes]) -> LinkRead:
        """The first step of taking a read: each frame decoded, each entry of
        an open session opened all but its signature (``LinkRead.to_verify``)."""
        read: list[LinkFrame] = []
        to_verify: list[Unverified] = []
        for data in frames:
            message, entry = read_message(data), None
            if isinstance(message, EntryMessage) and conn.takes_entries(message.session_id):
                entry = self.catchup.admit_entry(message.entry)
                if isinstance(entry, Admitted):
                    to_verify.append(entry.envelope)
            read.append(LinkFrame(message, entry))
        return LinkRead(read, to_verify)

    def verified(self, conn: Connection, read: LinkRead, verdicts: Sequence[bool], now: int) -> bool:
        """The second step: ``verdicts`` on ``read.to_verify``, in its order.
        Each frame is taken in turn - the entry it carries checked - then
        the entries go to their engines and the channels they touched step
        once for all of them: one commit a read."""
        if len(verdicts) != len(read.to_verify):
            raise ValueError(f"{len(verdicts)} verdicts for {len(read.to_verify)} signatures")
        verdict = iter(verdicts)
        outcome, joined = LinkOutcome(), set(self.channels.conversations)
        for frame in read.frames:
            entry = frame.entry
            if isinstance(entry, Admitted):
                entry = self.catchup.entry_verified(entry, next(verdict))
            conn.take(frame.message, now)
            self.catchup.outcome(conn, joined, now, outcome, entry)
            if outcome.over or conn.closed is not None:
                break  # the session is over: what follows is not for it
        return self._apply(conn, outcome, now)

    def timer(self, conn: Connection, now: int) -> bool:
        conn.handle_timer(now)  # the link's own idle timeout
        return self._step(conn, now)

    def answer(self, conn: Connection, wanted: Read, answer, now: int) -> bool:
        """The store's answer to a read the link asked for (``CatchUp.reads``)."""
        self.catchup.answered(conn, wanted, answer)
        return self._step(conn, now)

    def _step(self, conn: Connection, now: int) -> bool:
        outcome = LinkOutcome()
        self.catchup.outcome(conn, set(self.channels.conversations), now, outcome)
        return self._apply(conn, outcome, now)

    def _apply(self, conn: Connection, outcome: LinkOutcome, now: int) -> bool:
        """Feed what the link brought (a whole read of it, or what an answer
        or its timer made) to the engines, then step each channel it touched:
        what it brought is committed before anything is sent, as for a
        datagram; True when the link is done."""
        conversations, peer = self.channels.conversations, self.catchup.links.get(conn)
        touched: dict[str, None] = {}
        for channel, entry in outcome.entries:
            if channel in conversations:
                conversations[channel].engine.receive_message(entry.parsed, now, peer)
                self.stats["replicated_in"] += 1
                touched[channel] = None
        kept = sum(self.channels.private.blind.replicated_in(tag, data, now) for tag, data in outcome.blind)
        self.stats["blind_replicated_in"] += kept
        self.stats.update(f"replication_{kind}" for kind in outcome.refused)
        self._emit(outcome.events)
        for channel in touched:
            self.channels.step(channel, now)
        return outcome.over or conn.closed is not None
