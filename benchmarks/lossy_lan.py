"""Recovering lost messages on a lossy LAN: N real headless peers, each on a
host of its own on the test LAN (``tests/lan``, root needed), every host
dropping a share of the UDP datagrams it receives (nftables; replication
runs over TCP, which the rule leaves alone), each peer sending M messages at
r a second.

    python benchmarks/lossy_lan.py --loss 10 30 50 [--peers 5 --messages 40 --rate 2 --protocol sds]

One row per loss: whether every stored log is identical and complete, the
per-message convergence p50/p99/max (from the author storing a message to
the last peer storing it), how long after the last send every log was
complete, and the bytes the hosts sent (all of UDP and TCP, while the
messages went and were recovered) per message delivered to another peer,
with the UDP and the TCP part of them (datagrams; replication);
then, for each message a peer received late (over 300 ms after its
author), where the seconds went, from the peer's own headless events
stamped as they were read: when it was noticed as missing (a ``missing``
event: a later message's causal history, a sync message, or a resend named
it), when it was first asked for (``fetch``: of its author or of everyone)
and how many times, whether a replication with some peer was under way,
and when it was delivered. Loss is set once every peer has found every
other (discovery is not what is measured). The machine's load average (1
minute) is printed beside each row. Each peer's events are left beside its
data directory (``pN.events.jsonl``, under ``/tmp/sds-lossy-*``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import load_average, percentile, stderr_lines  # noqa: E402
from tests.e2e.harness import EXITED, HeadlessPeer  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402

LATE_MS = 300
"""A delivery this long after the author's is counted as a recovery."""


class StampedPeer(HeadlessPeer):
    """A headless peer whose events carry ``t``: when the line was read (ms)."""

    @staticmethod
    def _pump(proc, events, reading) -> None:
        for line in proc.stdout:
            reading.wait()
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"event": "garbage-output", "line": line}
            event["t"] = time.time() * 1000
            events.put(event)
        events.put({"event": EXITED})


def stored(peer: HeadlessPeer) -> dict[str, tuple[str, int]]:
    """message id -> (sender id, delivered_at ms), from the peer's database."""
    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return {mid: (sender, at) for mid, sender, at in conn.execute(
            "SELECT message_id, sender_id, delivered_at FROM messages WHERE channel = 'general'")}
    finally:
        conn.close()


def sent_bytes(peers: list[HeadlessPeer]) -> Counter:
    """Bytes the peers' hosts have sent on the LAN: ``all`` (every frame, as
    the interface counts it) and, of those, the IP bytes of ``udp`` and ``tcp``."""
    sent = Counter()
    for p in peers:
        sent["all"] += int(p.host.run("cat", "/sys/class/net/eth0/statistics/tx_bytes").stdout)
        sent.update(p.host.sent())
    return sent


def send_paced(peer: HeadlessPeer, messages: int, rate: float) -> None:
    start = time.monotonic()
    for k in range(messages):
        if (delay := start + k / rate - time.monotonic()) > 0:
            time.sleep(delay)
        peer.send(f"{peer.nick} {k}")


@dataclass(frozen=True)
class Measured:
    """One run on the test LAN: what every peer stored, and how fast."""

    loss: int
    peers: int
    protocol: str
    expected: int
    fewest: int
    most: int
    identical: bool
    convergence_ms: list[float]  # per message: from its author storing it to the last peer storing it
    complete_after_ms: float  # from the last send to the last delivery anywhere
    bytes_per_delivery: float
    udp_tcp_per_delivery: tuple[float, float]  # of those, the UDP and the TCP (IP bytes)
    stderr_lines: int
    load: tuple[float, float]
    breakdown: str


def measure(loss: int, peers: int, messages: int, rate: float, converge: float, protocol: str = "sds") -> Measured:
    """``peers`` real peers, each on a host of its own dropping ``loss``% of the
    UDP it receives, each sending ``messages`` at ``rate`` a second to one
    channel on ``protocol`` (sds or svs)."""
    sweep()
    channel = ("--channel", "general+svs") if protocol == "svs" else ()
    with Lan() as lan:
        data = Path(tempfile.mkdtemp(prefix="sds-lossy-"))
        running = [StampedPeer(data / f"p{i}", f"p{i}", *channel, host=lan.host(f"p{i}")) for i in range(peers)]
        _introduced(*running)
        for peer in running:
            peer.host.drop(loss)
            peer.host.count_sent()
        expected = messages * peers
        load_at_start = load_average()
        bytes_at_start = sent_bytes(running)
        senders = [threading.Thread(target=send_paced, args=(p, messages, rate)) for p in running]
        for t in senders:
            t.start()
        for t in senders:
            t.join()
        last_send = time.time() * 1000
        deadline = time.monotonic() + converge
        while time.monotonic() < deadline and min(len(stored(p)) for p in running) < expected:
            for p in running:
                p.drain(0.05)
        for p in running:
            p.drain(0.2)
        logs = [stored(p) for p in running]
        bytes_sent = sent_bytes(running) - bytes_at_start
        load_at_end = load_average()
        for p in running:
            p.stop()
            p.drain()
            with open(data / f"{p.nick}.events.jsonl", "w") as out:  # for a closer look afterwards
                out.writelines(json.dumps(e) + "\n" for e in p.previous_events + p.events)
    own = {p.peer_id: i for i, p in enumerate(running)}
    authored = {mid: at for i, log in enumerate(logs) for mid, (sender, at) in log.items() if own.get(sender) == i}
    complete = all(len(log) == expected for log in logs)
    deliveries = expected * (peers - 1)
    return Measured(
        loss=loss, peers=peers, protocol=protocol, expected=expected,
        fewest=min(map(len, logs)), most=max(map(len, logs)),
        identical=complete and all(log.keys() == logs[0].keys() for log in logs),
        convergence_ms=[max(log[mid][1] for log in logs if mid in log) - at for mid, at in authored.items()],
        complete_after_ms=max(at for log in logs for _, at in log.values()) - last_send,
        bytes_per_delivery=bytes_sent["all"] / deliveries,
        udp_tcp_per_delivery=(bytes_sent["udp"] / deliveries, bytes_sent["tcp"] / deliveries),
        stderr_lines=sum(stderr_lines(p) for p in running),
        load=(load_at_start, load_at_end),
        breakdown=breakdown(running, logs, authored))


def run(loss: int, args) -> str:
    m = measure(loss, args.peers, args.messages, args.rate, args.converge, args.protocol)
    return (f"{loss}% loss, {args.protocol}, {args.peers} peers x {args.messages} msgs at {args.rate:g}/s: "
            f"{'identical' if m.identical else 'NOT identical'}, {m.fewest}-{m.most} of {m.expected}; "
            f"convergence p50 {percentile(m.convergence_ms, 50) / 1000:.2f} s / p99 "
            f"{percentile(m.convergence_ms, 99) / 1000:.2f} s / max {max(m.convergence_ms) / 1000:.2f} s; "
            f"complete {m.complete_after_ms / 1000:.1f} s after the last send; "
            f"{m.bytes_per_delivery:,.0f} bytes sent per delivery (UDP {m.udp_tcp_per_delivery[0]:,.0f}, "
            f"TCP {m.udp_tcp_per_delivery[1]:,.0f}); stderr lines {m.stderr_lines}; "
            f"load {m.load[0]:.1f} -> {m.load[1]:.1f}\n{m.breakdown}")


def breakdown(peers: list[StampedPeer], logs, authored: dict[str, int]) -> str:
    """Where the seconds of each late delivery went, from each receiver's events."""
    noticed, asked, asks, delivered_after_notice, never_noticed, to_everyone = [], [], [], [], 0, 0
    replicating, late = 0, 0
    for peer, log in zip(peers, logs, strict=True):
        events = peer.previous_events + peer.events
        first_missing = {}
        fetches: dict[str, list[dict]] = {}
        sessions = []  # (start, end) of replications this peer took part in
        started: dict[tuple, float] = {}
        for e in events:
            if e["event"] == "missing":
                for mid in e["message_ids"]:
                    first_missing.setdefault(mid, e["t"])
            elif e["event"] == "fetch":
                for mid in e["message_ids"]:
                    fetches.setdefault(mid, []).append(e)
            elif e["event"] == "catchup_started":
                started[tuple(e["address"])] = e["t"]
            elif e["event"] == "catchup" and (begin := started.pop(tuple(e["address"]), None)) is not None:
                if e["received"]:
                    sessions.append((begin, e["t"]))
        for mid, at in authored.items():
            if mid not in log or log[mid][1] - at <= LATE_MS:
                continue
            late += 1
            done = log[mid][1]
            if mid not in first_missing:
                never_noticed += 1
            else:
                noticed.append(first_missing[mid] - at)
                delivered_after_notice.append(done - first_missing[mid])
            if mid in fetches:
                asked.append(fetches[mid][0]["t"] - at)
                asks.append(len(fetches[mid]))
                to_everyone += any(f["to"] is None for f in fetches[mid])
            replicating += any(begin <= done <= end + 50 for begin, end in sessions)

    def spread(values: list[float]) -> str:
        if not values:
            return "-"
        return (f"p50 {percentile(values, 50) / 1000:.2f} / p90 {percentile(values, 90) / 1000:.2f} / "
                f"max {max(values) / 1000:.2f} s")

    return (f"  {late} late deliveries (> {LATE_MS} ms after the author): noticed missing after {spread(noticed)} "
            f"({never_noticed} never reported missing); first fetch after {spread(asked)} "
            f"({len(asked)} fetched, {Counter(asks).most_common(4)} requests each, {to_everyone} of everyone); "
            f"delivered after notice {spread(delivered_after_notice)}; "
            f"{replicating} delivered while a replication that brought entries was under way")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loss", type=int, nargs="+", default=[10, 30, 50], help="percent of UDP dropped")
    parser.add_argument("--peers", type=int, default=5)
    parser.add_argument("--messages", type=int, default=40, help="per peer")
    parser.add_argument("--rate", type=float, default=2, help="messages a second, per peer")
    parser.add_argument("--converge", type=float, default=90, help="seconds allowed after sending stops")
    parser.add_argument("--protocol", choices=("sds", "svs"), default="sds", help="what the channel runs on")
    args = parser.parse_args()
    for loss in args.loss:
        print(run(loss, args), flush=True)


if __name__ == "__main__":
    main()
