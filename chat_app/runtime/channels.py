"""The channels we are in: one conversation each (SDS or SVS), the commands
that act on them, and the one step every channel takes.

The step is where "commit before send" lives for every channel engine:
``run_step`` (``chat_app.runtime.step``) drains the engine, translates and
commits; only then
are its datagrams queued (``Outbox``), what is missing asked for
(``Fetcher``, then catch-up with the peers of the channel), the authors,
typists, leavers and away notices handed to the parts that track people, and
last the events queued for the user. A failed commit sends nothing. The
engine names a missing message once; asking again while it is still missing
is the ``Fetcher``'s schedule, on the runtime's timer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.channel_names import BadChannelName, channel_spec
from chat_app.address import Address
from chat_app.payload import Payload, PayloadError
from chat_app.runtime.catchup import CatchUp
from chat_app.runtime.conversation import Conversation
from chat_app.runtime.envelopes import Envelopes
from chat_app.runtime.fetching import Backlog, Fetcher
from chat_app.runtime.outbox import Outbox
from chat_app.runtime.people import People
from chat_app.runtime.peers import PeerTracker
from chat_app.runtime.private import PrivateChannels
from chat_app.runtime.protocols import ProtocolMismatch, open_conversation, protocol_for
from chat_app.runtime.step import StepFailed, run_step
from chat_app.runtime.typing_indicator import TypingIndicator
from chat_app.store import Store
from sync.sds import Config, LocalProtocolError

SVS_NAMES_KEPT = 1024
"""Channel names peers announced as SVS, remembered for a later ``/join``:
the latest announced. Anyone may make keys and announce 20 names with each;
an honest peer's names come back with its next announcement."""


class Channels:
    def __init__(self, store: Store, envelopes: Envelopes, config: Config, *, private: PrivateChannels,
                 outbox: Outbox, fetcher: Fetcher, backlog: Backlog, catchup: CatchUp, typing_state: TypingIndicator,
                 peers: PeerTracker, people: People, stats: Counter[str], emit: Callable[[list[ev.AppEvent]], None],
                 replicate: Callable[[Address, int], None]) -> None:
        self.store, self.envelopes, self.config = store, envelopes, config
        self.private, self.outbox, self.fetcher, self.backlog, self.catchup = private, outbox, fetcher, backlog, catchup
        self.typing_state, self.peers, self.people, self.stats = typing_state, peers, people, stats
        self._emit, self._replicate = emit, replicate
        self.conversations: dict[str, Conversation] = {}
        self.announced_svs: Latest[str, None] = Latest(SVS_NAMES_KEPT)  # link names announced as SVS

    def svs_announced(self, link_names: tuple[str, ...]) -> None:
        """A peer announced these of its channels as running on SVS."""
        for name in link_names:
            self.announced_svs.put(name, None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.conversations)

    @property
    def announced(self) -> tuple[str, ...]:
        """The channels as others may see them: a private one by its tag only."""
        return self.private.link_names(self.conversations)

    @property
    def replicated(self) -> tuple[str, ...]:
        """What replication links are offered (``PrivateChannels.replicated``)."""
        return self.private.replicated(self.conversations)

    @property
    def svs(self) -> tuple[str, ...]:
        """Which of ``announced`` run on SVS (announced too, so joiners speak it)."""
        return tuple(self.envelopes.link_name(c) for c, conv in self.conversations.items() if conv.protocol == "svs")

    def open_stored(self, asked: Iterable[str], now: int) -> None:
        """Join the channels asked for at start, then open every channel the store holds."""
        for channel, protocol in self.private.opening(asked):
            if protocol := self._protocol(channel, protocol):
                self.store.join(channel, now, protocol)
        for channel in self.store.joined_channels():
            if self.private.may_open(channel):
                self.conversations[channel] = self._open(channel, now)

    def _open(self, channel: str, now: int) -> Conversation:
        conversation = open_conversation(channel, self.store, self.envelopes, self.config, self.backlog, now)
        if isinstance(conversation, Conversation):  # what was still missing when it was saved
            self.fetcher.want(channel, ((e.message_id, e.sender_id) for e in conversation.engine.missing()), now)
        return conversation

    # ---------------------------------------------------------------- commands

    def say(self, channel: str, nick: str, text: str, kind: str, now: int, about: str = "") -> str | None:
        """Send a chat message; returns its id, or None (and an error event)."""
        conversation = self.conversations.get(channel)
        if conversation is None:
            return self._error(f"not in channel {channel}")
        try:
            message_id = conversation.send(nick, text, kind, now, about)
        except (PayloadError, LocalProtocolError) as exc:
            return self._error(str(exc))
        if message_id is None:  # held: the channel has too many of ours unacknowledged
            self.stats["held"] += 1
            if len(conversation.held) == 1:
                self._emit([ev.MessagesHeld(channel, 1)])
            return None
        return message_id if self.step(channel, now) else None

    def notice(self, payload: Payload, now: int, channels: Iterable[str] | None = None,
               release_all: bool = False) -> None:
        """An ephemeral notice (typing, away, leave) to ``channels`` (default: all)."""
        for channel in list(self.conversations) if channels is None else channels:
            self.conversations[channel].send_ephemeral(payload, now)
            self.step(channel, now, release_all)

    def join(self, channel: str, now: int, passphrase: str | None = None) -> bool:
        """True if the channel is new. With a passphrase, the channel is
        private (its key takes ~100 ms)."""
        try:
            channel, asked = channel_spec(channel)
        except BadChannelName as exc:
            return self._error(str(exc)) or False
        if channel in self.conversations:
            if passphrase is not None:
                self._error(f"already in #{channel}; /part it first to join it with a passphrase")
            elif asked is not None and not self._protocol(channel, asked):  # it keeps the one it has
                return False
            self._emit([ev.Joined(channel, already=True)])  # the user interface switches to it
            return False
        if passphrase is not None and not self.private.unlock(channel, passphrase):
            return False
        if not self.private.may_open(channel) or not (protocol := self._protocol(channel, asked)):
            return False
        self.store.join(channel, now, protocol)
        conversation = self.conversations[channel] = self._open(channel, now)
        self._emit([ev.Joined(channel, True if channel in self.envelopes.private else None, svs=protocol == "svs"),
                    *conversation.topic_changes()])  # rejoining: the topic it had
        self.step(channel, now)
        return True

    def topic(self, channel: str) -> None:
        """Report the channel's topic (``/topic`` with no text)."""
        conversation = self.conversations.get(channel)
        if conversation is None:
            return self._error(f"not in channel {channel}")
        self._emit(conversation.topic_changes(always=True) or [ev.Error(f"no topic in #{channel} yet")])

    def part(self, channel: str) -> bool:
        if self.conversations.pop(channel, None) is None:
            self._error(f"not in channel {channel}")
            return False
        self.store.part(channel)
        self.private.forget(channel)
        self._emit([ev.Parted(channel)])
        return True

    def _protocol(self, channel: str, asked: str | None) -> str | None:
        try:
            return protocol_for(channel, asked, self.store, self.envelopes.link_name(channel), self.announced_svs)
        except ProtocolMismatch as exc:
            return self._error(str(exc))

    def _error(self, reason: str) -> None:
        self._emit([ev.Error(reason)])

    # ------------------------------------------------------------ time and steps

    def deadlines(self) -> list[int | None]:
        return ([c.engine.get_timer() for c in self.conversations.values()]
                + [c.retry_at for c in self.conversations.values()] + [self.fetcher.next_due()])

    def handle_timer(self, now: int) -> None:
        for channel, conversation in list(self.conversations.items()):
            deadline = conversation.engine.get_timer()
            if deadline is not None and deadline <= now:
                conversation.engine.handle_timer(now)
                self.step(channel, now)
            elif conversation.retry_at is not None and conversation.retry_at <= now:
                self.step(channel, now)  # held messages may fit now
        if (due := self.fetcher.next_due()) is not None and due <= now:
            self._fetch(now)

    def step(self, channel: str, now: int, release_all: bool = False) -> bool:
        """Drain, translate and commit ``channel``'s engine, then send, then
        act on what the step said, then notify. False if the commit failed."""
        conversation = self.conversations[channel]
        held = len(conversation.held)
        try:
            drained = run_step(conversation, now, release_all)
        except StepFailed as exc:
            self.stats["step_failed"] += 1
            self._error(f"#{channel}: could not store a step ({exc}); it was undone")
            return False
        self.outbox.engine(channel, conversation.seal, drained.datagrams)
        step = drained.translation
        self.stats["rejected"] += step.rejected
        if step.seq_gaps:
            self.stats["seq_gaps"] += len(step.seq_gaps)
        if step.missing or step.seq_gaps:
            self._ask_for(channel, step.missing, bool(step.seq_gaps), now)
        self.catchup.push(channel, [row.wire for row in step.rows])
        events = []
        for sender_id, nick in step.authors:
            self.typing_state.message_from(channel, sender_id)
            self.peers.learned_nick(sender_id, nick)
            events += self.people.seen(sender_id, self.envelopes.key_of(sender_id), nick, now)
        events += step.events
        for sender_id, nick in step.typists:
            if (typing := self.typing_state.seen(channel, sender_id, nick, now)) is not None:
                events.append(typing)
        for sender_id in step.leavers:
            events += self.peers.gone(sender_id, now)
        for sender_id, nick, reason in step.away:
            events += self.peers.away(sender_id, nick, reason or None)
        if held and not conversation.held:
            events.append(ev.MessagesHeld(channel, 0))
        self._emit(events)
        return True

    def _ask_for(self, channel: str, missing: list[tuple[str, str | None]], gap: bool, now: int) -> None:
        """Fetch what is missing, and replicate the channel (throttled): at
        the first sign with the missing messages' authors, which brings
        whatever else they said that we lack; with every peer of the channel
        once a fetch did not bring a message, or an author's numbers have a
        gap (that also finds what nobody references). In a busy channel most
        missing messages are on their way, and replicating with every peer
        at once carried them all a second time."""
        self.fetcher.want(channel, missing, now, self.backlog.behind)
        if channel in self._fetch(now):
            return  # a fetch did not bring a message: replicating with everyone already
        if gap:
            self._replicate_with_everyone(channel, now)
        elif not self.backlog.behind:
            for sender in {sender for _, sender in missing if sender}:
                if (author := self.peers.get(sender)) is not None:
                    self._replicate(author.address, now)

    def _fetch(self, now: int) -> set[str]:
        """Ask for what is due; replicate with every peer of a channel where
        a fetch did not bring a message - the first time it did not: that
        replication brought whatever those peers held, and later retries only
        ask again (at 50% loss, 5% fewer replication bytes in the simulator
        and no later convergence). Returns those channels."""
        everyone = set()
        for channel, due in self.fetcher.requests(self.peers, now, self._still_missing).items():
            self.outbox.fetches(channel, due.sends(channel))
            self.stats["fetch_sent"] += due.asked
            self._emit([ev.FetchAsked(channel, tuple(ids), target, due.again) for target, ids in due.ids.items()])
            if due.first_again:
                self._replicate_with_everyone(channel, now)
                everyone.add(channel)
        return everyone

    def _still_missing(self, channel: str, message_id: str) -> bool:
        conversation = self.conversations.get(channel)
        return isinstance(conversation, Conversation) and conversation.engine.is_missing(message_id)

    def _replicate_with_everyone(self, channel: str, now: int) -> None:
        link_name = self.envelopes.link_name(channel)
        for peer in self.peers:
            if peer.channels is None or link_name in peer.channels:
                self._replicate(peer.address, now)
