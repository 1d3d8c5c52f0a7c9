"""What it costs a blind store to catch up a private channel from a member
over a replication link (set reconciliation of the channel's datagram set,
by blind id), as the channel's history grows.

    python benchmarks/blind_catchup.py [--history 1000 10000 100000] [--missing 10]

For each history size, a member's store is filled with that many signed chat
messages of one private channel, and a blind store's with the datagrams of
all but ``--missing`` of them (then, in a second row, with none: a store
started from nothing; and a third row as the first, with the member's set
already worked out, as for every link after the first while the channel
does not grow). The two runtimes are linked by an in-memory stream
(real runtimes, real SQLite files; the store reads answered at once, as the
simulator does) and run until the link is quiet. Printed: wall and CPU time
of the whole catch-up, the member's share spent working out its datagram
set, bytes each way, stream messages each way, and what the store kept.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.crypto import Kind, blind_id, seal  # noqa: E402
from chat_app.crypto.channel import ScryptParams  # noqa: E402
from chat_app.payload import Payload  # noqa: E402
from chat_app.runtime import Runtime  # noqa: E402
from chat_app.store import Store  # noqa: E402
from proto.sds_pb2 import SdsMessage  # noqa: E402
from sync.sds.wire import compute_message_id  # noqa: E402

ROOM, PASS = "operations-room", "correct horse battery staple"
T0 = 1_767_225_600_000
FAST = ScryptParams(n=2**10, r=8, p=1)  # the key's cost is not what is measured


def member(tmp: Path, history: int) -> Runtime:
    rt = Runtime(Store(tmp / "member.sqlite3"), nick="alice", passphrases={ROOM: PASS})
    rt.envelopes.gate.keyring.params = FAST
    rt.start([], 7000, ["10.0.0.1"], T0)
    key, me = rt.envelopes.private[ROOM], rt.peer_id
    rows = []
    for i in range(1, history + 1):
        content = Payload("text", "alice", f"line {i} of the history", seq=i, sent_at=T0 + i).encode()
        message = SdsMessage(sender_id=me, channel_id=ROOM, lamport_timestamp=i, content=content)
        message.message_id = compute_message_id(me, ROOM, i, content)
        wire = seal(rt.identity, Kind.SDS, message.SerializeToString(), context=key.tag)
        rows.append((ROOM, message.message_id, i, me, "alice", "text", f"line {i}", i, T0 + i, wire, T0, T0, 1))
    insert(rt, "INSERT INTO messages (channel, message_id, lamport, sender_id, nick, kind, text, seq, sent_at, "
               "wire, received_at, delivered_at, own) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return rt


def insert(rt: Runtime, sql: str, rows: list[tuple]) -> None:
    """Write rows straight into the runtime's database file, in one transaction."""
    with closing(sqlite3.connect(rt.store.path)) as conn, conn:
        conn.executemany(sql, rows)


def blind_store(tmp: Path, name: str, alice: Runtime, held: int) -> Runtime:
    key = alice.envelopes.private[ROOM]
    rt = Runtime(Store(tmp / f"{name}.sqlite3"), nick="store")
    rt.start([f"~{key.tag.hex()}"], 7001, ["10.0.0.2"], T0)
    datagrams = [key.encrypt(w) for _, w in alice.store.wires(ROOM)[:held]]
    insert(rt, "INSERT INTO blind (tag, blind_id, data, received_at) VALUES (?, ?, ?, ?)",
           [(key.tag, blind_id(d), d, T0) for d in datagrams])
    return rt


def link(dialer: Runtime, listener: Runtime) -> dict[str, float]:
    """Run one replication link to the end; what it cost."""
    a = dialer.stream_opened(("10.0.0.2", 7001), initiator=True, now=T0)
    b = listener.stream_opened(("10.0.0.1", 7000), initiator=False, now=T0)
    ends = [(dialer, a, listener, b, "out"), (listener, b, dialer, a, "in")]
    cost = {"out": 0, "in": 0, "msgs_out": 0, "msgs_in": 0, "reads": 0.0, "listener_reads": 0.0}
    wall, cpu = time.perf_counter(), time.process_time()
    moved = True
    while moved:
        moved = False
        for rt, conn, other, other_conn, way in ends:
            for wanted_conn, wanted in rt.reads():
                t = time.process_time()
                answer = rt.read_wanted(rt.store, wanted)
                cost["reads" if rt is dialer else "listener_reads"] += time.process_time() - t
                rt.store_answered(wanted_conn, wanted, answer, T0)
                moved = True
            for out in conn.datagrams_to_send(T0):
                moved = True
                cost[way] += len(out.data)
                cost[f"msgs_{way}"] += 1
                other.stream_frames(other_conn, [out.data], T0)
    cost["wall"], cost["cpu"] = time.perf_counter() - wall, time.process_time() - cpu
    return cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--missing", type=int, default=10)
    args = parser.parse_args()
    print(f"{'history':>8} {'store lacks':>11} {'wall s':>7} {'cpu s':>6} {'member set s':>12} "
          f"{'bytes to store':>14} {'bytes back':>10} {'msgs':>9} {'kept':>7}")
    for history in args.history:
        with tempfile.TemporaryDirectory() as tmp:
            alice = member(Path(tmp), history)
            for lacks, warm in ((args.missing, False), (history, False), (args.missing, True)):
                if not warm:
                    alice._catchup._sets.clear()  # the member works its set out afresh
                store = blind_store(Path(tmp), f"store{lacks}{warm}", alice, history - lacks)
                cost = link(alice, store)
                kept = store.stats["blind_replicated_in"]
                print(f"{history:>8,} {lacks:>11,} {cost['wall']:>7.2f} {cost['cpu']:>6.2f} {cost['reads']:>12.2f} "
                      f"{cost['out']:>14,} {cost['in']:>10,} {cost['msgs_out']:>4}/{cost['msgs_in']:<4} {kept:>7,}"
                      + ("  (again: the member's set unchanged)" if warm else ""))
                store.store.close()
            alice.store.close()


if __name__ == "__main__":
    main()
