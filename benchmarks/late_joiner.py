"""How fast a late joiner with an empty data directory catches up, with real
processes on two hosts of the test LAN (``tests/lan``, root needed).

    python benchmarks/late_joiner.py [--history 3000 10000] [--repeat 2]

For each history size, alice (``sds-chat --headless`` on host a) says that
many lines alone in #general - signed messages, stored in her SQLite file.
Then bob starts on host b with an empty data directory: his key is made, he
finds alice (mDNS), dials her replication port and takes the channel's
history. Printed, per run: the seconds from starting bob's process to
his ``ready`` line (the start: Python, the key, the store, the sockets),
to his first caught-up message stored, and to the last; and messages per
second counted from the process's start (the figure a user feels) and from
the first message stored (the catch-up alone), and how many replication
sessions bob had and how many entries each brought him (more than the
history in all: some came twice), and how each ended. The load average (1 minute) is printed beside
each row.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import load_average  # noqa: E402
from tests.e2e.harness import HeadlessPeer  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402

POLL_S = 0.02
SETTLE_S = 3.0


def stored(peer: HeadlessPeer) -> int:
    """How many #general messages ``peer`` holds, read from its database."""
    path = peer.data_dir / "sds-chat.sqlite3"
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM messages WHERE channel = 'general'").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not made yet
        return 0
    finally:
        conn.close()


def cpu_seconds(peer: HeadlessPeer) -> float:
    """The CPU time ``peer``'s process has used so far, all its threads (user and system)."""
    fields = Path(f"/proc/{peer.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_stored(peer: HeadlessPeer, count: int, timeout: float) -> float | None:
    """Poll until ``peer`` holds ``count``; when it first held one (monotonic), or None."""
    first = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = stored(peer)
        if held and first is None:
            first = time.monotonic()
        if held >= count:
            return first
        peer.drain(POLL_S)
    raise TimeoutError(f"{peer.nick} holds {stored(peer)} of {count} after {timeout:.0f} s")


def run(history: int, timeout: float) -> str:
    sweep()
    with Lan() as lan, tempfile.TemporaryDirectory(prefix="sds-late-") as tmp:
        alice = HeadlessPeer(Path(tmp) / "alice", "alice", host=lan.host("a"))
        for i in range(history):
            alice.send(f"line {i} of the history, said before bob came")
        wait_stored(alice, history, timeout)
        load = load_average()
        began = time.monotonic()
        bob = HeadlessPeer(Path(tmp) / "bob", "bob", host=lan.host("b"))  # returns at his ready line
        ready, cpu_at_ready = time.monotonic(), cpu_seconds(bob)
        first = wait_stored(bob, history, timeout)
        done, cpu = time.monotonic(), cpu_seconds(bob) - cpu_at_ready
        bob.drain(SETTLE_S)  # a session still running says how much it brought when it ends
        sessions = [e for e in bob.events if e["event"] == "catchup"]
        for peer in (alice, bob):
            peer.stop()
    whole, catch_up = done - began, done - first
    brought = " + ".join(f"{e['received']:,} {e['state']}" for e in sessions)
    return (f"{history:>7,} messages: ready {ready - began:5.2f} s, first stored {first - began:5.2f} s, "
            f"all {whole:6.2f} s -> {history / whole:7,.0f}/s from start, {history / catch_up:7,.0f}/s "
            f"catching up, {history / cpu:7,.0f}/CPU-s; sessions brought {brought} "
            f"(load average {load:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[3_000, 10_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    for history in args.history:
        for _ in range(args.repeat):
            print(run(history, args.timeout), flush=True)


if __name__ == "__main__":
    main()
