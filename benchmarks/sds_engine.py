"""SDS engine throughput: messages/s received and sent, with a long history.

    python benchmarks/sds_engine.py [--history 10000 100000] [--measure 20000]

Two authors, alice and bob, take turns (each hears the other), so every
message names real predecessors. A third participant, carol, first receives
the whole history, then the timed batch - while holding five unacknowledged
messages of her own, so every arrival also checks their acknowledgement
against the sender's bloom filter, as in a live chat. Then carol sends a
timed batch of her own. Per-message cost must not grow with the history.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.sds import Channel  # noqa: E402

T0 = 1_700_000_000_000
TEXT = b'\xa4dkinddtextdnickealicedtextx!see you at the standup in five!cseq\x19\x01\x00'


def conversation(n: int, start: int) -> list[bytes]:
    """``n`` datagrams of a two-person conversation, oldest first."""
    alice, bob = Channel("general", "alice", start), Channel("general", "bob", start)
    wires = []
    for i in range(n):
        speaker, listener = (alice, bob) if i % 2 == 0 else (bob, alice)
        now = start + i
        speaker.send(TEXT, now)
        (wire,) = (out.data for out in speaker.datagrams_to_send(now))
        listener.receive(wire, now)
        listener.datagrams_to_send(now)
        list(listener.events())
        list(speaker.events())
        wires.append(wire)
    return wires


def measure(history: int, batch: int) -> dict[str, float]:
    wires = conversation(history + batch, T0)
    carol = Channel("general", "carol", T0)
    for i in range(5):
        carol.send(b"carol's unacknowledged message %d" % i, T0)
    carol.datagrams_to_send(T0)
    for i, wire in enumerate(wires[:history]):
        carol.receive(wire, T0 + i)
    list(carol.events())

    start = time.perf_counter()
    now = T0 + history
    for wire in wires[history:]:
        carol.receive(wire, now)
        now += 1
    for _ in carol.events():
        pass
    received = time.perf_counter() - start
    assert len(carol.log) == history + batch + 5, "every message must be delivered"

    start = time.perf_counter()
    for i in range(batch):
        carol.send(TEXT, now + i)
    sent = time.perf_counter() - start
    datagrams = [out.data for out in carol.datagrams_to_send(now)]
    return {
        "receive_per_s": batch / received,
        "send_per_s": batch / sent,
        "wire_bytes": statistics.median(len(w) for w in datagrams),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--measure", type=int, default=20_000, help="messages per timed batch")
    args = parser.parse_args()
    print(f"{'history':>9}  {'receive msg/s':>14}  {'send msg/s':>11}  {'bytes/msg':>9}")
    for history in args.history:
        r = measure(history, args.measure)
        print(f"{history:>9,}  {r['receive_per_s']:>14,.0f}  {r['send_per_s']:>11,.0f}  {r['wire_bytes']:>9,.0f}")


if __name__ == "__main__":
    main()
