"""``sds-chat --headless``: the bot and scripting interface.

Reads lines from stdin - plain text is a message to the current channel; the
commands are those of ``chat_app.commands`` marked for headless mode - and
writes one JSON object per event (``chat_app.events``) to stdout. Each line
is parsed into a command value and run by ``Node.execute``, as the client
runs it; only ``/quit`` is headless mode's own. The current channel follows
the events: the channel last joined (``joined``), the conversation
``/query`` opened (``dm_open``), the first channel left when it is parted.

Stdin may be a terminal, a pipe, a regular file (``< cmds.txt``) or
``/dev/null``. The end of input - Ctrl+D, the end of the file - leaves as
``/quit`` does; messages not yet acknowledged by then are resent the next
time a peer starts on the same data directory.

Event lines are written by a thread of their own (``EventLines``): a reader
slower than the channel (a full pipe) holds up that thread, never the chat;
the lines wait in memory meanwhile, in order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import signal
import stat
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TextIO

from chat_app import events as ev
from chat_app.commands import Invalid, Quit, parse
from chat_app.node import Node
from chat_app.serve_lines import SUMMARY_EVERY_S, ServeLines

log = logging.getLogger(__name__)

FLUSH_AT_EXIT_S = 5.0
"""How long leaving waits for a reader to take the last lines."""


class EventLines:
    """Lines to ``stream`` from a writer thread, in order, each batch
    flushed at once. Writing to a full pipe blocks only that thread: with
    the event loop writing itself, a slow reader of our output held up the
    chat (under load a peer spent 30% of its time blocked there)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="sds-chat-stdout", daemon=True)
        self._thread.start()

    def put(self, line: str) -> None:
        self._lines.put(line)

    def close(self, timeout: float = FLUSH_AT_EXIT_S) -> None:
        """Write what is queued (giving up after ``timeout``), then stop."""
        self._lines.put(None)
        self._thread.join(timeout)

    def _write(self) -> None:
        done = False
        while not done:
            batch = [self._lines.get()]
            while not self._lines.empty():  # whatever else is queued goes in the same write
                batch.append(self._lines.get())
            if None in batch:
                done = True
                batch = batch[:batch.index(None)]
            try:
                self._stream.write("".join(batch))
                self._stream.flush()
            except (BrokenPipeError, ValueError) as exc:  # nobody reads any more, or stdout was closed
                log.debug("event output stopped: %s", exc)
                return


class Headless:
    def __init__(self, node_factory, read_stdin: bool = True, readable: ServeLines | None = None) -> None:
        """``readable``: lines for a person (``serve`` without ``--json``) instead of JSON events."""
        self.node: Node = node_factory(self.emit)
        self.read_stdin = read_stdin
        self.readable = readable
        self.current: str | None = None
        self._done = asyncio.Event()
        self._out = EventLines(sys.stdout)

    def emit(self, event: ev.AppEvent) -> None:
        match event:  # which channel plain text goes to
            case ev.Joined(channel=channel) | ev.DmOpened(channel=channel):  # joined now or before; /query
                self.current = channel
            case ev.Parted(channel=channel) if channel == self.current:
                self.current = next(iter(self.node.engines), None)
        if self.readable is not None:
            if (text := self.readable.event(event)) is not None:
                self._out.put(text)
        elif event.printed:
            self._out.put(event.json_line() + "\n")

    async def run(self) -> int:
        try:
            await self._run()
        finally:  # the lines of a failed start too
            self._out.close()
        return 0

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._quit)
        await self.node.start()
        self.current = next(iter(self.node.engines), None)
        tasks = []
        if self.read_stdin:  # a store peer (serve) runs until it is signalled
            tasks.append(asyncio.ensure_future(self._read(await _line_source(sys.stdin))))
        if self.readable is not None:
            tasks.append(asyncio.ensure_future(self._summaries(self.readable)))
        await self._done.wait()
        for task in tasks:
            task.cancel()
        await self.node.stop()
        self.emit(ev.Bye())
        for task in tasks:  # reading stdin failed and ended the run (``_read``): said now, not lost
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()

    async def _summaries(self, readable: ServeLines) -> None:
        while True:
            await asyncio.sleep(SUMMARY_EVERY_S)
            if (text := readable.summary()) is not None:
                self._out.put(text)

    def _quit(self) -> None:
        self.node.quitting()
        self._done.set()

    async def _read(self, readline: Callable[[], Awaitable[bytes]]) -> None:
        """Run each line read as a command until stdin closes; then leave like
        /quit. A failure of the reading itself leaves too: a reader ended by an
        exception would otherwise leave the peer running with nobody to tell it
        to stop. (A command that fails is an ``error`` event: ``Node.execute``.)"""
        try:
            while raw := await readline():
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line.strip():
                    await self.command(line)
        finally:
            self._quit()

    async def command(self, line: str) -> None:
        match parse(line, "headless"):
            case Invalid(reason=reason):
                self.emit(ev.Error(reason))
            case Quit():
                self._quit()
            case command:
                await self.node.execute(command, self.current)


async def _line_source(stdin) -> Callable[[], Awaitable[bytes]]:
    """How to read the next line of ``stdin`` without blocking the loop.

    A terminal, pipe or socket is watched by the loop. A regular file or a
    device such as /dev/null cannot be (epoll refuses them), and never makes
    a reader wait: each line is read on a worker thread."""
    mode = os.fstat(stdin.fileno()).st_mode
    loop = asyncio.get_running_loop()
    if stdin.isatty() or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        return reader.readline
    return lambda: loop.run_in_executor(None, stdin.buffer.readline)
