"""Discovery and first delivery across hosts of the test LAN (needs root).

Three real peers, each on its own host (network namespace), default options.
Prints, per run: how long each peer took to be ready (from starting its
process to its ``ready`` line, an empty data directory), how long after the
last peer is ready everyone has seen everyone over mDNS, and how long a first
message takes to be delivered on the two other hosts.

    python benchmarks/lan_discovery.py [runs]
"""

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.harness import HeadlessPeer  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402
from tests.lan import Lan, check  # noqa: E402


def run_once() -> tuple[list[float], float, float]:
    data = Path(tempfile.mkdtemp())
    with Lan() as lan:
        peers, starts = [], []
        for nick in ("alice", "bob", "carol"):
            host = lan.host(nick)
            began = time.monotonic()
            peers.append(HeadlessPeer(data / nick, nick, host=host))  # returns at its ready line
            starts.append(time.monotonic() - began)
        try:
            ready = time.monotonic()
            _introduced(*peers)
            seen = time.monotonic()
            peers[0].send("ping")
            for peer in peers[1:]:
                peer.wait_delivered(1)
            return starts, seen - ready, time.monotonic() - seen
        finally:
            for peer in peers:
                peer.stop()


def main() -> None:
    check()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for i in range(runs):
        starts, discovered, delivered = run_once()
        ready = ", ".join(f"{s:.2f}" for s in starts)
        print(f"run {i}: ready in {ready} s; all see all {discovered * 1000:.0f} ms after the last is ready; "
              f"first message on both other hosts {delivered * 1000:.0f} ms later")


if __name__ == "__main__":
    main()
