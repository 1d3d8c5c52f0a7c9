"""What a direct message costs: per-datagram sealing and opening, bytes
added, and the whole runtime path of one message on real SQLite files.

    python benchmarks/direct.py [--datagrams 2000] [--messages 300]

Sealing: ``seal_to`` (an ephemeral X25519 key, two exchanges, HKDF,
ChaCha20-Poly1305) and then the Ed25519 envelope, against the receiver's
``Gate.open`` (verify) and ``open_sealed``. CPU time of this process
(``time.process_time``), so the figures mean "on one core" even on a busy
machine.

Runtime: two ``Runtime``s on the in-memory network of the runtime tests,
each with its own SQLite file; alice sends ``--messages`` direct messages
one after another, each delivered, stored on both sides and acknowledged
before the next (``send`` -> bob's ``DmDelivered`` -> alice's
``DmAcknowledged``); CPU time per message, both peers together, epochs
skipped (the clock jumps to each deadline).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app import events as ev  # noqa: E402
from chat_app.crypto import Identity, Kind, seal  # noqa: E402
from chat_app.crypto.gate import Gate  # noqa: E402
from chat_app.crypto.sealed import OVERHEAD, open_sealed, seal_to  # noqa: E402
from chat_app.payload import Payload  # noqa: E402
from tests.runtime.conftest import Net  # noqa: E402

ALICE, BOB = Identity.generate(), Identity.generate()


def sealing(count: int) -> None:
    body = b"\x00" + Payload("text", "alice", "see you at the standup in five!", 1, 1).encode()
    started = time.process_time()
    datagrams = [seal(ALICE, Kind.MVDS, seal_to(ALICE, BOB.public_key, BOB.exchange_public_key, body))
                 for _ in range(count)]
    sealed_s = time.process_time() - started
    gate = Gate(BOB)
    started = time.process_time()
    for i, data in enumerate(datagrams):
        opened = gate.open(data, ("10.0.0.1", i % 1000), i)
        open_sealed(BOB, opened.signer.public_key, ALICE.exchange_public_key, opened.payload)
    opened_s = time.process_time() - started
    print(f"sealing  {count} datagrams of {len(body)} plaintext bytes -> {len(datagrams[0])} bytes on the wire "
          f"(+{OVERHEAD} sealing, +{len(datagrams[0]) - len(body) - OVERHEAD} envelope)")
    print(f"  seal + sign     {sealed_s / count * 1e6:7.0f} us/datagram  ({count / sealed_s:,.0f}/s on one core)")
    print(f"  verify + open   {opened_s / count * 1e6:7.0f} us/datagram  ({count / opened_s:,.0f}/s on one core)")


def runtime(messages: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        net = Net(Path(tmp))
        alice, bob = net.add("alice"), net.add("bob")
        for rt, other in ((alice, bob), (bob, alice)):
            address = net.address(other)
            rt.peer_announced(other.peer_id, other.nick, [address[0]], address[1], ("general",), net.now,
                              key=other.identity.public_key)
        net.pump()
        acked = 0
        started, wall = time.process_time(), time.perf_counter()
        for i in range(messages):
            alice.direct.send("bob", f"message {i}", "text", "alice", net.now)
            while acked <= i:
                net.pump()
                acked += len([e for e in net.events[net.address(alice)] if isinstance(e, ev.DmAcknowledged)])
                net.events[net.address(alice)].clear()
                if acked <= i:
                    net.now = min(d for d in (alice.get_timer(), bob.get_timer()) if d is not None)
                    for rt in (alice, bob):
                        if (d := rt.get_timer()) is not None and d <= net.now:
                            rt.handle_timer(net.now)
        cpu, elapsed = time.process_time() - started, time.perf_counter() - wall
        stored = len(bob.store.messages(f"@{alice.peer_id}"))
        assert stored == messages, stored
        print(f"runtime  {messages} direct messages, each stored on both sides and acknowledged before the next")
        print(f"  {cpu / messages * 1e3:.2f} ms CPU per message, both peers ({elapsed / messages * 1e3:.2f} ms wall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datagrams", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    sealing(args.datagrams)
    runtime(args.messages)


if __name__ == "__main__":
    main()
