"""``sds-chat simulate``: a simulated conversation written as one export per
peer - realistic input for ``sds-chat verify``, at any size. Each peer is the
real runtime over its own store (``chat_app.sim``), and each export is
written by ``sds-chat export``'s own code from that store."""

from __future__ import annotations

from pathlib import Path

from chat_app.export import export
from chat_app.sim import Link, Scenario, Simulator


def simulate_exports(peers: int, messages: int, loss: float, seed: int, out: Path) -> tuple[Path, ...]:
    sim = Simulator(Scenario(peers=peers, messages=messages, send_window_ms=max(60_000, messages * 100),
                             link=Link(loss=loss), seed=seed, max_time_ms=max(30 * 60_000, messages * 1_000)))
    report = sim.run()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for peer in sim.peers:
        path = out / f"{peer.id}.parquet"
        export(peer.store, peer.id, path, "parquet", [sim.channel_id])
        written.append(path)
    print(report.summary())
    return tuple(written)
