"""What the running peer spends on one received chat message, end to end.

    python benchmarks/receive_runtime.py [--messages 3000] [--batch 16] [--rounds 3]

Alice's runtime sends ``--messages`` chat messages; carol's runtime (a real
SQLite file) receives them through ``Runtime.datagrams_received`` in
batches of ``--batch`` - the gate, the signature, routing, the engine, the
step that translates and commits - as the socket would hand them over. Each
round starts carol afresh. Figures are messages per second of CPU time of
this process (``time.process_time``), so they mean "on one core" even on a
busy machine; ``duplicates`` is the same datagrams received a second time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def receive(root: Path, name: str, wires: list[bytes], batch: int) -> tuple[float, float, float, Runtime]:
    carol = Runtime(Store(root / name / "db.sqlite3"), nick="carol", static_peers=[ALICE_AT])
    carol.start(("general",), CAROL_AT[1], [CAROL_AT[0]], T0)

    def feed(now: int) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(0, len(wires), batch):
            carol.datagrams_received([(w, ALICE_AT) for w in wires[i:i + batch]], now + i)
            carol.datagrams_to_send()
            carol.events()
        return time.process_time() - cpu, time.perf_counter() - wall

    first_cpu, first_wall = feed(T0 + 50 * len(wires) // 2)
    again_cpu, _ = feed(T0 + 50 * len(wires))
    return first_cpu, first_wall, again_cpu, carol


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=3_000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wires = alice_datagrams(root, args.messages)
        for r in range(args.rounds):
            cpu, wall, again, carol = receive(root, f"carol{r}", wires, args.batch)
            held = carol.store.count("general")
            assert held >= args.messages, f"carol holds {held} of {args.messages}"
            print(f"round {r}: {args.messages / cpu:7,.0f} msg/s CPU ({args.messages / wall:7,.0f} wall), "
                  f"duplicates {args.messages / again:7,.0f} msg/s CPU")


if __name__ == "__main__":
    main()
