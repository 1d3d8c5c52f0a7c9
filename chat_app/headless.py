"""``sds-chat --headless``: the bot and scripting interface.

Reads lines from stdin - plain text is a message to the current channel; the
commands are those of ``chat_app.commands`` marked for headless mode (join,
part, nick, me, typing, peers, quit) - and writes one JSON object per event
(``chat_app.events``) to stdout.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from chat_app import events as ev
from chat_app.commands import Invalid, Invocation, Say, parse
from chat_app.node import Node


class Headless:
    def __init__(self, node_factory, read_stdin: bool = True) -> None:
        self.node: Node = node_factory(self.emit)
        self.read_stdin = read_stdin
        self.current: str | None = None
        self._done = asyncio.Event()

    def emit(self, event: ev.AppEvent) -> None:
        if not event.printed:
            return
        sys.stdout.write(event.json_line() + "\n")
        sys.stdout.flush()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._done.set)
        await self.node.start()
        self.current = next(iter(self.node.engines), None)
        lines = None
        if self.read_stdin:  # a store peer (serve) runs until it is signalled
            reader = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
            lines = asyncio.ensure_future(self._read(reader))
        await self._done.wait()
        if lines is not None:
            lines.cancel()
        await self.node.stop()
        self.emit(ev.Bye())
        return 0

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while not reader.at_eof():
            raw = await reader.readline()
            if not raw:
                break
            line = raw.decode(errors="replace").rstrip("\r\n")
            if line.strip():
                await self.command(line)
        self._done.set()  # stdin closed: leave like /quit

    async def command(self, line: str) -> None:
        node = self.node
        match parse(line, "headless"):
            case Invalid(reason=reason):
                self.emit(ev.Error(reason))
            case Say() if self.current is None:
                self.emit(ev.Error("join a channel first: /join #name"))
            case Say(text=text, kind=kind):
                node.say(self.current, text, kind)
            case Invocation(name="join") as cmd:
                await node.join(cmd.channel, cmd.passphrase)
                self.current = cmd.channel
            case Invocation(name="part") as cmd:
                channel = cmd.channel or self.current
                if channel is None:
                    self.emit(ev.Error("not in any channel"))
                    return
                await node.part(channel)
                if self.current == channel:
                    self.current = next(iter(node.engines), None)
            case Invocation(name="nick", argument=nick):
                await node.set_nick(nick)
            case Invocation(name="typing"):
                if self.current is not None:
                    node.typing(self.current)
            case Invocation(name="peers"):
                self.emit(node.peer_snapshot())
            case Invocation(name="whois", argument=nick):
                node.whois(nick)
            case Invocation(name="trust", argument=argument):
                node.trust(argument)
            case Invocation(name="quit"):
                self._done.set()
