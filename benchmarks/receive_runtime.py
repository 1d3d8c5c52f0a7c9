"""What the running peer spends on one received chat message, end to end.

    python benchmarks/receive_runtime.py [--history 1000 100000] [--messages 3000] [--batch 64] [--rounds 3]

Alice's runtime sends ``--history`` + 2 x ``--rounds`` x ``--messages``
signed chat messages; carol's runtime (a real SQLite file) first receives
``--history`` of them untimed, then the rest in batches of ``--batch`` - the
gate, the signature, routing, the engine, the step that translates and
commits, the events - as the socket would hand them over, two ways in turn:

    one core   ``Runtime.datagrams_received``: each signature checked in line;
               messages per CPU-second of this process (``time.process_time``),
               which means "on one core" even on a busy machine
    pool       ``Runtime.admit`` -> ``VerifyPipeline`` (the signatures of a batch
               checked on two worker threads while the runtime takes the batch
               before) -> ``Runtime.datagrams_verified``, as ``AsyncPeer`` does:
               messages per second of wall time (and per CPU-second, all threads)

Each round times one chunk of messages each way, one after the other, so
both see the same load; print ``uptime`` beside the figures. ``duplicates``
is the last chunk received a second time (each answered from memory).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.io.verifying import Verified, VerifyPipeline  # noqa: E402
from chat_app.runtime import Runtime  # noqa: E402
from chat_app.store import Store  # noqa: E402

T0 = 1_767_225_600_000
ALICE_AT, CAROL_AT = ("10.0.0.1", 7000), ("10.0.0.2", 7000)


def alice_datagrams(root: Path, n: int) -> list[bytes]:
    """Alice's chat datagrams, one per message, as she sent them."""
    alice = Runtime(Store(root / "alice" / "db.sqlite3"), nick="alice", static_peers=[CAROL_AT])
    alice.start(("general",), ALICE_AT[1], [ALICE_AT[0]], T0)
    alice.datagrams_to_send()
    wires = []
    for i in range(n):  # 50 ms apart: never held back for want of acknowledgements
        alice.say("general", f"line {i}: see you at the standup in five!", "text", T0 + 50 * i)
        wires += [data for data, to in alice.datagrams_to_send() if to == CAROL_AT]
        alice.events()
    return wires


def batches(wires: list[bytes], size: int, now: int) -> list[tuple[int, list[tuple[bytes, tuple[str, int]]]]]:
    """``wires`` in batches, each with the time it arrives: a millisecond a datagram,
    within alice's verification budget (``VerifyBudget``: 2,000 a second from one source)."""
    return [(now + i, [(w, ALICE_AT) for w in wires[i:i + size]]) for i in range(0, len(wires), size)]


def timed(run, *args) -> tuple[float, float]:
    """(CPU seconds of every thread of this process, wall seconds) of ``run(*args)``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run(*args)
    return time.process_time() - cpu, time.perf_counter() - wall


def one_core(carol: Runtime, chunk: list) -> None:
    for now, batch in chunk:
        carol.datagrams_received(batch, now)
        carol.datagrams_to_send()
        carol.events()


def pooled(carol: Runtime, pipeline: VerifyPipeline, take: Verified, chunk: list, clock: list[int]) -> None:
    for now, batch in chunk:
        clock[0] = now  # the adapter's clock, read when a batch is handed on: the latest arrival's time
        pipeline.put(carol.admit(batch, now), take)
    pipeline.drain()


def measure(history: int, m: int, batch: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wires = alice_datagrams(root, history + 2 * rounds * m)
        now = T0 + 50 * len(wires)  # every message sent by now
        carol = Runtime(Store(root / "carol" / "db.sqlite3"), nick="carol", static_peers=[ALICE_AT])
        carol.start(("general",), CAROL_AT[1], [CAROL_AT[0]], T0)
        one_core(carol, batches(wires[:history], batch, now))
        now += history

        clock = [now]

        def take(arrivals, verdicts):
            carol.datagrams_verified(arrivals, verdicts, clock[0])
            carol.datagrams_to_send()
            carol.events()
        pipeline = VerifyPipeline()
        print(f"history {history:,}: {m:,} messages a chunk, batches of {batch}")
        for r in range(rounds):
            start = history + 2 * r * m
            alone = batches(wires[start:start + m], batch, now)
            shared = batches(wires[start + m:start + 2 * m], batch, now + m)
            now += 2 * m
            cpu1, wall1 = timed(one_core, carol, alone)
            cpu2, wall2 = timed(pooled, carol, pipeline, take, shared, clock)
            print(f"  round {r}: one core {m / cpu1:7,.0f} msg/CPU-s ({m / wall1:7,.0f}/s wall)   "
                  f"pool {m / wall2:7,.0f} msg/s wall ({m / cpu2:7,.0f}/CPU-s, {cpu2 / wall2:.2f} cores)")
        pipeline.close()
        held = carol.store.count("general")
        assert held == len(wires), f"carol holds {held} of {len(wires)}"
        again, _ = timed(one_core, carol, batches(wires[-m:], batch, now))
        print(f"  duplicates {m / again:7,.0f} msg/CPU-s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--messages", type=int, default=3_000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for history in args.history:
        measure(history, args.messages, args.batch, args.rounds)


if __name__ == "__main__":
    main()
