"""``sds-chat --headless``: the bot and scripting interface.

Reads lines from stdin - plain text is a message to the current channel;
``/join #c``, ``/part``, ``/nick n``, ``/me text``, ``/peers``, ``/typing``
and ``/quit`` are commands - and writes one JSON object per event to stdout.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys

from chat_app.node import Node


def channel_name(text: str) -> str:
    return text.strip().lstrip("#")


class Headless:
    def __init__(self, node_factory, read_stdin: bool = True) -> None:
        self.node: Node = node_factory(self.emit)
        self.read_stdin = read_stdin
        self.current: str | None = None
        self._done = asyncio.Event()

    def emit(self, event: dict) -> None:
        sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
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
        self.emit({"event": "bye"})
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
        if not line.startswith("/") or line.startswith("//"):
            text = line[1:] if line.startswith("//") else line
            if self.current is None:
                self.emit({"event": "error", "reason": "join a channel first: /join #name"})
            else:
                node.say(self.current, text)
            return
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if name == "join" and arg:
            channel = channel_name(arg)
            await node.join(channel)
            self.current = channel
        elif name == "part":
            channel = channel_name(arg) if arg else self.current
            if channel is None:
                self.emit({"event": "error", "reason": "not in any channel"})
                return
            await node.part(channel)
            if self.current == channel:
                self.current = next(iter(node.engines), None)
        elif name == "nick" and arg:
            await node.set_nick(arg)
        elif name == "me" and arg and self.current:
            node.say(self.current, arg, kind="me")
        elif name == "typing" and self.current:
            node.typing(self.current)
        elif name == "peers":
            self.emit({"event": "peers", "peers": node.peer_snapshot(), "addresses": node.advertised,
                       "port": node.port})
        elif name == "quit":
            self._done.set()
        else:
            self.emit({"event": "error", "reason": f"unknown command or missing argument: /{name}"})
