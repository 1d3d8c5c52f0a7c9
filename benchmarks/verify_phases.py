"""Where ``sds-chat verify``'s time goes, phase by phase, in one process.

    python benchmarks/verify_phases.py [--rows 3000] [--peers 3] [--cores 2] 2>/dev/null

Writes the same synthetic exports as benchmarks/verify.py, then times
starting Spark (with verify's own settings for that input size), planning
the read, and the checks - cold, then again in the warm JVM - and counts the
Spark jobs and stages the cold checks ran. A bare read and count in the warm
JVM is timed last, for scale.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify import load, write_exports  # noqa: E402

from chat_app.verify import job  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=3_000)
    parser.add_argument("--peers", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2, help="local[N]")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    print(f"load average at start {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        files = [str(f) for f in write_exports(Path(tmp), args.rows, args.peers)]
        inputs = job.find_inputs(files)
        tiny = inputs.bytes < job.TINY

        start = time.perf_counter()
        spark = job.spark_session(f"local[{args.cores}]", inputs)
        started = time.perf_counter()
        rows = job.read(spark, inputs)
        read = time.perf_counter()
        report = job.check(spark, rows, tiny=tiny)
        checked = time.perf_counter()
        tracker = spark.sparkContext.statusTracker()
        jobs = tracker.getJobIdsForGroup(None)
        stages = sum(len(tracker.getJobInfo(j).stageIds) for j in jobs)
        job.check(spark, rows, tiny=tiny)
        warm = time.perf_counter()
        spark.read.parquet(*files).count()
        counted = time.perf_counter()
        spark.stop()
    print(f"{args.rows:,} rows over {args.peers} peers ({'tiny' if tiny else 'not tiny'} input), "
          f"verdict {report['verdict']}, load {load()}")
    print(f"  start Spark   {started - start:6.1f} s")
    print(f"  plan the read {read - started:6.1f} s")
    print(f"  the checks    {checked - read:6.1f} s cold ({len(jobs)} jobs, {stages} stages), "
          f"{warm - checked:.1f} s warm")
    print(f"  bare count    {counted - warm:6.1f} s warm")


if __name__ == "__main__":
    main()
