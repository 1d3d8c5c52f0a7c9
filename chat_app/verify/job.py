"""``sds-chat verify``: do these exports agree on what was said, and in what order?

    sds-chat verify PATH... [--report FILE.json] [--master URL]
    spark-submit chat_app/verify/job.py PATH... [--report FILE.json]

Reads any number of exports (files or directories; Parquet or JSON Lines,
mixed), runs every check in ``checks`` and prints a verdict, a per-peer
summary and, per anomaly kind, the count and up to 32 examples with a
one-line explanation each. Exit status: 0 consistent, 1 anomalies found,
2 unreadable input (with a one-line reason).

``main`` only wires read -> check -> report. Nothing that grows with the
input is collected: counts, per-peer totals and at most 32 examples per kind.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES = 32
PARQUET = (".parquet", ".pq")
JSONL = (".jsonl", ".json", ".ndjson")


class InputError(Exception):
    """An input cannot be read; the message says why, in one line."""


@dataclass
class Inputs:
    parquet: list[str] = field(default_factory=list)
    jsonl: list[str] = field(default_factory=list)
    bytes: int = 0


def find_inputs(paths: list[str]) -> Inputs:
    """Expand directories, sort files by format, and check each one's shape
    cheaply (a Parquet footer, the first JSON line) before Spark starts."""
    import pyarrow.parquet as pq

    from chat_app.verify.schema import REQUIRED

    found = Inputs()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError(f"{raw}: no such file or directory")
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in PARQUET + JSONL) \
            if path.is_dir() else [path]
        if not files:
            raise InputError(f"{raw}: no .parquet or .jsonl exports in this directory")
        for f in files:
            found.bytes += f.stat().st_size
            if f.suffix in PARQUET:
                try:
                    names = set(pq.read_schema(f).names)
                except Exception as exc:
                    raise InputError(f"{f}: not a readable Parquet file ({exc.__class__.__name__})") from None
                found.parquet.append(str(f))
            elif f.suffix in JSONL:
                names = _first_json_keys(f)
                found.jsonl.append(str(f))
            else:
                raise InputError(f"{f}: not an export (expected .parquet or .jsonl)")
            missing = [c for c in REQUIRED if names is not None and c not in names]
            if missing:
                raise InputError(f"{f}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    return found


def _first_json_keys(path: Path) -> set[str] | None:
    with path.open("rb") as f:
        line = f.readline()
    if not line.strip():
        return None  # an empty export is fine
    try:
        first = json.loads(line)
    except ValueError:
        raise InputError(f"{path}: line 1 is not JSON") from None
    if not isinstance(first, dict):
        raise InputError(f"{path}: line 1 is not a JSON object")
    return set(first)


def progress(message: str) -> None:
    print(f"verify: {message}", file=sys.stderr, flush=True)


def spark_session(master: str | None, inputs: Inputs):
    from pyspark.sql import SparkSession

    # ~64 MB of input per shuffle partition, at least 4, at most 400
    partitions = max(4, min(400, inputs.bytes // (64 << 20) + 1))
    builder = (SparkSession.builder.appName("sds-chat verify")
               .config("spark.sql.shuffle.partitions", str(partitions))
               .config("spark.sql.adaptive.enabled", "true")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "true")
               .config("spark.driver.memory", "6g"))
    if master:
        builder = builder.master(master)
    elif not _in_spark_submit():
        # local mode: the driver listens on loopback only
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.master("local[*]").config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _in_spark_submit() -> bool:
    return "SPARK_ENV_LOADED" in os.environ or "spark.master" in os.environ.get("SPARK_CONF", "")


def read(spark, inputs: Inputs):
    """Every export as one DataFrame with the explicit export schema."""
    from chat_app.verify.schema import EXPORT

    frames = []
    if inputs.parquet:
        frames.append(spark.read.schema(EXPORT).parquet(*inputs.parquet))
    if inputs.jsonl:
        frames.append(spark.read.schema(EXPORT).option("mode", "FAILFAST").json(inputs.jsonl))
    rows = frames[0]
    for frame in frames[1:]:
        rows = rows.unionByName(frame)
    return rows


def check(spark, rows) -> dict:
    """Run every check; return the report (small: counts and examples)."""
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from chat_app.verify.checks import all_checks
    from chat_app.verify.schema import REQUIRED

    progress("reading exports and counting rows")
    invalid_row = F.expr(" OR ".join(f"{c} IS NULL" for c in REQUIRED))
    totals = rows.agg(F.count("*").alias("rows"), F.countDistinct("channel_id").alias("channels"),
                      F.count(F.when(invalid_row, 1)).alias("invalid")).first()
    invalid = totals["invalid"]
    if invalid:
        raise InputError(f"{invalid} row{'s' if invalid > 1 else ''} lack required fields ({', '.join(REQUIRED)})")

    checks = all_checks(rows, persist=lambda df: df.persist(StorageLevel.MEMORY_AND_DISK))
    progress(f"running {len(checks)} checks over {totals['rows']:,} rows: " + ", ".join(n for n, _ in checks))
    found = checks[0][1]
    for _, df in checks[1:]:
        found = found.unionByName(df)
    found = found.persist(StorageLevel.MEMORY_AND_DISK)
    counts = {r["kind"]: r["count"] for r in found.groupBy("kind").count().collect()}

    progress("collecting examples and per-peer totals")
    examples: dict[str, list[dict]] = {}
    if counts:
        w = Window.partitionBy("kind").orderBy("channel_id", "peer_id", "message_id", "other_message_id")
        for r in found.withColumn("n", F.row_number().over(w)).where(F.col("n") <= EXAMPLES).drop("n").collect():
            examples.setdefault(r["kind"], []).append({k: r[k] for k in r.asDict() if k != "kind"})
    per_peer = {r["peer_id"]: {"rows": r["rows"], "channels": r["channels"], "anomalies": 0}
                for r in rows.groupBy("peer_id").agg(F.count("*").alias("rows"),
                                                     F.countDistinct("channel_id").alias("channels")).collect()}
    for r in found.where(F.col("peer_id").isNotNull()).groupBy("peer_id").count().collect():
        if r["peer_id"] in per_peer:
            per_peer[r["peer_id"]]["anomalies"] = r["count"]
    return {
        "verdict": "consistent" if not counts else "inconsistent",
        "rows": totals["rows"],
        "channels": totals["channels"],
        "peers": [{"peer_id": p, **v} for p, v in sorted(per_peer.items())],
        "anomalies": {kind: {"count": counts[kind], "examples": sorted(
            examples.get(kind, []), key=lambda e: tuple(str(e[k]) for k in ("channel_id", "peer_id", "message_id")))}
            for kind in sorted(counts)},
    }


def render(report: dict) -> str:
    lines = [f"verdict: {report['verdict'].upper()} - {report['rows']:,} rows, {len(report['peers'])} peers, "
             f"{report['channels']} channel(s)", "", "peer                              rows   channels  anomalies"]
    for p in report["peers"]:
        lines.append(f"{p['peer_id'][:32]:<32} {p['rows']:>7,} {p['channels']:>10} {p['anomalies']:>10,}")
    if report["anomalies"]:
        lines.append("")
        for kind, found in report["anomalies"].items():
            lines.append(f"{kind}: {found['count']:,}")
            for example in found["examples"][:5]:
                lines.append(f"  - {example['explanation']}")
            if found["count"] > 5:
                note = " (32 in the report)" if found["count"] > EXAMPLES else ""
                lines.append(f"  … {found['count'] - 5:,} more{note}")
    else:
        lines += ["", "no anomalies: every peer holds the same messages in the same order"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sds-chat verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="export files or directories (Parquet or JSONL)")
    parser.add_argument("--report", type=Path, help="also write the report as JSON to this file")
    parser.add_argument("--master", help="Spark master URL (default: local[*], or spark-submit's)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        inputs = find_inputs(args.paths)
        progress(f"{len(inputs.parquet) + len(inputs.jsonl)} export file(s), {inputs.bytes / 1e6:,.1f} MB")
        spark = spark_session(args.master, inputs)
        report = check(spark, read(spark, inputs))
    except InputError as exc:
        print(f"sds-chat verify: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # Spark's own errors: FAILFAST on a malformed record, no Java, ...
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        if "Malformed" in str(exc):
            reason = "a record in the JSON input is malformed"
        print(f"sds-chat verify: cannot read the input: {reason[:300]}", file=sys.stderr)
        return 2
    report["seconds"] = round(time.monotonic() - started, 2)
    report["inputs"] = args.paths
    print(render(report))
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(report, indent=2))
        progress(f"report written to {args.report}")
    return 0 if report["verdict"] == "consistent" else 1


if __name__ == "__main__":
    sys.exit(main())
