"""What it costs a late member to catch up a private channel from another
member over a replication link, as the channel's history grows.

    python benchmarks/private_catchup.py [--history 1000 5000] [--authors 4] [--repeat 3]

For each history size, a member's store is filled with that many signed chat
messages of one private channel, said in turn by ``--authors`` people; a
late member with an empty store then dials it (and, in a second row, is
dialled by it). The two runtimes are linked by an in-memory stream (real
runtimes, real SQLite files, every entry opened and verified and stored
through the channel's engine; the store reads answered at once, as the
simulator does) and run until the link is quiet. Printed, best of
``--repeat`` runs: wall and CPU time of the whole catch-up (both sides, one
process), the serving member's share spent answering its store reads, bytes
and stream messages each way, and how many messages the late member stored.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.blind_catchup import FAST, PASS, ROOM, T0, insert, link  # noqa: E402
from chat_app.crypto import Identity, Kind, seal  # noqa: E402
from chat_app.payload import Payload  # noqa: E402
from chat_app.runtime import Runtime  # noqa: E402
from chat_app.store import Store  # noqa: E402
from proto.sds_pb2 import SdsMessage  # noqa: E402
from sync.sds.wire import compute_message_id  # noqa: E402


def runtime(directory: Path, nick: str) -> Runtime:
    directory.mkdir()  # a directory each: the identity key lives next to the store
    rt = Runtime(Store(directory / "db.sqlite3"), nick=nick, passphrases={ROOM: PASS})
    rt.envelopes.gate.keyring.params = FAST  # the key's cost is not what is measured
    return rt


def member(tmp: Path, history: int, authors: int) -> Runtime:
    """A member holding ``history`` messages of the private channel, by ``authors`` people in turn."""
    rt = runtime(tmp / "member", "alice")
    rt.start([], 7000, ["10.0.0.1"], T0)
    key = rt.envelopes.private[ROOM]
    people = [(rt.identity, "alice"), *((Identity.generate(), f"author{n}") for n in range(1, authors))]
    rows = []
    for i in range(1, history + 1):
        identity, nick = people[i % authors]
        me, seq = identity.sender_id, i // authors + (1 if i % authors else 0)
        content = Payload("text", nick, f"line {i} of the history", seq=seq, sent_at=T0 + i).encode()
        message = SdsMessage(sender_id=me, channel_id=ROOM, lamport_timestamp=i, content=content)
        message.message_id = compute_message_id(me, ROOM, i, content)
        wire = seal(identity, Kind.SDS, message.SerializeToString(), context=key.tag)
        rows.append((ROOM, message.message_id, i, me, nick, "text", f"line {i}", seq, T0 + i, wire, T0, T0,
                     int(nick == "alice")))
    insert(rt, "INSERT INTO messages (channel, message_id, lamport, sender_id, nick, kind, text, seq, sent_at, "
               "wire, received_at, delivered_at, own) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return rt


def late(tmp: Path, name: str) -> Runtime:
    rt = runtime(tmp / name, "carol")
    rt.start([], 7001, ["10.0.0.2"], T0)
    return rt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[1_000, 5_000])
    parser.add_argument("--authors", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'history':>8} {'who dials':>10} {'wall s':>7} {'cpu s':>6} {'member reads s':>14} "
          f"{'bytes to late':>13} {'bytes back':>10} {'msgs':>11} {'stored':>7}")
    for history in args.history:
        with tempfile.TemporaryDirectory() as tmp:
            alice = member(Path(tmp), history, args.authors)
            for dialer in ("late", "member"):
                runs = []
                for n in range(args.repeat):
                    alice._catchup._sets.clear()  # every run starts from a member that has not linked yet
                    carol = late(Path(tmp), f"carol-{dialer}-{n}")
                    cost = link(carol, alice) if dialer == "late" else link(alice, carol)
                    if dialer == "late":  # link() names the ways from the dialler's side
                        cost["reads"], (cost["in"], cost["out"]) = cost["listener_reads"], (cost["out"], cost["in"])
                        cost["msgs_in"], cost["msgs_out"] = cost["msgs_out"], cost["msgs_in"]
                    runs.append((cost, carol.store.count(ROOM)))
                    carol.store.close()
                cost, stored = min(runs, key=lambda run: run[0]["cpu"])
                print(f"{history:>8,} {dialer:>10} {cost['wall']:>7.2f} {cost['cpu']:>6.2f} {cost['reads']:>14.2f} "
                      f"{cost['out']:>13,} {cost['in']:>10,} {cost['msgs_out']:>5}/{cost['msgs_in']:<5} "
                      f"{stored:>7,}")
            alice.store.close()


if __name__ == "__main__":
    main()
