"""What a simulation measures, from what the peers' runtimes report: when
each message was sent and delivered where, what was given up as lost, and
the bytes on the wire."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.sim.scenario import Report, percentile


class Measurements:
    def __init__(self, peers: int) -> None:
        self.peers = peers
        self.sent_at: dict[str, int] = {}  # message id -> when its author delivered it to itself
        self.delivered_at: dict[str, dict[int, int]] = {}  # message id -> peer index -> when
        self.complete = 0  # messages every peer holds
        self.lost = 0
        self.datagrams = 0
        self.bytes = 0
        self.largest = 0  # the largest datagram sent

    def observe(self, index: int, event: ev.AppEvent, now: int) -> None:
        if isinstance(event, ev.MessageDelivered):
            if event.own:
                self.sent_at[event.message_id] = now
            seen = self.delivered_at.setdefault(event.message_id, {})
            if index not in seen:
                seen[index] = now
                if len(seen) == self.peers:
                    self.complete += 1
        elif isinstance(event, ev.MessageLost):
            self.lost += 1

    def report(self, wanted: int, logs: list[list[str]], elapsed_ms: int, replication_bytes: int) -> Report:
        n, m = self.peers, len(self.sent_at)
        deliveries = sum(len(v) for v in self.delivered_at.values())
        latencies: list[float] = []
        convergence: list[float] = []
        for mid, sent in self.sent_at.items():
            seen = self.delivered_at[mid]
            latencies.extend(t - sent for t in seen.values() if t != sent)
            if len(seen) == n:
                convergence.append(max(seen.values()) - sent)
        remote = deliveries - m
        total = self.bytes + replication_bytes
        return Report(
            peers=n,
            messages=m,
            delivery_ratio=deliveries / (n * m) if m else 1.0,
            converged=m == wanted and self.complete == m,
            identical_logs=all(log == logs[0] for log in logs),
            convergence_p50_ms=percentile(convergence, 0.5),
            convergence_p99_ms=percentile(convergence, 0.99),
            latency_p50_ms=percentile(latencies, 0.5),
            latency_p99_ms=percentile(latencies, 0.99),
            datagrams_sent=self.datagrams,
            bytes_sent=total,
            bytes_per_delivery=total / remote if remote else 0.0,
            elapsed_ms=elapsed_ms,
            lost=self.lost,
            replication_bytes=replication_bytes,
            largest_datagram=self.largest,
            logs=logs,
        )
