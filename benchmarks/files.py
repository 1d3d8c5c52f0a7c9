"""A file to three peers on the test LAN: throughput and memory.

    python benchmarks/files.py [--size-mb 200 --receivers 3]

Four real headless peers, each on a host of its own on the test LAN
(``tests/lan``, root needed). The first offers a file of random bytes
(``/send``), the others accept it at once, so all fetch from it at the same
time. Printed: how long hashing the offer took, each receiver's time from
``/accept`` to ``file_received`` and its MB/s (1 MB = 10^6 bytes), and each
process's peak resident memory (VmHWM; and before the file, for comparison), with the load
average (1 minute). ``--under /dev/shm`` puts the data directories (and so
the downloads) in memory: all the receivers here share one disk, whose
bandwidth is then not what is measured.

``--kill-sender-halfway``: a fifth peer, the seed, fetches the file first;
then the receivers accept it, and the sender is killed (SIGKILL) once the
first receiver has half of it: each receiver must leave the sender for the
seed and finish from it. Printed as well: when the sender was killed, and
each receiver's ``file_source_left`` reason.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import load_average  # noqa: E402
from tests.e2e.harness import HeadlessPeer  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402


def peak_rss_mb(peer: HeadlessPeer) -> float:
    for line in Path(f"/proc/{peer.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def random_file(path: Path, megabytes: int) -> int:
    """Write ``megabytes`` MB of random bytes to ``path``, a MB at a time; its size."""
    with open(path, "wb") as f:
        for _ in range(megabytes):
            f.write(os.urandom(1_000_000))
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--receivers", type=int, default=3)
    parser.add_argument("--under", default=None,
                        help="where the peers' data directories go (default: the system's temporary directory); "
                             "/dev/shm keeps the disk out of the figures: the peers of a real LAN each write to a "
                             "disk of their own, here they share one")
    parser.add_argument("--kill-sender-halfway", action="store_true",
                        help="a seed fetches the file first; the sender is killed when a receiver has half of it")
    args = parser.parse_args()
    sweep()
    with tempfile.TemporaryDirectory(prefix="sds-files-", dir=args.under) as tmp, Lan() as lan:
        data = Path(tmp)
        source = data / "big.bin"
        size = random_file(source, args.size_mb)
        seed = ["seed"] if args.kill_sender_halfway else []
        names = ["sender", *seed, *(f"r{i}" for i in range(args.receivers))]
        peers = [HeadlessPeer(data / n, n, host=lan.host(n)) for n in names]
        try:
            _introduced(*peers)
            sender, receivers = peers[0], peers[1 + len(seed):]
            before = {p.nick: peak_rss_mb(p) for p in peers}  # a running peer, before any file
            start = time.monotonic()
            sender.send(f"/send {source}")
            sender.wait_for(lambda e: e["event"] == "file_offer", 300)
            hashed = time.monotonic() - start
            if seed:
                seeded = time.monotonic()
                peers[1].send(f"/accept {peers[1].wait_for(lambda e: e['event'] == 'file_offer', 60)['number']}")
                peers[1].wait_for(lambda e: e["event"] == "file_received", 600)
                print(f"  the seed fetched it in {time.monotonic() - seeded:.1f} s")
            accepted = {}
            for peer in receivers:
                offer = peer.wait_for(lambda e: e["event"] == "file_offer", 60)
                peer.send(f"/accept {offer['number']}")
                accepted[peer.nick] = time.monotonic()
            print(f"{size / 1e6:.0f} MB from {sender.nick} to {len(receivers)} peers at once "
                  f"(load average {load_average():.2f})")
            print(f"  offer hashed in {hashed:.1f} s ({size / 1e6 / hashed:.0f} MB/s)")
            if seed:
                receivers[0].wait_for(lambda e: e["event"] == "file_progress" and e["done"] >= size // 2, 600)
                sender.kill9()
                print(f"  sender killed {time.monotonic() - min(accepted.values()):.1f} s after the first /accept, "
                      f"a receiver at half the file")
            for peer in receivers:
                got = peer.wait_for(lambda e: e["event"] == "file_received", 1200)
                took = time.monotonic() - accepted[peer.nick]
                assert Path(got["path"]).stat().st_size == size
                print(f"  {peer.nick}: {took:.1f} s, {size / 1e6 / took:.1f} MB/s, peak RSS {peak_rss_mb(peer):.0f} MB "
                      f"({before[peer.nick]:.0f} MB before) (load average {load_average():.2f})")
                for left in (e for e in peer.events if e["event"] == "file_source_left"):
                    print(f"    left {left['address']}: {left['reason']}")
            if not seed:
                print(f"  {sender.nick} (hashing, then serving): peak RSS {peak_rss_mb(sender):.0f} MB "
                      f"({before[sender.nick]:.0f} MB before)")
        finally:
            for peer in peers:
                peer.stop()


if __name__ == "__main__":
    main()
