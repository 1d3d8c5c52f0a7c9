"""Throughput of the whole ``sds-chat verify`` job, local mode, every check on.

    python benchmarks/verify.py [--rows 1000000 10000000] [--peers 10]

Writes clean synthetic exports (every peer holds the same messages in the
same order, each naming its three predecessors) with pyarrow - not timed -
then times ``sds-chat verify`` as a separate process, JVM start included.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.export import SCHEMA  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def write_exports(out: Path, rows: int, peers: int) -> None:
    n = rows // peers
    ids = [f"{i:032x}" for i in range(n)]
    lamports = pa.array(range(1_700_000_000_000, 1_700_000_000_000 + n), pa.int64())
    history = pa.array([ids[max(0, i - 3):i] for i in range(n)], pa.list_(pa.string()))
    columns = {
        "channel_id": pa.array(["general"] * n), "pos": pa.array(range(n), pa.int64()),
        "message_id": pa.array(ids), "sender_id": pa.array([f"peer{i % peers:03d}" for i in range(n)]),
        "lamport_timestamp": lamports, "causal_history": history,
        "content": pa.array([f"message {i}" for i in range(n)]),
        "received_at_ms": lamports, "delivered_at_ms": lamports,
    }
    for p in range(peers):
        table = pa.table({"peer_id": pa.array([f"peer{p:03d}"] * n), **columns}, schema=SCHEMA)
        pq.write_table(table, out / f"peer{p:03d}.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--peers", type=int, default=10)
    args = parser.parse_args()
    results = []
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            write_exports(Path(tmp), rows, args.peers)
            start = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "chat_app.cli", "verify", tmp], cwd=ROOT,
                                 capture_output=True, text=True)
            seconds = time.perf_counter() - start
        if run.returncode != 0:
            raise SystemExit(f"verify failed ({run.returncode}): {run.stderr[-500:]}")
        results.append((rows, seconds))
        print(f"{rows:>12,} rows  {seconds:7.1f} s  {rows / seconds:>10,.0f} rows/s  "
              f"{1e6 * seconds / rows:.2f} µs/row", flush=True)
    if len(results) > 1:
        (r0, s0), (r1, s1) = results[0], results[-1]
        print(f"per-row cost at {r1:,} is {(s1 / r1) / (s0 / r0):.2f}x that at {r0:,}")


if __name__ == "__main__":
    main()
