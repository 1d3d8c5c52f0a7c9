"""``sds-chat simulate``: a simulated conversation written as one export per
peer - realistic input for ``sds-chat verify``, at any size."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chat_app.export import SCHEMA
from proto.sds_pb2 import SdsMessage
from sync.sim import Link, Scenario, Simulator


def simulate_exports(peers: int, messages: int, loss: float, seed: int, out: Path) -> tuple[Path, ...]:
    sim = Simulator(Scenario(peers=peers, messages=messages, send_window_ms=max(60_000, messages * 100),
                             link=Link(loss=loss), seed=seed, max_time_ms=max(30 * 60_000, messages * 1_000)))
    report = sim.run()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for peer in sim.peers:
        rows = []
        for pos, mid in enumerate(peer.channel.log):
            msg = SdsMessage.FromString(peer.store[mid])
            at = sim.delivered_at.get(mid, {}).get(peer.index, msg.lamport_timestamp)
            rows.append({
                "peer_id": peer.id, "channel_id": sim.channel_id, "pos": pos, "message_id": mid,
                "sender_id": msg.sender_id, "lamport_timestamp": msg.lamport_timestamp,
                "causal_history": [e.message_id for e in msg.causal_history],
                "content": msg.content.decode(errors="replace"), "received_at_ms": at, "delivered_at_ms": at,
            })
        path = out / f"{peer.id}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, SCHEMA), path)
        written.append(path)
    print(report.summary())
    return tuple(written)
