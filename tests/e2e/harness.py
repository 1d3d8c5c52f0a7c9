"""Real `sds-chat --headless` processes, each on a host of the test LAN
(``tests/lan``) with default options, driven line by line."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.lan import Host

ROOT = Path(__file__).resolve().parents[2]
EXITED = "harness:exited"  # put on the queue when the process's stdout closes


class HeadlessPeer:
    def __init__(self, data_dir: Path, nick: str, *args: str, host: Host | None = None, give_nick: bool = True) -> None:
        """On ``host`` (a namespace of the test LAN); with no host, on this
        machine bound to loopback. ``give_nick`` False: no ``--nick``, the
        process takes the one saved in its data directory."""
        self.data_dir, self.nick, self.args, self.host = data_dir, nick, args, host
        self.give_nick = give_nick
        self.events: list[dict] = []
        self._queue: queue.Queue[dict] = queue.Queue()
        self.proc: subprocess.Popen | None = None
        self.reading = threading.Event()  # cleared: its output is not read (the pipe fills)
        self.reading.set()
        self.start()

    def start(self) -> None:
        """Start (or restart) the process; events of an earlier run are kept in
        ``previous_events``."""
        self.previous_events = getattr(self, "previous_events", []) + self.events
        self.events = []
        self._queue = queue.Queue()
        where = self.host.prefix() if self.host else []
        bind = [] if self.host else ["--bind", "127.0.0.1"]
        nick = ["--nick", self.nick] if self.give_nick else []
        cmd = [*where, sys.executable, "-m", "chat_app.cli", "--headless", *nick,
               "--data-dir", str(self.data_dir), *bind, *self.args]
        # stderr goes to a file: a pipe nobody reads would stall a chatty process
        self.stderr_path = self.data_dir.parent / f"{self.data_dir.name}.stderr"
        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.stderr_path, "a") as stderr:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, text=True, bufsize=1,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        threading.Thread(target=self._pump, args=(self.proc, self._queue, self.reading), daemon=True).start()
        self.ready = self.wait_for(lambda e: e["event"] == "ready", timeout=30)
        self.peer_id, self.port = self.ready["peer_id"], self.ready["port"]

    @property
    def address(self) -> str:
        """HOST:PORT, as ``--peer`` takes it."""
        return f"{self.host.address if self.host else '127.0.0.1'}:{self.port}"

    @staticmethod
    def _pump(proc: subprocess.Popen, events: queue.Queue, reading: threading.Event) -> None:
        for line in proc.stdout:
            reading.wait()
            try:
                events.put(json.loads(line))
            except json.JSONDecodeError:
                events.put({"event": "garbage-output", "line": line})
        events.put({"event": EXITED})

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, predicate, timeout: float = 20.0, fresh: bool = False) -> dict:
        """The first event (already seen, unless ``fresh``, or arriving) that
        satisfies ``predicate``."""
        for event in [] if fresh else self.events:
            if predicate(event):
                return event
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{self.nick}: timed out; last events: {self.events[-8:]}")
            try:
                event = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if event["event"] == EXITED:  # nothing more will come: say why
                self._queue.put(event)
                code = self.proc.wait(timeout=10)
                raise AssertionError(f"{self.nick}: exited ({code}) while waiting; last events: "
                                     f"{self.events[-8:]}; stderr: {self.stderr_path.read_text()[-2000:]}")
            self.events.append(event)
            if predicate(event):
                return event

    def drain(self, seconds: float = 0.0) -> None:
        end = time.monotonic() + seconds
        while True:
            try:
                event = self._queue.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                if time.monotonic() >= end:
                    return
                continue
            if event["event"] == EXITED:
                self._queue.put(event)  # for wait_for to report
                return
            self.events.append(event)

    def delivered(self, channel: str = "general") -> list[dict]:
        self.drain()
        return [e for e in self.events if e["event"] == "delivered" and e["channel"] == channel]

    def wait_delivered(self, count: int, timeout: float = 30.0, channel: str = "general") -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.delivered(channel)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.nick}: {len(self.delivered(channel))} of {count} delivered")
            self.drain(0.1)
        return self.delivered(channel)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc.poll() is None:
            try:
                self.send("/quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()  # a store peer reads no stdin: it leaves on SIGTERM
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        return self.proc.returncode


def log_order(peer: HeadlessPeer, channel: str = "general") -> list[str]:
    """The channel's log as stored in the peer's SQLite file."""
    import sqlite3

    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return [r[0] for r in conn.execute(
            "SELECT message_id FROM messages WHERE channel = ? ORDER BY lamport, message_id", (channel,))]
    finally:
        conn.close()
