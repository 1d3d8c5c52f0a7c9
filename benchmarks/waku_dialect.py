"""What speaking @waku/sds's filter dialect costs the engine.

    python benchmarks/waku_dialect.py [--history 10000] [--measure 10000]

The same measurement as ``sds_engine.py`` (a two-person conversation, then
carol receives a timed batch holding five unacknowledged messages, then
sends one), run twice: with our own peers only (compact filters), and with
an @waku/sds participant present, so every filter on the wire is its
18,752-byte format and every id is hashed into it as well.

Times are the CPU time of this process (``time.process_time``), so that
other work on a shared machine does not count.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proto.sds_pb2 import SdsMessage  # noqa: E402
from sync.sds import Channel  # noqa: E402
from sync.sds.waku_bloom import WakuBloom  # noqa: E402

T0 = 1_700_000_000_000
TEXT = b'\xa4dkinddtextdnickealicedtextx!see you at the standup in five!cseq\x19\x01\x00'
HEARTBEAT_EVERY = 10_000  # messages (ms here); the js participant counts as active for 60 s


def js_sync(now: int) -> bytes:
    """A sync message of an @waku/sds participant: its filter, no history."""
    return SdsMessage(
        sender_id="waku-js", message_id="sync-" + hashlib.sha256(str(now).encode()).hexdigest()[:10],
        channel_id="general", lamport_timestamp=now, bloom_filter=WakuBloom().to_bytes(),
    ).SerializeToString()


def run(history: int, batch: int, waku: bool) -> dict[str, float]:
    alice, bob, carol = (Channel("general", name, T0) for name in ("alice", "bob", "carol"))
    everyone = (alice, bob, carol)

    def heartbeat(now: int) -> None:
        if waku and now % HEARTBEAT_EVERY == 0:
            for ch in everyone:
                ch.receive(js_sync(now), now)

    for i in range(5):
        carol.send(b"carol's unacknowledged message %d" % i, T0)
    carol.datagrams_to_send(T0)
    wires = []
    for i in range(history + batch):
        now = T0 + i
        heartbeat(now)
        speaker, listener = (alice, bob) if i % 2 == 0 else (bob, alice)
        speaker.send(TEXT, now)
        (wire,) = (out.data for out in speaker.datagrams_to_send(now))
        listener.receive(wire, now)
        for ch in everyone:
            ch.datagrams_to_send(now)
            list(ch.events())
        wires.append(wire)
        if i < history:
            carol.receive(wire, now)

    timed = []
    now = T0 + history
    for wire in wires[history:]:
        heartbeat(now)
        start = time.process_time()
        carol.receive(wire, now)
        timed.append(time.process_time() - start)
        now += 1
    list(carol.events())
    assert len(carol.log) == history + batch + 5, "every message must be delivered"

    start = time.process_time()
    for i in range(batch):
        carol.send(TEXT, now + i)
    sent = time.process_time() - start
    datagrams = [out.data for out in carol.datagrams_to_send(now)]
    return {
        "receive_per_s": batch / sum(timed),
        "send_per_s": batch / sent,
        "wire_bytes": statistics.median(len(w) for w in datagrams),
        "filter_bytes": len(SdsMessage.FromString(datagrams[-1]).bloom_filter),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--measure", type=int, default=10_000)
    args = parser.parse_args()
    print(f"history {args.history:,}, {args.measure:,} messages timed each way")
    print(f"{'filters on the wire':<28} {'receive msg/s':>14} {'send msg/s':>11} {'bytes/msg':>10} {'filter':>7}")
    for label, waku in (("compact (our peers only)", False), ("@waku/sds format", True)):
        r = run(args.history, args.measure, waku)
        print(f"{label:<28} {r['receive_per_s']:>14,.0f} {r['send_per_s']:>11,.0f} "
              f"{r['wire_bytes']:>10,.0f} {r['filter_bytes']:>7,}")


if __name__ == "__main__":
    main()
