"""A busy channel: N real headless peers, each sending r messages a second
for T seconds, then up to C seconds to converge. Each peer is a host of its
own on the test LAN (``tests/lan``: network namespaces on one bridge, root
needed), so no other chat on this machine can join the channel and skew the
figures; with ``--loopback`` they share this machine's loopback instead.

    python benchmarks/load.py --peers 5 --rate 10 --seconds 60 [--converge 180]

Prints one row: whether every peer's stored log is identical and complete,
latency p50/p99 from the line written to a peer's stdin to its delivery in
every other peer's database, CPU seconds and peak RSS per peer (and the CPU
spent from the first message on, per message each peer received), datagrams the
kernel dropped from full socket buffers, how long /quit took, lines the
peers wrote to stderr (there should be none), and the machine's load average
(1 minute) when sending started and when the peers quit: figures from a
shared machine mean little without it.
"""

from __future__ import annotations

import argparse
from collections import Counter
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.harness import HeadlessPeer  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402

TICKS = 100  # clock ticks a second (/proc/<pid>/stat)


def query(peer: HeadlessPeer, sql: str) -> list[tuple]:
    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


def rows(peer: HeadlessPeer) -> list[tuple[str, str, int]]:
    """(message_id, text, delivered_at_ms) in log order, from the peer's database."""
    return query(peer, "SELECT message_id, text, delivered_at FROM messages WHERE channel = 'general' "
                       "ORDER BY lamport, message_id")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def row_count(peer: HeadlessPeer) -> int:
    """How many messages the peer's database holds (an index count: polled every second)."""
    return query(peer, "SELECT count(*) FROM messages WHERE channel = 'general'")[0][0]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def udp_drops(peers: list[HeadlessPeer]) -> int:
    """Datagrams the kernel dropped on the peers' UDP ports (receive buffer full)."""
    drops = 0
    for peer in peers:
        for table in ("/proc/net/udp", "/proc/net/udp6"):
            text = peer.host.run("cat", table).stdout if peer.host else Path(table).read_text()
            for line in text.splitlines()[1:]:
                fields = line.split()
                if int(fields[1].split(":")[1], 16) == peer.port:
                    drops += int(fields[-1])
    return drops


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def stderr_lines(peer: HeadlessPeer) -> int:
    return sum(1 for line in peer.stderr_path.read_text().splitlines() if line.strip())


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def send_at_rate(peer: HeadlessPeer, rate: float, seconds: float, sent: dict[str, float]) -> None:
    period, start = 1 / rate, time.monotonic()
    for k in range(int(rate * seconds)):
        delay = start + k * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        text = f"{peer.nick} {k}"
        sent[text] = time.time() * 1000
        peer.send(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=int, default=5)
    parser.add_argument("--rate", type=float, default=10, help="messages a second, per peer")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--converge", type=float, default=180, help="seconds allowed after sending stops")
    parser.add_argument("--loopback", action="store_true", help="peers on this machine's loopback, not the test LAN")
    args = parser.parse_args()
    if args.loopback:
        run(args, lambda name: None)
    else:
        sweep()
        with Lan() as lan:
            run(args, lan.host)


def run(args, host_for) -> None:
    data = Path(tempfile.mkdtemp(prefix="sds-load-"))
    peers = [HeadlessPeer(data / f"p{i:02d}", f"p{i:02d}", host=host_for(f"p{i:02d}")) for i in range(args.peers)]
    _introduced(*peers)  # discovery is not what is measured
    sent: dict[str, float] = {}
    expected = int(args.rate * args.seconds) * args.peers
    load_at_start = load_average()
    cpu_at_start = [cpu_seconds(p.proc.pid) for p in peers]  # starting and meeting the others is not the load
    threads = [threading.Thread(target=send_at_rate, args=(p, args.rate, args.seconds, sent)) for p in peers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deadline = time.monotonic() + args.converge
    while time.monotonic() < deadline and min(row_count(p) for p in peers) < expected:
        time.sleep(1)
    converged_after = args.converge - max(0.0, deadline - time.monotonic())
    drops = udp_drops(peers)
    cpu = [cpu_seconds(p.proc.pid) for p in peers]
    rss = [peak_rss_mb(p.proc.pid) for p in peers]
    busy = sum(cpu) - sum(cpu_at_start)
    received = int(args.rate * args.seconds) * (args.peers - 1)  # by each peer: everyone else's messages
    load_at_end = load_average()
    quit_times = []

    def stop(peer: HeadlessPeer) -> None:  # all at once: a slow one does not delay the others' clocks
        start = time.monotonic()
        peer.stop()
        quit_times.append(time.monotonic() - start)

    stoppers = [threading.Thread(target=stop, args=(p,)) for p in peers]
    for t in stoppers:
        t.start()
    for t in stoppers:
        t.join()

    logs = [rows(p) for p in peers]
    for peer in peers:
        peer.drain()
    kinds = Counter(e["event"] for p in peers for e in p.events + p.previous_events
                    if e["event"] in ("rejected", "missing", "lost", "held", "error", "peer_left"))
    identical = all([r[0] for r in log] == [r[0] for r in logs[0]] for log in logs)
    latencies = [delivered - sent[text] for peer, log in zip(peers, logs, strict=True)
                 for _, text, delivered in log if text in sent and not text.startswith(peer.nick + " ")]
    # where the time went: in the author (stdin, held back) or on the way
    authored = {text: delivered for peer, log in zip(peers, logs, strict=True)
                for _, text, delivered in log if text.startswith(peer.nick + " ")}
    in_author = [authored[text] - sent[text] for text in authored if text in sent]
    on_the_way = [delivered - authored[text] for peer, log in zip(peers, logs, strict=True)
                  for _, text, delivered in log if text in authored and not text.startswith(peer.nick + " ")]
    counts = sorted(len(log) for log in logs)
    print(f"{args.peers} peers x {args.rate:g} msgs/s for {args.seconds:g} s: "
          f"{'identical' if identical else 'DIFFERENT'} logs, {counts[0]}-{counts[-1]} of {expected} rows "
          f"(converged {converged_after:.0f} s after sending stopped); "
          f"latency p50 {percentile(latencies, 50):.0f} ms / p99 {percentile(latencies, 99):.0f} ms "
          f"(in the author p99 {percentile(in_author, 99):.0f} ms, "
          f"on the way p99 {percentile(on_the_way, 99):.0f} ms); "
          f"CPU {sum(cpu) / len(cpu):.1f} s per peer ({busy / len(cpu):.1f} s from the first message on: "
          f"{busy / len(cpu) / received * 1e6:.0f} us per received message); "
          f"peak RSS {max(rss):.0f} MB; kernel drops {drops}; "
          f"slowest quit {max(quit_times):.1f} s; stderr lines {sum(stderr_lines(p) for p in peers)}; "
          f"load average {load_at_start:.1f} -> {load_at_end:.1f}; events {dict(kinds)}")


if __name__ == "__main__":
    main()
