"""SDS engine throughput: messages/s received and sent, with a long history;
and the cost of a lone peer's step as its unacknowledged messages pile up.

    python benchmarks/sds_engine.py [--history 10000 100000] [--measure 20000]
    python benchmarks/sds_engine.py --alone [--messages 100000]
    python benchmarks/sds_engine.py --strangers [--senders 10000]

Two authors, alice and bob, take turns (each hears the other), so every
message names real predecessors. A third participant, carol, first receives
the whole history, then the timed batch - while holding five unacknowledged
messages of her own, so every arrival also checks their acknowledgement
against the sender's bloom filter, as in a live chat. Then carol sends a
timed batch of her own. Per-message cost must not grow with the history.

``--alone``: a peer nobody hears sends a message every 10 ms (virtual time)
and after each one does what the runtime does in a step - the timer's work
if due, drain events and datagrams, persist the state, CBOR-encoded - so no
message is ever acknowledged. "before" is the engine configured as it was
(every unacknowledged message resent every 3 s with no backoff or rate cap)
persisting the whole ``export_state(include_log=False)`` each step; "after"
is the defaults persisting ``take_changes()``. Per-message cost is printed
per window of the run.

``--strangers``: one-shot senders under made-up ids, each a valid sync
message with a full-size bloom filter and a made-up dependency, 5 ms apart;
the saved state (``export_state(include_log=False)``, CBOR) as they come,
and once they have all been silent for ``lost_after_ms``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cbor2  # noqa: E402

from proto.sds_pb2 import SdsMessage  # noqa: E402
from sync.sds import Channel, Config, compute_message_id  # noqa: E402
from sync.sds.bloom import RollingBloom  # noqa: E402

EMPTY_FILTER = RollingBloom(500, 0.01).to_bytes()  # what a fresh peer's sync carries

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


BEFORE = Config(resend_max_interval_ms=3_000, max_resends_per_s=1_000_000)


def alone(messages: int, incremental: bool, config: Config | None = None, window: int = 500) -> list[tuple]:
    """(first message, last message, ms per message, bytes persisted per step, datagrams per message)."""
    ch = Channel("general", "alice", T0, config)
    now = T0
    rows, start, persisted, datagrams = [], time.perf_counter(), 0, 0
    for i in range(1, messages + 1):
        now += 10
        ch.send(TEXT, now)
        if ch.get_timer() <= now:
            ch.handle_timer(now)
        list(ch.events())
        datagrams += len(ch.datagrams_to_send(now))
        state = ch.take_changes() if incremental else ch.export_state(include_log=False)
        persisted += len(cbor2.dumps(state))
        if i % window == 0:
            elapsed = time.perf_counter() - start
            rows.append((i - window + 1, i, elapsed * 1000 / window, persisted / window, datagrams / window))
            start, persisted, datagrams = time.perf_counter(), 0, 0
    return rows


def print_alone(messages: int, before_messages: int) -> None:
    print("a lone peer: send + step + persist, per message (every 10 ms of virtual time)")
    print(f"{'':>6}  {'messages':>17}  {'ms/msg':>7}  {'bytes/step':>10}  {'datagrams/msg':>13}")
    wanted = {500, 1_000, 1_500, 2_500, 3_000, 10_000, 50_000, 100_000, messages, before_messages}
    for label, n, incremental, config in (("before", before_messages, False, BEFORE),
                                          ("after", messages, True, None)):
        for first, last, ms, size, sent in alone(n, incremental, config):
            if last in wanted:
                print(f"{label:>6}  {first:>8,}-{last:<8,}  {ms:>7.3f}  {size:>10,.0f}  {sent:>13.1f}")


def stranger_sync(i: int, now: int) -> bytes:
    sender = f"stranger-{i}"
    msg = SdsMessage(sender_id=sender, channel_id="general", lamport_timestamp=now, bloom_filter=EMPTY_FILTER,
                     message_id=compute_message_id(sender, "general", now, b""))
    msg.causal_history.add(message_id=compute_message_id(sender, "general", now, b"phantom"), sender_id=sender)
    return msg.SerializeToString()


def print_strangers(senders: int) -> None:
    carol = Channel("general", "carol", T0)
    size = lambda: len(cbor2.dumps(carol.export_state(include_log=False)))  # noqa: E731
    print(f"{'senders':>9}  {'state bytes':>11}  {'us/datagram':>11}")
    print(f"{0:>9,}  {size():>11,}")
    now, start = T0, time.perf_counter()
    for i in range(1, senders + 1):
        now += 5
        carol.receive(stranger_sync(i, now), now)
        if carol.get_timer() <= now:
            carol.handle_timer(now)
        list(carol.events())
        carol.datagrams_to_send(now)
        if i % (senders // 4) == 0:
            per = (time.perf_counter() - start) * 1e6 / (senders // 4)
            print(f"{i:>9,}  {size():>11,}  {per:>11,.0f}")
            start = time.perf_counter()
    carol.handle_timer(now + carol.config.lost_after_ms + 1)
    list(carol.events())
    print(f"{'silent':>9}  {size():>11,}   (all silent for lost_after_ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--measure", type=int, default=20_000, help="messages per timed batch")
    parser.add_argument("--alone", action="store_true", help="a lone peer's cost per message as they pile up")
    parser.add_argument("--messages", type=int, default=100_000, help="with --alone: messages sent")
    parser.add_argument("--before-messages", type=int, default=3_000, help="with --alone: for the old behaviour")
    parser.add_argument("--strangers", action="store_true", help="state kept for one-shot senders")
    parser.add_argument("--senders", type=int, default=10_000, help="with --strangers: how many")
    args = parser.parse_args()
    if args.strangers:
        print_strangers(args.senders)
        return
    if args.alone:
        print_alone(args.messages, args.before_messages)
        return
    print(f"{'history':>9}  {'receive msg/s':>14}  {'send msg/s':>11}  {'bytes/msg':>9}")
    for history in args.history:
        r = measure(history, args.measure)
        print(f"{history:>9,}  {r['receive_per_s']:>14,.0f}  {r['send_per_s']:>11,.0f}  {r['wire_bytes']:>9,.0f}")


if __name__ == "__main__":
    main()
