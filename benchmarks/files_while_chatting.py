"""Chatting while a big file is hashed and fetched: the chat must not wait.

    python benchmarks/files_while_chatting.py [--size-mb 1000 --rate 10]

Two real headless peers, each on a host of its own on the test LAN
(``tests/lan``, root needed), chat in #general, each saying ``--rate``
lines a second, all along. Meanwhile the first offers a file of random bytes
(``/send``: the whole file is hashed, chunk by chunk, to make the offer) and
the second accepts it (every chunk checked against its hash as it arrives,
then the whole file's SHA-256). Every line carries the moment it was typed;
its delay is from then to the other peer's ``delivered`` line being read.
Printed, for each phase (before the file, while the offer is hashed, while
the file travels and is checked, after): how many lines went each way and
their delay p50 / p99 / max, with the load average (1 minute).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.files import random_file  # noqa: E402
from benchmarks.load import load_average, percentile  # noqa: E402
from benchmarks.lossy_lan import StampedPeer  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402

QUIET_S = 5  # chat alone before and after the file
SLOW_MS = 200  # a line this late is named


class Chatter(threading.Thread):
    """Says a line every 1/rate s, each stamped with when it was typed (ms)."""

    def __init__(self, peer: StampedPeer, rate: float) -> None:
        super().__init__(daemon=True)
        self.peer, self.rate, self.stop = peer, rate, threading.Event()

    def run(self) -> None:
        k = 0
        start = time.monotonic()
        while not self.stop.is_set():
            self.peer.send(f"{self.peer.nick} {k} at {time.time() * 1000:.1f}")
            k += 1
            self.stop.wait(max(0.0, start + k / self.rate - time.monotonic()))


def delays(peer: StampedPeer, other: str) -> list[tuple[float, float, str]]:
    """(typed at, delay ms, who typed it) of each of ``other``'s lines ``peer`` has delivered."""
    got = []
    for e in peer.events:
        if e["event"] == "delivered" and e["kind"] == "text" and e["nick"] == other and not e["own"]:
            typed = float(e["text"].rsplit(" at ", 1)[1])
            got.append((typed, e["t"] - typed, other))
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=10)
    args = parser.parse_args()
    sweep()
    with tempfile.TemporaryDirectory(prefix="sds-bigfile-") as tmp, Lan() as lan:
        data = Path(tmp)
        source = data / "big.bin"
        size = random_file(source, args.size_mb)
        alice, bob = (StampedPeer(data / n, n, host=lan.host(n)) for n in ("alice", "bob"))
        chatters = [Chatter(alice, args.rate), Chatter(bob, args.rate)]
        phases: list[tuple[str, float]] = []  # (name, from when: ms since the epoch)
        try:
            _introduced(alice, bob)
            phases.append(("before the file", time.time() * 1000))
            for chatter in chatters:
                chatter.start()
            time.sleep(QUIET_S)  # (each peer's lines are stamped as they are read, whatever we wait for)
            phases.append(("hashing the offer", time.time() * 1000))
            alice.send(f"/send {source}")
            alice.wait_for(lambda e: e["event"] == "file_offer", 600)
            phases.append(("fetching and checking", time.time() * 1000))
            offer = bob.wait_for(lambda e: e["event"] == "file_offer", 60)
            bob.send(f"/accept {offer['number']}")
            got = bob.wait_for(lambda e: e["event"] == "file_received", 1800)
            assert Path(got["path"]).stat().st_size == size
            phases.append(("after", time.time() * 1000))
            time.sleep(QUIET_S)
            for chatter in chatters:
                chatter.stop.set()
            ended = time.time() * 1000
            for peer in (alice, bob):
                peer.drain(2)
        finally:
            for chatter in chatters:
                chatter.stop.set()
            for peer in (alice, bob):
                peer.stop()
        took = (phases[3][1] - phases[2][1]) / 1000
        print(f"{size / 1e6:.0f} MB offered by alice and fetched by bob while both chat at {args.rate:g} lines/s "
              f"(fetched and checked in {took:.1f} s, {size / 1e6 / took:.0f} MB/s; load average {load_average():.2f})")
        lines = delays(bob, "alice") + delays(alice, "bob")
        bounds = [at for _, at in phases] + [ended]
        for (name, start), end in zip(phases, bounds[1:], strict=True):
            ms = sorted(d for typed, d, _ in lines if start <= typed < end)
            if ms:
                print(f"  {name:<24} {len(ms):5} lines  delay p50 {percentile(ms, 50):6.0f} ms  "
                      f"p99 {percentile(ms, 99):6.0f} ms  max {ms[-1]:6.0f} ms")
            slow = sorted((d, typed, who) for typed, d, who in lines if start <= typed < end and d > SLOW_MS)
            if slow:  # when in the phase the slowest were typed, and by whom: what the chat waited on
                print("    slowest: " + ", ".join(f"{who}'s at {(typed - start) / 1000:.1f} s: {d:.0f} ms"
                                                  for d, typed, who in slow[-4:]))


if __name__ == "__main__":
    main()
