"""``Node``: one running peer, the runtime inside its asyncio adapter.

This is the surface the terminal client and headless mode call - a typed
command in through ``execute``, events out through ``emit`` - and all it
does is pass them on: the logic is in ``chat_app.runtime`` (no asyncio), the
sockets, discovery and timer in ``chat_app.io``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from chat_app import commands as cmd
from chat_app import events as ev
from chat_app.annotations import NOT_EDITABLE, SHOWN_KINDS, UNEDITABLE_KINDS
from chat_app.changes import Changes
from chat_app.crypto import Identity
from chat_app.events import Emit
from chat_app.files.manager import Files
from chat_app.io.peer import AsyncPeer
from chat_app.address import Address
from chat_app.net.udp import ANY_INTERFACE
from chat_app.runtime import Runtime
from chat_app.store import Store
from sync.sds import Config

log = logging.getLogger(__name__)

__all__ = ["Emit", "Node"]


def wall_ms() -> int:
    return int(time.time() * 1000)


class Node:
    def __init__(self, store: Store, *, nick: str, channels: list[str], emit: Emit, host: str = ANY_INTERFACE,
                 port: int = 0, static_peers: list[Address] = (), discovery: bool = True,
                 discovery_interface: str | None = None, send_typing: bool = True, live: bool = False,
                 config: Config | None = None, clock: Callable[[], int] = wall_ms,
                 identity: Identity | None = None, passphrases: dict[str, str] | None = None,
                 keep_files: bool = False) -> None:
        """``keep_files``: fetch every file offered, whatever its size (a store peer)."""
        self.store = store
        self.runtime = Runtime(store, nick=nick, static_peers=static_peers, send_typing=send_typing, live=live,
                               config=config, identity=identity, passphrases=passphrases)
        self._emit = emit
        self.files = Files(Path(store.path).parent, emit, self._holders, keep_all=keep_files)
        self._counted: Counter[str] = Counter()  # the node's own counts: what ``Changes`` refuses
        changes = Changes(store, self._observed, self._counted)  # what reactions, edits... make of a message
        self.io = AsyncPeer(self.runtime, changes, store_path=store.path, host=host, port=port, discovery=discovery,
                            discovery_interface=discovery_interface, clock=clock)
        self.io.serve_files = self.files.serve
        self._channels = list(channels)
        self._offering: set[asyncio.Task] = set()  # files being hashed for an offer

    @property
    def peer_id(self) -> str:
        return self.runtime.peer_id

    @property
    def nick(self) -> str:
        return self.runtime.nick

    @property
    def port(self) -> int:
        return self.io.port

    @property
    def advertised(self) -> list[str]:
        """The addresses we announce: where others reach us."""
        return self.io.advertised

    @property
    def engines(self) -> dict:
        """The joined channels' engines, in joining order."""
        return {name: c.engine for name, c in self.runtime.conversations.items()}

    @property
    def stats(self) -> Mapping[str, int]:
        """The runtime's counters and the node's own, as they are now."""
        return Counter(self.runtime.stats) + self._counted

    async def start(self) -> None:
        await self.io.start(self._channels)
        self.files.start()

    def quitting(self) -> None:
        self.io.quitting()

    async def stop(self) -> None:
        for task in self._offering:
            task.cancel()
        await self.io.stop()
        await self.files.stop()

    async def execute(self, command: cmd.NodeCommand, current: str | None) -> None:
        """Run a command the user typed, in either surface. ``current``: the
        channel or direct conversation the surface is showing, which plain
        text, ``/topic``, ``/typing`` and a bare ``/part`` are about. What
        cannot be done is said with an ``error`` event, as the runtime says
        its own refusals - and so is a command that failed (a bug: logged with
        its traceback), after which the chat goes on. Raised, it was lost: the
        client's future was never read, and headless mode stopped reading."""
        try:
            await self._run(command, current)
        except Exception as exc:
            log.exception("running %r failed", command)
            self._emit(ev.Error(f"{type(command).__name__.lower()} failed ({exc.__class__.__name__}: {exc}); "
                                f"the log has the details"))

    async def _run(self, command: cmd.NodeCommand, current: str | None) -> None:
        match command:
            case cmd.Join(passphrase=passphrase) as join:
                await self.join(join.spec, passphrase)
            case cmd.Part(channel=channel):
                if (channel := channel or current) is None:
                    return self._emit(ev.Error("not in any channel"))
                await self.part(channel)
            case cmd.Nick(name=name):
                await self.set_nick(name)
            case cmd.Msg(target=target, text=text):
                self.msg(target, text)
            case cmd.Query(target=target):
                self.query(target)
            case cmd.Away(reason=reason):
                self.set_away(reason or "")
            case cmd.Ignore(nick=nick):
                self.ignore(nick)
            case cmd.Whois(nick=nick):
                self.whois(nick)
            case cmd.Trust(nick=nick, fingerprint=fingerprint):
                self.trust(nick, fingerprint)
            case cmd.Invite(nick=nick, channel=channel):
                self.io.call(self.runtime.invite, nick, channel)
            case cmd.Peers():
                self._emit(self.peer_snapshot())
            case cmd.Typing():
                if current is not None:
                    self.typing(current)
            case cmd.Accept(number=number):
                self.files.accept(number)
            case cmd.Files():
                self._emit(self.files.listing())
            case cmd.Say() | cmd.Topic() | cmd.Send() | cmd.About() if current is None:
                self._emit(ev.Error("join a channel first: /join #name"))
            case cmd.Say(text=text, kind=kind):
                self.say(current, text, kind)
            case cmd.Send(path=path):
                # hashing a big file takes seconds: what is typed next must not wait for it
                task = asyncio.ensure_future(self.send_file(current, path))
                self._offering.add(task)
                task.add_done_callback(self._offering.discard)
            case cmd.Topic(text=None):
                self.topic(current)
            case cmd.Topic(text=text):
                self.say(current, text, "topic")
            case cmd.About() as about:
                self.annotate(current, about)
            case _:
                raise TypeError(f"{command!r} is not run on the node")

    def say(self, channel: str, text: str, kind: str = "text") -> str | None:
        if channel.startswith("@"):  # a direct conversation
            return self.msg(channel, text, kind)
        return self.io.call(self.runtime.say, channel, text, kind)

    async def send_file(self, channel: str, path: str) -> str | None:
        """Offer the file at ``path`` in ``channel``: the offer message's id, or None (an error said why).
        In a private channel or a direct conversation its chunks travel sealed with a key of its own."""
        if (offer := await self.files.offer(path, self.runtime.encrypted(channel))) is not None:
            return self.say(channel, offer.text, "file")
        return None

    def _observed(self, event: ev.AppEvent) -> None:
        self._emit(event)
        self.files.observe(event)

    def _holders(self, sender_id: str) -> list[Address]:
        """Whom to ask for a file: its sender first, then every peer we know."""
        peers = sorted(self.runtime.peer_snapshot().peers, key=lambda p: p["peer_id"] != sender_id)
        return [tuple(p["address"]) for p in peers if p["address"]]

    def annotate(self, channel: str, command: cmd.About) -> str | None:
        """Reply to, react to, edit or delete the message ``command`` picks in
        ``channel``: the new message's id, or None (an error event said why)."""
        back = command.back
        target = (self.store.shown_back(channel, back) if back is not None
                  else self.store.message(channel, command.which))
        if target is None or target.kind not in SHOWN_KINDS:
            return self._emit(ev.Error(f"no message {command.which} in {channel} to {command.word}"))
        if command.word in ("edit", "delete") and target.sender_id != self.peer_id:
            return self._emit(ev.Error(f"only its author may {command.word} a message"))
        if command.word == "edit" and target.kind in UNEDITABLE_KINDS:
            return self._emit(ev.Error(NOT_EDITABLE))
        if channel.startswith("@"):  # a direct conversation
            return self.io.call(self.runtime.send_direct, channel, command.text, command.word,
                                about=target.message_id)
        return self.io.call(self.runtime.say, channel, command.text, command.word, about=target.message_id)

    def typing(self, channel: str) -> None:
        self.io.call(self.runtime.typing, channel)

    def msg(self, target: str, text: str, kind: str = "text") -> str | None:
        """A direct message to ``target`` (a nick, or ``@`` and an id): its id, or None (an error event said why)."""
        return self.io.call(self.runtime.send_direct, target, text, kind)

    def query(self, target: str) -> str | None:
        """Open the direct conversation with ``target``: its name (``@`` and their id), or None."""
        return self.io.call(self.runtime.open_direct, target)

    async def join(self, channel: str, passphrase: str | None = None) -> None:
        if self.io.call(self.runtime.join, channel, passphrase=passphrase):
            await self.io.announce()

    async def part(self, channel: str) -> None:
        if self.io.call(lambda now: self.runtime.part(channel)):
            await self.io.announce()

    async def set_nick(self, nick: str) -> None:
        if self.io.call(self.runtime.set_nick, nick):
            await self.io.announce()

    def whois(self, nick: str) -> None:
        self.io.call(self.runtime.whois, nick)

    def trust(self, nick: str, fingerprint: str) -> None:
        self.io.call(self.runtime.trust, f"{nick} {fingerprint}")  # the runtime reads it as typed

    def set_away(self, reason: str) -> None:
        self.io.call(self.runtime.set_away, reason)

    def topic(self, channel: str) -> None:
        self.io.call(self.runtime.topic, channel)

    def ignore(self, nick: str | None = None) -> None:
        """Ignore the people seen as ``nick`` (or stop); with no nick, just report the list."""
        self.io.call(self.runtime.ignore, nick)

    def peer_snapshot(self) -> ev.Peers:
        """The peers we know, for a UI to list (called on the node's loop)."""
        return self.runtime.peer_snapshot()
