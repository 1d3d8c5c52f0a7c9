"""An insider: a process with a key of its own whose every datagram is
correctly signed and passes every check, flooding one victim.

    python -m tests.e2e.insider HOST:PORT --rate 2000 --seconds 20 [--cite ID]

Run on a host of its own of the test LAN (``ip netns exec``). It makes a
fresh key (``chat_app.crypto``) and signs each datagram as it goes - every
one differs, so no cache spares the victim a verification - taking turns:

    history   a chat message naming 256 ids that exist nowhere
    deep      a chat message naming one id that exists nowhere (they pile up waiting)
    big       a sync message as large as a datagram: 256 made-up ids and a 45 KB filter
    stranger  a sync message from a key made for it alone, naming ``--cite`` (the
              victim's own message), when given

It sends from ``--sockets`` ports, since the victim's verification budget is
per source address and port, and prints one JSON line when done: how many
of each kind it sent, and how long it took. ``start`` runs it on a host;
``Victim`` reads what it costs a peer (memory, saved state).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from chat_app.crypto import Identity, Kind, seal
from chat_app.payload import Payload
from proto.sds_pb2 import SdsMessage
from sync.sds import compute_message_id

ROOT = Path(__file__).resolve().parents[2]
CHANNEL = "general"
FILTER = bytes(range(256)) * 176  # 45,056 bytes: with 256 history entries, a datagram's worth, read by no one


class Insider:
    def __init__(self, cite: str | None = None, strangers: int = 0) -> None:
        self.identity = Identity.generate()
        self.cite = cite
        self.strangers = [Identity.generate() for _ in range(strangers)]  # made before: keys cost 0.1 ms each
        self.seq = 0
        self.made_up = int.from_bytes(hashlib.sha256(self.identity.public_key).digest()[:8], "big")  # the next one

    def datagrams(self) -> Iterator[tuple[str, bytes]]:
        kinds = ["history", "deep", "big"] + (["stranger"] if self.cite else [])
        for kind in itertools.cycle(kinds):
            yield kind, getattr(self, kind)(int(time.time() * 1000))

    def history(self, now: int) -> bytes:
        return self._message(self.identity, self._made_up(256), now, chat=True)

    def deep(self, now: int) -> bytes:
        return self._message(self.identity, self._made_up(1), now, chat=True)

    def big(self, now: int) -> bytes:
        return self._message(self.identity, self._made_up(256), now, chat=False, bloom=FILTER)

    def stranger(self, now: int) -> bytes:
        identity = self.strangers.pop() if self.strangers else Identity.generate()
        return self._message(identity, [self.cite.encode()], now, chat=False)

    def _made_up(self, count: int) -> list[bytes]:
        """``count`` message ids nobody ever sent (32 hex digits, as ours are)."""
        self.made_up += count
        return [b"%032x" % n for n in range(self.made_up - count, self.made_up)]

    def _message(self, identity: Identity, history: list[bytes], now: int, chat: bool, bloom: bytes = b"") -> bytes:
        self.seq += 1
        sender, lamport = identity.sender_id, now + self.seq
        content = Payload("text", "insider", f"message {self.seq}", self.seq, now).encode() if chat else b""
        msg = SdsMessage(sender_id=sender, channel_id=CHANNEL, lamport_timestamp=lamport,
                         message_id=compute_message_id(sender, CHANNEL, lamport, content))
        if chat:
            msg.content = content
        if bloom:
            msg.bloom_filter = bloom
        # causal_history (field 11) written by hand: a message's fields may come in any order,
        # and 256 ``add()`` calls a message would slow the flood to a fraction of its rate
        head, tail = b"\x5a\x44\x0a\x20", b"\x1a\x20" + sender.encode()  # each entry: a 32-digit id, a 32-digit sender
        return seal(identity, Kind.SDS, msg.SerializeToString() + b"".join([head + dep + tail for dep in history]))


def flood(target: tuple[str, int], rate: float, seconds: float, cite: str | None, sockets: int) -> dict:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(sockets)]
    for sock in socks:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    sent: Counter[str] = Counter()
    start = time.monotonic()
    insider = Insider(cite, strangers=int(rate * seconds) // 4 + 1 if cite else 0)
    for n, (kind, data) in enumerate(insider.datagrams()):
        due = start + n / rate
        if due > start + seconds:
            break
        if (ahead := due - time.monotonic()) > 0:
            time.sleep(ahead)
        try:
            socks[n % sockets].sendto(data, target)
            sent[kind] += 1
        except OSError:
            sent["not_sent"] += 1
    return {"sent": dict(sent), "seconds": round(time.monotonic() - start, 2)}


def start(host, victim, rate: float, seconds: float, cite: str | None = None) -> subprocess.Popen:
    """The insider as a process on ``host`` (of the test LAN), flooding ``victim``."""
    cite_args = ["--cite", cite] if cite else []
    return subprocess.Popen([*host.prefix(), sys.executable, "-m", "tests.e2e.insider",
                             f"{victim.host.address}:{victim.port}", "--rate", str(rate), "--seconds", str(seconds),
                             *cite_args], cwd=ROOT, stdout=subprocess.PIPE, text=True)


class Victim:
    """What a running peer keeps: memory (Linux /proc), saved state (its SQLite file)."""

    def __init__(self, peer) -> None:
        self.peer = peer
        self.pid = peer.proc.pid  # ``ip netns exec`` execs the peer: same process

    def rss_mb(self, field: str = "VmRSS") -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return 0.0

    def state_bytes(self) -> int:
        """The channels' saved engine state: the state_part and state_entry tables."""
        conn = sqlite3.connect(f"file:{self.peer.data_dir / 'sds-chat.sqlite3'}?mode=ro", uri=True, timeout=10)
        try:
            return sum(conn.execute(f"SELECT coalesce(sum(length(value)), 0) FROM {table}").fetchone()[0]
                       for table in ("state_part", "state_entry"))
        finally:
            conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="HOST:PORT of the victim")
    parser.add_argument("--rate", type=float, default=2000, help="datagrams a second")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--cite", help="a message id of the victim's, for one-shot keys to name")
    parser.add_argument("--sockets", type=int, default=4)
    args = parser.parse_args()
    host, port = args.target.rsplit(":", 1)
    print(json.dumps(flood((host, int(port)), args.rate, args.seconds, args.cite, args.sockets)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
