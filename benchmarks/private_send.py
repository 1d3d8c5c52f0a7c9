"""What sealing one private-channel datagram costs, and the share of it spent
deciding whether the datagram lasts (kind 0x50) or only passes (0x51).

    python benchmarks/private_send.py [--messages 2000] [--rounds 5]

The decision (``chat_app.crypto.channel.lasting``) parses the SDS protobuf
inside the signed envelope, on every private datagram sent; it is what lets a
blind store keep chat messages and drop sync and typing traffic. Figures are
microseconds of CPU time per datagram (``time.process_time``), the best of
``--rounds``, so they mean "on one core" even on a busy machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.crypto import ChannelKey, Identity, Kind, seal  # noqa: E402
from chat_app.crypto.channel import lasting  # noqa: E402
from chat_app.payload import Payload  # noqa: E402
from sync.sds import Channel  # noqa: E402

T0 = 1_700_000_000_000


def best_us(run, count: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    alice = Identity.generate()
    key = ChannelKey("general", bytes(range(32)))  # a derived key: scrypt is not what is measured
    channel = Channel("general", alice.sender_id, T0)
    wires = []
    for i in range(args.messages):
        channel.send(Payload("text", "alice", f"see you at the standup in {i} minutes", seq=i + 1,
                             sent_at=T0 + i).encode(), T0 + i)
        wires += [out.data for out in channel.datagrams_to_send(T0 + i)]
    envelopes = [seal(alice, Kind.SDS, w) for w in wires]
    n = len(wires)
    decide = best_us(lambda: [lasting(e) for e in envelopes], n, args.rounds)
    encrypt = best_us(lambda: [key.encrypt(e) for e in envelopes], n, args.rounds)
    sign_encrypt = best_us(lambda: [key.seal(alice, Kind.SDS, w) for w in wires], n, args.rounds)
    print(f"{n} private chat datagrams, best of {args.rounds} rounds, CPU time per datagram:")
    print(f"  lasting (parse, decide 0x50/0x51)  {decide:7.2f} us")
    print(f"  encrypt (HMAC nonce, AEAD, lasting) {encrypt:7.2f} us")
    print(f"  sign + encrypt                      {sign_encrypt:7.2f} us")
    print(f"  the decision's share of sending     {decide / sign_encrypt:7.1%}")


if __name__ == "__main__":
    main()
