"""Runs the node on a thread of its own, with its own asyncio loop.

The UI thread never waits on a socket or on SQLite: a typed command goes to
the node's loop with ``execute``, any other work with ``call``, and the
node's events come back through ``on_event`` (the app passes
``post_message``, which is thread-safe).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable

from chat_app.commands import NodeCommand
from chat_app.node import Emit, Node


class NodeThread:
    def __init__(self, make_node: Callable[[Emit], Node], on_event: Emit) -> None:
        self._make_node = make_node
        self._on_event = on_event
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="sds-chat-node", daemon=True)
        self._started = concurrent.futures.Future()
        self.node: Node | None = None

    def start(self, timeout: float = 30.0) -> Node:
        """Start the node; returns once it is listening (raises what start raised)."""
        self._thread.start()
        return self._started.result(timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.node = self._make_node(self._on_event)
            self._loop.run_until_complete(self.node.start())
        except BaseException as exc:  # report it to start(), then end the thread
            self._started.set_exception(exc)
            return
        self._started.set_result(self.node)
        self._loop.run_forever()

    def call(self, fn: Callable, *args) -> concurrent.futures.Future:
        """Run ``fn(*args)`` (a coroutine function or a plain one) on the node's loop."""
        if inspect.iscoroutinefunction(fn):
            return asyncio.run_coroutine_threadsafe(fn(*args), self._loop)
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn(*args))
            except BaseException as exc:
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(run)
        return future

    def execute(self, command: NodeCommand, current: str | None) -> concurrent.futures.Future:
        """Run ``command`` on the node (``Node.execute``), about the channel ``current``."""
        return self.call(self.node.execute, command, current)

    def stop(self, timeout: float = 5.0) -> None:
        if self.node is None or not self._thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.node.stop(), self._loop).result(timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
