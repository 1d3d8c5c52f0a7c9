"""Talking to @waku/sds: a real node process, datagrams over real UDP.

``WakuPeer`` runs ``waku_peer.mjs`` under node. ``Conversation`` puts one of
our ``Channel``s on a UDP socket of its own, and pumps both sides in one
loop (select on the socket and on the node's stdout, fire the channel's
timer when due), so a test reads top to bottom with no threads.
"""

from __future__ import annotations

import base64
import json
import os
import random
import selectors
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sync.sds import Channel, Config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("waku_peer.mjs")
PACKAGE = "@waku/sds"
VERSION = "0.0.8"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def package_dir() -> Path:
    override = os.environ.get("WAKU_SDS_DIR")
    return Path(override) if override else ROOT / ".cache" / "interop" / "node_modules" / PACKAGE


def unavailable() -> str | None:
    """Why the reference cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed"
    manifest = package_dir() / "package.json"
    if not manifest.exists():
        return f"{PACKAGE} is not installed at {package_dir()} (make test installs it)"
    version = json.loads(manifest.read_text())["version"]
    if version != VERSION:
        return f"{PACKAGE} {version} is installed, the tests are written for {VERSION}"
    return None


def require_reference() -> None:
    """Skip with a one-line reason when node or the package is missing; in
    CI a missing reference is a failure, not a skip."""
    reason = unavailable()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"interop tests cannot run: {reason}")
    pytest.skip(reason)


class WakuPeer:
    """One @waku/sds MessageChannel in a node process."""

    def __init__(self, channel_id: str, sender_id: str) -> None:
        self.sender_id = sender_id
        env = {**os.environ, "WAKU_SDS_DIR": str(package_dir())}
        self._stderr = tempfile.TemporaryFile()  # a file, not a pipe: node can never block on it
        self.proc = subprocess.Popen(
            ["node", str(SCRIPT), channel_id, sender_id],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
        )
        self.events: list[dict] = []
        self._buffer = b""
        ready = self.wait(lambda e: e["event"] == "ready", timeout=20)
        self.port: int = ready["port"]

    def command(self, cmd: str, **args) -> None:
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, cmd: str, reply: str, timeout: float = 10, **args) -> dict:
        """Send a command and wait for its one answer."""
        start = len(self.events)
        self.command(cmd, **args)
        return self.wait(lambda e: e["event"] == reply, timeout=timeout, since=start)

    def read_available(self) -> list[dict]:
        """Take the complete lines node has written so far (non-blocking)."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not chunk:
            self._stderr.seek(0)
            raise RuntimeError(f"node exited: {self._stderr.read()[-2000:].decode(errors='replace')}")
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        new = [json.loads(line) for line in lines if line]
        self.events.extend(new)
        return new

    def wait(self, predicate: Callable[[dict], bool], timeout: float, since: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events[since:]:
                if predicate(event):
                    return event
            since = len(self.events)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"node peer: no matching event in {timeout} s; last: {self.events[-5:]}")
            sel = selectors.DefaultSelector()
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if sel.select(left):
                self.read_available()
            sel.close()

    def of(self, name: str) -> list[dict]:
        return [e for e in self.events if e["event"] == name]

    def delivered(self) -> list[str]:
        """Ids it reported delivered, first report of each only (it reports
        a message again whenever a resend of it arrives)."""
        return list(dict.fromkeys(e["id"] for e in self.of("sds:in:message-delivered")))

    def holds(self) -> set[str]:
        """Everything in its log: what it delivered and what it sent."""
        return set(self.delivered()) | {e["id"] for e in self.of("sent")}

    def acknowledged(self) -> set[str]:
        return {e["id"] for e in self.of("sds:out:message-acknowledged")}

    def log(self) -> list[str]:
        return self.ask("state", "state")["log"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.command("quit")
                self.proc.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            stream.close()


class Conversation:
    """Our channel on a real UDP socket, facing a ``WakuPeer``."""

    def __init__(self, peer: WakuPeer, channel_id: str, sender_id: str, config: Config | None = None) -> None:
        self.peer = peer
        self.loss = 0.0  # share of datagrams dropped, each direction
        self.js_every: float | None = None  # seconds between its resends and syncs, as its app would
        self._rng = random.Random(7)
        self.dropped = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.channel = Channel(channel_id, sender_id, now_ms(), config)
        self.events: list = []
        self.sent_datagrams: list[bytes] = []
        self.received_datagrams: list[bytes] = []
        peer.command("peer", port=self.sock.getsockname()[1])

    def send(self, text: str) -> str:
        mid = self.channel.send(text.encode(), now_ms())
        self.flush()
        return mid

    def flush(self) -> None:
        for out in self.channel.datagrams_to_send(now_ms()):  # all broadcast: one peer here
            self.sent_datagrams.append(out.data)
            if self._lost():
                continue
            self.sock.sendto(out.data, ("127.0.0.1", self.peer.port))
        self.events.extend(self.channel.events())

    def pump(self, until: Callable[[], bool], timeout: float) -> None:
        """Run both sides until ``until()`` holds; fail after ``timeout`` s."""
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ, "udp")
        sel.register(self.peer.proc.stdout, selectors.EVENT_READ, "node")
        deadline = time.monotonic() + timeout
        js_due = time.monotonic()
        try:
            while not until():
                if self.js_every is not None and time.monotonic() >= js_due:
                    self.peer.command("resend")
                    self.peer.command("sync")
                    js_due = time.monotonic() + self.js_every
                if time.monotonic() > deadline:
                    raise TimeoutError(f"condition not met in {timeout} s; node said: {self.peer.events[-5:]}")
                timer = self.channel.get_timer()
                wait = 0.05 if timer is None else max(0.0, min(0.05, (timer - now_ms()) / 1000))
                for key, _ in sel.select(wait):
                    if key.data == "node":
                        self.peer.read_available()
                    else:
                        while True:
                            try:
                                data = self.sock.recv(65_535)
                            except BlockingIOError:
                                break
                            if not self._lost():
                                self.received_datagrams.append(data)
                                self.channel.receive(data, now_ms())
                timer = self.channel.get_timer()
                if timer is not None and timer <= now_ms():
                    self.channel.handle_timer(now_ms())
                self.flush()
        finally:
            sel.close()

    def pump_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        self.pump(until=lambda: time.monotonic() >= end, timeout=seconds + 1)

    def of(self, cls) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    def _lost(self) -> bool:
        lost = self.loss > 0 and self._rng.random() < self.loss
        self.dropped += lost
        return lost

    def close(self) -> None:
        self.sock.close()


def b64decode(text: str) -> bytes:
    return base64.b64decode(text)


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode()
