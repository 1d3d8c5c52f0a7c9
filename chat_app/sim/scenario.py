"""What a simulation runs (``Scenario``: the network and what happens on
it) and what it measures (``Report``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.sds import Config

SECOND = 1_000
MINUTE = 60 * SECOND
EPOCH_MS = 1_700_000_000_000


@dataclass(frozen=True)
class Link:
    """Every directed link between two peers behaves like this."""

    loss: float = 0.0
    latency_ms: int = 20
    jitter_ms: int = 30
    duplicate: float = 0.0

    def __post_init__(self) -> None:
        if not (0 <= self.loss < 1 and 0 <= self.duplicate < 1):
            raise ValueError("loss and duplicate are probabilities in [0, 1)")


@dataclass(frozen=True)
class Partition:
    """From ``start_ms`` to ``end_ms`` only peers in the same group talk."""

    start_ms: int
    end_ms: int
    groups: tuple[frozenset[int], ...]


@dataclass(frozen=True)
class Outage:
    """Peer ``peer`` is offline from ``start_ms`` to ``end_ms``. With
    ``restart`` its process dies then, and a new one starts over the same
    database at ``end_ms``; without, it only loses the network (its process,
    and its timers, keep running)."""

    peer: int
    start_ms: int
    end_ms: int
    restart: bool = True


@dataclass(frozen=True)
class Scenario:
    peers: int = 10
    messages: int = 100
    send_window_ms: int = 60 * SECOND
    link: Link = Link()
    partitions: tuple[Partition, ...] = ()
    outages: tuple[Outage, ...] = ()
    fetch: bool = True
    """The runtime's own repair: fetch requests for missing messages and
    catch-up by replication. False carries neither (fetch frames are dropped,
    replication dials fail), leaving repair to SDS alone: resends, sync
    messages and SDS-R."""
    config: Config = field(default_factory=Config)
    protocol: str = "sds"
    """What the channel runs on: "sds", or "svs" (State Vector Sync; ``config`` is then unused)."""
    max_time_ms: int = 30 * MINUTE
    seed: int = 0


@dataclass
class Report:
    peers: int
    messages: int
    delivery_ratio: float
    converged: bool
    identical_logs: bool
    convergence_p50_ms: float | None
    convergence_p99_ms: float | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    datagrams_sent: int
    bytes_sent: int  # every datagram to every address, and every replication frame
    bytes_per_delivery: float
    elapsed_ms: int
    lost: int
    replication_bytes: int = 0  # of ``bytes_sent``, what replication streams carried
    largest_datagram: int = 0
    logs: list[list[str]] = field(repr=False, default_factory=list)  # each peer's stored log, in order

    def summary(self) -> str:
        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v / 1000:.2f}s"

        return (
            f"{self.peers} peers, {self.messages} messages: delivery {self.delivery_ratio:.1%}, "
            f"{'converged' if self.converged else 'NOT converged'}, "
            f"logs {'identical' if self.identical_logs else 'DIFFER'}; "
            f"convergence p50 {ms(self.convergence_p50_ms)} p99 {ms(self.convergence_p99_ms)}; "
            f"latency p50 {ms(self.latency_p50_ms)} p99 {ms(self.latency_p99_ms)}; "
            f"{self.bytes_per_delivery:.0f} bytes sent per delivery; lost {self.lost}"
        )


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
