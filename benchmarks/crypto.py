"""Receive throughput of signed and of encrypted SDS datagrams, and what a flood costs.

    python benchmarks/crypto.py [--history 1000 10000 100000] [--measure 5000] [--flood 2000]

As in benchmarks/sds_engine.py, alice and bob talk and carol, holding five
unacknowledged messages of her own, first receives the whole history and then
a timed batch - here through each layer in turn:

    unsigned   engine.receive(wire)                           (no envelope at all)
    signed     open_envelope + check_sds + engine.receive_message (the message checked once)
    encrypted  ChannelKey.open (decrypt + verify) + check_sds + engine.receive_message
    runtime    Envelopes.open (gate, verify, check, route) + engine.receive_message:
               what the running peer does with a datagram

and the layer alone, without the engine; ``duplicate`` is the runtime layer
opening each datagram a second time (a resend, a relayed copy). Figures are messages per second of
CPU time of this process (``time.process_time``), so they mean "on one core"
even on a busy machine; wall-clock figures are printed beside them.

The verifier section checks the same signatures with libsodium (PyNaCl, what
``Signer.verify`` uses) and with OpenSSL (``cryptography``), one thread and
then two threads sharing the work: whether a library releases the GIL while
it verifies decides whether the verify pool (``chat_app.io.verifying``) gains.

The flood section sends datagrams with bad signatures: what each one costs
to refuse after a full check, what it costs once the source is over its
verification budget (``Gate``), and how many real messages per second still
get through while ten bad ones arrive for every good one.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.exceptions import InvalidSignature  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey  # noqa: E402
from nacl.bindings import crypto_sign_open  # noqa: E402

from chat_app.crypto import (  # noqa: E402
    ChannelKey, EnvelopeError, Identity, Keyring, Kind, KnownKeys, check_sds, open_envelope, seal,
)
from chat_app.crypto.envelope import _signed_bytes  # noqa: E402
from chat_app.crypto.gate import Gate, VerifyBudget  # noqa: E402
from chat_app.payload import Payload  # noqa: E402
from chat_app.runtime.envelopes import Envelopes  # noqa: E402
from sync.sds import Channel  # noqa: E402

T0 = 1_700_000_000_000
TEXT = Payload("text", "alice", "see you at the standup in five!", seq=256, sent_at=T0).encode()
ALICE, BOB, CAROL, EVE = (Identity.generate() for _ in range(4))
PRIVATE = ChannelKey(name="general", secret=bytes(range(32)))  # a derived key; scrypt is not what is measured


def conversation(n: int) -> list[bytes]:
    """``n`` SDS datagrams of alice and bob taking turns, oldest first."""
    alice, bob = Channel("general", ALICE.sender_id, T0), Channel("general", BOB.sender_id, T0)
    wires = []
    for i in range(n):
        speaker, listener = (alice, bob) if i % 2 == 0 else (bob, alice)
        speaker.send(TEXT, T0 + i)
        (wire,) = (out.data for out in speaker.datagrams_to_send(T0 + i))
        listener.receive(wire, T0 + i)
        listener.datagrams_to_send(T0 + i)
        list(listener.events())
        list(speaker.events())
        wires.append(wire)
    return wires


def carol_with(history: list[bytes]) -> Channel:
    carol = Channel("general", CAROL.sender_id, T0)
    for i in range(5):
        carol.send(b"carol's unacknowledged message %d" % i, T0)
    carol.datagrams_to_send(T0)
    for i, wire in enumerate(history):
        carol.receive(wire, T0 + i)
    list(carol.events())
    return carol


def timed(run) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``run()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(history: int, batch: int) -> dict[str, tuple[float, float]]:
    wires = conversation(history + batch)
    past, timed_wires = wires[:history], wires[history:]
    first = history  # alice speaks on even indices of the whole conversation
    signed = [seal(ALICE if (first + i) % 2 == 0 else BOB, Kind.SDS, w) for i, w in enumerate(timed_wires)]
    encrypted = [PRIVATE.seal(ALICE if (first + i) % 2 == 0 else BOB, Kind.SDS, w)
                 for i, w in enumerate(timed_wires)]
    results = {}

    def through_engine(name, datagrams, open_one):
        carol = carol_with(past)
        keys = KnownKeys()
        open_envelope(seal(ALICE, Kind.FETCH, b"warm"), keys)  # both keys seen once, as in a live chat
        open_envelope(seal(BOB, Kind.FETCH, b"warm"), keys)

        def run():
            now = T0 + history
            for data in datagrams:
                opened = open_one(data, keys)  # the bytes, or the message the layer checked
                if isinstance(opened, bytes):
                    carol.receive(opened, now)
                else:
                    carol.receive_message(opened, now)
                now += 1
            for _ in carol.events():
                pass
        results[name] = timed(run)
        assert len(carol.log) == history + batch + 5, "every message must be delivered"

    def layer_only(name, datagrams, open_one):
        keys = KnownKeys()
        results[name] = timed(lambda: [open_one(d, keys) for d in datagrams])

    def plain(data, keys):
        return data

    def verified(data, keys):
        return check_sds(open_envelope(data, keys))

    def private(data, keys):
        opened = PRIVATE.open(data, keys) if data[1] == Kind.PRIVATE else open_envelope(data, keys)
        return check_sds(opened)

    def through_runtime(name):
        carol = carol_with(past)
        envelopes = Envelopes(CAROL, sds=carol.config)  # the gate checks against the engine's bounds, as in a peer
        envelopes.open(seal(ALICE, Kind.FETCH, b"warm"), "warm-up", T0)  # both keys seen once
        envelopes.open(seal(BOB, Kind.FETCH, b"warm"), "warm-up", T0)
        source, now = ("192.0.2.1", 9000), T0 + history

        def run():
            for i, data in enumerate(signed):
                routed = envelopes.open(data, source, now + i)
                carol.receive_message(routed.parsed, now + i)
            for _ in carol.events():
                pass
        results[name] = timed(run)
        assert len(carol.log) == history + batch + 5, "every message must be delivered"
        results["duplicate"] = timed(lambda: [envelopes.open(d, source, now + batch) for d in signed])
        assert envelopes.stats["repeated"] >= batch

    through_engine("unsigned", timed_wires, plain)
    through_engine("signed", signed, verified)
    through_engine("encrypted", encrypted, private)
    through_runtime("runtime")
    layer_only("verify only", signed, verified)
    layer_only("decrypt+verify only", encrypted, private)
    return results


def flood(n: int) -> None:
    good = [seal(ALICE, Kind.SDS, w) for w in conversation(n)[::2]]
    bad = []
    for i in range(n):
        data = bytearray(seal(EVE, Kind.SDS, b"spam %d" % i))
        data[-1] ^= 1
        bad.append(bytes(data))

    keys = KnownKeys()

    def refuse_all():
        for data in bad:
            try:
                open_envelope(data, keys)
            except EnvelopeError:
                pass
    cpu, _ = timed(refuse_all)
    print(f"  refusing a bad signature after a full check:   {cpu / n * 1e6:7.1f} µs each")

    gate = Gate(CAROL, Keyring(), VerifyBudget())
    now = T0

    def over_budget():
        for data in bad:
            try:
                gate.open(data, source=("192.0.2.66", 9000), now=now)
            except EnvelopeError:
                pass
    cpu, _ = timed(over_budget)
    print(f"  refusing one from a source over its budget:    {cpu / n * 1e6:7.1f} µs each "
          f"({gate.stats['bad_signature']} of {n} were checked)")

    gate = Gate(CAROL, Keyring(), VerifyBudget())
    delivered = 0

    def mixed():
        nonlocal delivered
        for i, data in enumerate(good):
            now = T0 + i  # one real message a millisecond, ten bad ones with it
            for spam in bad[(10 * i) % n:(10 * i) % n + 10]:
                try:
                    gate.open(spam, source=("192.0.2.66", 9000), now=now)
                except EnvelopeError:
                    pass
            gate.open(data, source=("192.0.2.1", 9000), now=now)
            delivered += 1
    cpu, wall = timed(mixed)
    print(f"  real messages verified under a 10:1 flood:     {delivered / cpu:7,.0f} msg/s "
          f"(all {delivered} delivered; {gate.stats['over_budget']} bad dropped unchecked)")


def verifiers(n: int) -> None:
    """Signatures per second of wall time, one thread and two, per library."""
    envelopes = [seal(ALICE, Kind.SDS, w) for w in conversation(n)]
    signed = [(e[-64:], _signed_bytes(Kind.SDS, ALICE.public_key, b"", e[35:-64])) for e in envelopes]
    key = Ed25519PublicKey.from_public_bytes(ALICE.public_key)

    def sodium(pairs):
        for signature, data in pairs:
            crypto_sign_open(signature + data, ALICE.public_key)

    def openssl(pairs):
        for signature, data in pairs:
            try:
                key.verify(signature, data)
            except InvalidSignature:
                raise AssertionError("every signature here is good") from None

    halves = (signed[:n // 2], signed[n // 2:])
    with ThreadPoolExecutor(2) as pool:
        for name, verify in (("libsodium (PyNaCl)", sodium), ("OpenSSL (cryptography)", openssl)):
            one_cpu, one_wall = timed(partial(verify, signed))
            two_cpu, two_wall = timed(partial(lambda v: list(pool.map(v, halves)), verify))
            print(f"  {name:24} one thread {n / one_wall:7,.0f}/s ({n / one_cpu:7,.0f}/CPU-s)   "
                  f"two threads {n / two_wall:7,.0f}/s ({two_cpu / two_wall:.2f} cores busy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--measure", type=int, default=5_000, help="messages per timed batch")
    parser.add_argument("--flood", type=int, default=2_000, help="bad datagrams in the flood section")
    parser.add_argument("--verifiers-only", action="store_true", help="only the verifier section")
    args = parser.parse_args()
    if args.verifiers_only:
        verifiers(args.measure)
        return
    names = ["unsigned", "signed", "encrypted", "runtime", "verify only", "decrypt+verify only", "duplicate"]
    print("msg/s on one core (CPU time); wall clock in brackets")
    print(f"{'history':>9}  " + "  ".join(f"{n:>22}" for n in names))
    for history in args.history:
        r = measure(history, args.measure)
        cells = [f"{args.measure / r[n][0]:>9,.0f} ({args.measure / r[n][1]:>9,.0f})" for n in names]
        print(f"{history:>9,}  " + "  ".join(f"{c:>22}" for c in cells))
    print(f"verifying {args.measure:,} signatures:")
    verifiers(args.measure)
    print(f"flood of {args.flood:,} bad signatures:")
    flood(args.flood)


if __name__ == "__main__":
    main()
