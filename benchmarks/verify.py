"""How long ``sds-chat verify`` takes, local mode, every check on.

    python benchmarks/verify.py [--small-runs 3] [--rows 1000000 10000000] [--peers 10] [--cores 2]

Two figures:

* **small**: three exports of 1,000 rows each (an afternoon's chat). Times
  ``sds-chat verify`` against a bare Spark session that starts, reads the same
  files and counts them, both as separate processes (JVM start included),
  alternating, and prints the median of each and their ratio: the ratio is
  what ``verify`` adds on top of Spark itself.
* **large**: clean exports of ``--rows`` rows over ``--peers`` peers, timed
  the same way.

``verify`` starts its JVM from the archive of classes an earlier run
loaded; if there is none yet, one untimed run writes it first. The bare
session starts without one, as any Spark session does.

Exports are synthetic (every peer holds the same messages in the same order,
each naming its three predecessors, with receive and delivery times a few
milliseconds after the send) and written with pyarrow - not timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
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

# What a user would otherwise wait for anyway: start Spark, read, count.
BARE = """
import os, sys
from pyspark.sql import SparkSession
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
spark = (SparkSession.builder.master(sys.argv[1]).appName("bare")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print(spark.read.parquet(*sys.argv[2:]).count())
spark.stop()
"""


def write_exports(out: Path, rows: int, peers: int) -> list[Path]:
    n = rows // peers
    ids = [f"{i:032x}" for i in range(n)]
    sent = list(range(1_700_000_000_000, 1_700_000_000_000 + 10 * n, 10))
    history = pa.array([ids[max(0, i - 3):i] for i in range(n)], pa.list_(pa.string()))
    columns = {
        "channel_id": pa.array(["general"] * n), "pos": pa.array(range(n), pa.int64()),
        "message_id": pa.array(ids), "sender_id": pa.array([f"peer{i % peers:03d}" for i in range(n)]),
        "lamport_timestamp": pa.array(sent, pa.int64()), "causal_history": history,
        "content": pa.array([f"message {i}" for i in range(n)]),
        "seq": pa.array([i // peers + 1 for i in range(n)], pa.int64()),  # each author counts from 1
    }
    files = []
    for p in range(peers):
        received = [t + (i * 7 + p * 13) % 40 for i, t in enumerate(sent)]
        delivered = [t + (i * 11 + p) % 9 for i, t in enumerate(received)]
        table = pa.table({"peer_id": pa.array([f"peer{p:03d}"] * n), **columns,
                          "received_at_ms": pa.array(received, pa.int64()),
                          "delivered_at_ms": pa.array(delivered, pa.int64())}, schema=SCHEMA)
        files.append(out / f"peer{p:03d}.parquet")
        pq.write_table(table, files[-1])
    return files


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}  # keep Spark on loopback
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{command[:4]} failed ({run.returncode}): {run.stderr[-800:]}")
    return seconds


def load() -> str:
    """The 1-minute load average: on a shared machine it sets the figures."""
    return f"{os.getloadavg()[0]:.1f}"


def class_archive(master: str, files: list[str]) -> None:
    """Make sure verify's class archive exists, as for anyone who has run
    verify before (the run that writes it is not timed; see
    ``chat_app/verify/classes.py``)."""
    from chat_app.verify import classes

    for _ in range(12):  # another run may be writing one
        if classes.options():
            break
        time.sleep(5)
    if classes.options().startswith("-XX:ArchiveClassesAtExit="):
        print("writing the class archive (untimed)", flush=True)
        timed([sys.executable, "-m", "chat_app.cli", "verify", "--master", master, *files])
        time.sleep(classes.SETTLED_S + 1)
        classes.options()  # adopts it


def small(runs: int, master: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = [str(f) for f in write_exports(Path(tmp), 3_000, 3)]
        class_archive(master, files)
        bare, ours = [], []
        for _ in range(runs):
            bare.append(timed([sys.executable, "-c", BARE, master, *files]))
            ours.append(timed([sys.executable, "-m", "chat_app.cli", "verify", "--master", master, *files]))
            print(f"  run {len(ours)}: bare {bare[-1]:.1f} s, verify {ours[-1]:.1f} s, "
                  f"ratio {ours[-1] / bare[-1]:.2f}, load {load()}", flush=True)
    b, v = statistics.median(bare), statistics.median(ours)
    pairs = statistics.median(o / b for o, b in zip(ours, bare, strict=True))
    print(f"3 exports x 1,000 rows, {master}, median of {runs}: bare Spark read+count {b:.1f} s, "
          f"sds-chat verify {v:.1f} s, ratio {v / b:.2f} (median of the runs' ratios {pairs:.2f})", flush=True)


def large(sizes: list[int], peers: int, master: str) -> None:
    results = []
    for rows in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            write_exports(Path(tmp), rows, peers)
            seconds = timed([sys.executable, "-m", "chat_app.cli", "verify", "--master", master, tmp])
        results.append((rows, seconds))
        print(f"{rows:>12,} rows  {seconds:7.1f} s  {rows / seconds:>10,.0f} rows/s  "
              f"{1e6 * seconds / rows:.2f} µs/row  load {load()}", flush=True)
    if len(results) > 1:
        (r0, s0), (r1, s1) = results[0], results[-1]
        print(f"per-row cost at {r1:,} is {(s1 / r1) / (s0 / r0):.2f}x that at {r0:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small-runs", type=int, default=3, help="0 skips the small comparison")
    parser.add_argument("--rows", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--peers", type=int, default=10)
    parser.add_argument("--cores", type=int, default=2, help="local[N]")
    args = parser.parse_args()
    master = f"local[{args.cores}]"
    print(f"load average at start {load()}", flush=True)
    if args.small_runs:
        small(args.small_runs, master)
    if args.rows:
        large(args.rows, args.peers, master)


if __name__ == "__main__":
    main()
