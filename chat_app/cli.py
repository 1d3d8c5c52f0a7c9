"""The ``sds-chat`` command.

The terminal client and the networked peer are not built yet; until they are,
``sds-chat`` (and ``sds-chat demo``) runs a conversation between simulated
peers over a lossy network with the real SDS engine, and shows that every
peer ends with the same log.
"""

from __future__ import annotations

import argparse
import sys

from proto.sds_pb2 import SdsMessage
from sync.sim import Link, Scenario, Simulator


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a probability in [0, 1)")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sds-chat",
        description="Serverless group chat for the terminal (engine preview: the client is not built yet).",
    )
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="simulate a lossy group conversation with the real SDS engine")
    for p in (parser, demo):
        p.add_argument("--peers", type=_positive, default=5, help="simulated participants (default 5)")
        p.add_argument("--messages", type=_positive, default=12, help="messages to exchange (default 12)")
        p.add_argument("--loss", type=_probability, default=0.3, help="datagram loss rate, 0 to <1 (default 0.3)")
        p.add_argument("--seed", type=int, default=1, help="random seed: the same seed replays the same run")
    return parser


def run_demo(peers: int, messages: int, loss: float, seed: int) -> int:
    print(f"sds-chat: the terminal client is not built yet - here is the SDS engine at work instead.\n"
          f"{peers} simulated peers exchange {messages} messages over links that drop {loss:.0%} of datagrams.\n")
    sim = Simulator(Scenario(peers=peers, messages=messages, send_window_ms=30_000, link=Link(loss=loss), seed=seed))
    report = sim.run()
    first = sim.peers[0]
    print(f"{first.id}'s log:")
    for position, mid in enumerate(first.channel.log):
        msg = SdsMessage.FromString(first.store[mid])
        print(f"  {position:>3}  lamport {msg.lamport_timestamp}  {msg.content.decode(errors='replace')}")
    print()
    print(report.summary())
    converged = report.identical_logs and report.converged
    print("Every peer holds this same log, in the same order." if converged
          else "The peers did NOT converge within the time limit.")
    return 0 if converged else 1


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_demo(args.peers, args.messages, args.loss, args.seed)


if __name__ == "__main__":
    sys.exit(main())
