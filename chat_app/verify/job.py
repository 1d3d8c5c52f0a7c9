"""``sds-chat verify``: do these exports agree on what was said, and in what order?

    sds-chat verify PATH... [--report FILE.json] [--html FILE.html] [--master URL]
    spark-submit chat_app/verify/job.py PATH... [--report FILE.json] [--html FILE.html]

Reads any number of exports (files or directories; Parquet or JSON Lines,
mixed), runs every check in ``checks`` and prints a verdict, a per-peer
summary with delivery timing and, per anomaly kind, the count and up to 32
examples with a one-line explanation each. Exit status: 0 consistent, 1 anomalies found,
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from chat_app.verify.text import render

EXAMPLES = 32
PARQUET = (".parquet", ".pq")
JSONL = (".jsonl", ".json", ".ndjson")
SMALL = 64 << 20  # bytes of input that fit one shuffle partition
TINY = 4 << 20  # below this, interpreting beats compiling (about 100,000 rows)
JVM = "-XX:+UseParallelGC"


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
        if "://" in raw:  # hdfs://, s3a://, ...: only the cluster can see it; Spark reports what it cannot read
            (found.jsonl if raw.endswith(JSONL) else found.parquet).append(raw)
            found.bytes += SMALL  # unknown size: assume it is not tiny
            continue
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

    from chat_app.verify import classes

    jvm = f"{JVM} {classes.options()}".strip()

    # ~64 MB of input per shuffle partition, at least 2, at most 400
    partitions = max(2, min(400, inputs.bytes // SMALL + 1))
    builder = (SparkSession.builder.appName("sds-chat verify")
               .config("spark.sql.shuffle.partitions", str(partitions))
               .config("spark.sql.adaptive.enabled", "true")
               # let the persisted intermediates shrink to a few partitions as well
               .config("spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "true")
               .config("spark.driver.memory", "6g")
               # a batch job on few cores: the throughput collector, whose work stops the
               # job briefly, costs less than G1's concurrent threads competing with the tasks;
               # and the classes an earlier run loaded are mapped from its archive
               .config("spark.driver.extraJavaOptions", jvm))
    if inputs.bytes < TINY:
        # On a few thousand rows Spark's fixed costs are the whole wait:
        # compiling generated code for each of the job's few dozen
        # operators, and re-planning the query after every stage (adaptive
        # execution) cost more than they save, and one partition per shuffle
        # means one task per stage.
        #
        # A fresh JVM spends most of a tiny job loading and compiling: so
        # expressions are interpreted too (no Janino compile per projection;
        # an internal setting, but one Spark tests every expression under),
        # the JIT stops at its quick first tier (the C2 compiler's threads
        # compete for the two cores and pay off only on long jobs), and no
        # join is broadcast (each broadcast is a job of its own: 12 jobs
        # become 3). Together the checks of 3,000 rows take about half as long.
        builder = (builder.config("spark.sql.codegen.wholeStage", "false")
                   .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
                   .config("spark.driver.extraJavaOptions", f"{jvm} -XX:TieredStopAtLevel=1")
                   .config("spark.sql.autoBroadcastJoinThreshold", "-1")
                   .config("spark.sql.adaptive.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "1"))
    if not master and not _in_spark_submit():
        master = "local[*]"
    if master:
        builder = builder.master(master)
    if master and _on_this_machine(master):
        # the driver listens on loopback only
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _on_this_machine(master: str) -> bool:
    host = master.split("://", 1)[-1].split(":", 1)[0]
    return master.startswith("local") or host in ("127.0.0.1", "localhost", "[::1]")


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


def check(spark, rows, tiny: bool = False) -> dict:
    """Run every check; return the report (small: counts and examples).

    Three Spark actions: the per-peer pass, whether any log is out of order,
    and one over every anomaly that yields the counts per kind and peer and
    the examples together. A small input pays mostly for Spark's fixed cost per
    job, so nothing is computed twice. On larger inputs the intermediates
    several checks share are persisted and the small side of each join is
    broadcast; on ``tiny`` ones neither (Spark reuses the shared shuffles
    within the one query instead, and each broadcast or cache would be a
    job of its own), and the per-peer pass runs at the same time as the
    checks. Both ways give the same report."""
    from pyspark import StorageLevel

    from chat_app.verify.checks import agreement, all_checks
    from chat_app.verify.peers import collect, summary
    from chat_app.verify.schema import ANOMALY_COLUMNS

    def anomalies(checks) -> list:
        progress(f"running {len(checks)} checks: " + ", ".join(n for n, _ in checks))
        found = checks[0][1]
        for _, df in checks[1:]:
            found = found.unionByName(df)
        return _counted_examples(found).collect()

    progress("reading exports, counting rows and timing deliveries")
    if tiny:
        # One task per stage leaves a core idle: the per-peer pass runs beside
        # the checks, which then find each channel's peers themselves.
        with ThreadPoolExecutor(1) as pool:
            passed = pool.submit(lambda: collect(summary(rows)))
            found = anomalies(all_checks(rows, broadcast=False))
            peers = _valid(passed.result()[0])
    else:
        peers, prints = collect(summary(rows))
        _valid(peers)
        agreed = agreement(prints)
        progress(f"{len(agreed.references)} of {len(_channels(peers))} channel(s) have the same log on every peer "
                 "and are checked from one of them")
        found = anomalies(all_checks(rows, _channel_peers(spark, peers), agreed=agreed,
                                     persist=lambda df: df.persist(StorageLevel.MEMORY_AND_DISK)))
    counts: dict[str, int] = {}
    per_peer: dict[str, int] = {}
    examples: dict[str, list[dict]] = {}
    for r in found:
        if r["first_of_peer"]:
            counts[r["kind"]] = counts.get(r["kind"], 0) + r["of_peer"]
            if r["peer_id"] is not None:
                per_peer[r["peer_id"]] = per_peer.get(r["peer_id"], 0) + r["of_peer"]
        if r["n"] <= EXAMPLES:
            examples.setdefault(r["kind"], []).append({k: r[k] for k in ANOMALY_COLUMNS if k != "kind"})
    return {
        "verdict": "consistent" if not counts else "inconsistent",
        "rows": sum(p["rows"] for p in peers),
        "channels": len(_channels(peers)),
        "peers": [{"peer_id": p["peer_id"], "nick": p["nick"], "rows": p["rows"], "channels": len(p["channels"]),
                   "anomalies": per_peer.get(p["peer_id"], 0), "timed": p["timed"],
                   "delay_ms": p["delay_ms"], "wait_ms": p["wait_ms"]} for p in peers],
        "anomalies": {kind: {"count": counts[kind], "examples": sorted(
            examples.get(kind, []), key=lambda e: tuple(str(e[k]) for k in ("channel_id", "peer_id", "message_id")))}
            for kind in sorted(counts)},
    }


def _valid(peers: list[dict]) -> list[dict]:
    from chat_app.verify.schema import REQUIRED

    invalid = sum(p["invalid"] for p in peers)
    if invalid:
        raise InputError(f"{invalid} row{'s' if invalid > 1 else ''} lack required fields ({', '.join(REQUIRED)})")
    return peers


def _channels(peers: list[dict]) -> dict[str, list[str]]:
    """channel -> the peers that exported it."""
    by_channel: dict[str, list[str]] = {}
    for p in peers:
        for channel in p["channels"]:
            by_channel.setdefault(channel, []).append(p["peer_id"])
    return by_channel


def _channel_peers(spark, peers: list[dict]):
    """(channel_id, all_peers) as literals, broadcast. None without channels."""
    from pyspark.sql import functions as F

    from chat_app.verify.checks import literal_table

    members = [F.struct(F.lit(c).alias("channel_id"), F.array(*map(F.lit, sorted(ps))).alias("all_peers"))
               for c, ps in sorted(_channels(peers).items())]
    return F.broadcast(literal_table(spark, members)) if members else None


def _counted_examples(found):
    """The anomalies the driver needs, in one pass: the first ``EXAMPLES``
    of each kind (``n``), and one row per kind and peer carrying that
    pair's count (``first_of_peer``, ``of_peer``). Both windows partition by
    kind first, so the anomalies are shuffled once."""
    order = "ORDER BY channel_id, peer_id, message_id, other_message_id"
    return found.selectExpr(
        "*", f"row_number() OVER (PARTITION BY kind {order}) AS n",
        f"count(*) OVER (PARTITION BY kind, peer_id {order} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
        "AS of_peer",
        f"row_number() OVER (PARTITION BY kind, peer_id {order}) = 1 AS first_of_peer",
    ).where(f"n <= {EXAMPLES} OR first_of_peer")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sds-chat verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="export files or directories (Parquet or JSONL)")
    parser.add_argument("--report", type=Path, help="also write the report as JSON to this file")
    parser.add_argument("--html", type=Path, help="also write the report as one self-contained HTML page")
    parser.add_argument("--master", help="Spark master URL (default: local[*], or spark-submit's)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        inputs = find_inputs(args.paths)
        progress(f"{len(inputs.parquet) + len(inputs.jsonl)} export file(s), {inputs.bytes / 1e6:,.1f} MB")
        spark = spark_session(args.master, inputs)
        rows = read(spark, inputs)
        report = check(spark, rows, tiny=inputs.bytes < TINY)
        pictures = _order_pictures(rows, report) if args.html else []
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
    print(render(report, EXAMPLES))
    try:
        if args.report:
            _write(args.report, json.dumps(report, indent=2))
        if args.html:
            from chat_app.verify.page import render as page

            _write(args.html, page(report, pictures))
    except OSError as exc:
        print(f"sds-chat verify: cannot write the report: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0 if report["verdict"] == "consistent" else 1


def _order_pictures(rows, report: dict) -> list:
    found = report["anomalies"].get("order_disagreement")
    if not found:
        return []
    from chat_app.verify.witness import order_contexts

    progress("fetching the logs around order disagreements")
    return order_contexts(rows, found["examples"])


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    progress(f"report written to {path}")


if __name__ == "__main__":
    sys.exit(main())
