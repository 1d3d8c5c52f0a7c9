"""The per-log pass: one aggregation over every row that yields, for each
log (a peer's rows of one channel), its totals, its fingerprint and how late
messages reached its peer; and, for each peer, the rows lacking required
fields and its delivery timing over all its logs.

Delivery timing, per peer, over the messages other peers wrote:

* **delay** = ``delivered_at_ms - lamport_timestamp``: from send to
  delivery. SDS sets a message's Lamport timestamp to its author's clock in
  milliseconds (unless causality pushed it a little ahead), so it stands for
  the send time. Across machines the figure includes their clock skew, and
  can even be negative.
* **wait** = ``delivered_at_ms - received_at_ms``: how long a message that
  had arrived waited for its causal history before it could be delivered.

Both are approximate percentiles from KLL quantile sketches, one per log,
merged per peer - all in Spark: the driver receives a handful of numbers
per log, however many rows there are. Up to ``SKETCH_K`` values per log
the sketch keeps every value and the percentiles are exact (the nearest
rank); beyond, their rank is off by at most about 0.1%. Rows without the
timing columns count as rows but not in the percentiles.

A log's **fingerprint** is its row count and the sums of two independent
64-bit hashes of its rows (position, id, author, timestamp, history,
sequence number), each sum kept as two halves so it cannot overflow: logs
with equal fingerprints hold the same rows at the same positions, barring a
collision of 128-bit hashes (``checks.one_for_all`` reads one of them).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from chat_app.verify.schema import REQUIRED

PERCENTILES = (0.5, 0.9, 0.99)
SKETCH_K = 4_000
"""KLL sketch size: exact up to about this many values, ~0.1% rank error beyond."""
ROW_HASH = "xxhash64({}pos, message_id, sender_id, lamport_timestamp, causal_history, coalesce(seq, -1))"
"""A row of a log as one number; ``{}`` takes a salt, for the second hash."""


def summary(rows: DataFrame) -> DataFrame:
    """One row per log ((channel, peer); a null peer_id collects rows
    without one), with its peer's totals and timing repeated on each.

    Written as SQL text: one round trip to the JVM per expression."""
    invalid = " OR ".join(f"{c} IS NULL" for c in REQUIRED)
    foreign = "sender_id != peer_id"
    delay = f"CASE WHEN {foreign} THEN delivered_at_ms - lamport_timestamp END"
    wait = f"CASE WHEN {foreign} THEN delivered_at_ms - received_at_ms END"
    hashed = rows.selectExpr("*", f"{ROW_HASH.format('')} AS a", f"{ROW_HASH.format(repr('sds-chat') + ', ')} AS b")
    logs = hashed.groupBy("channel_id", "peer_id").agg(*map(F.expr, (
        "count(*) AS `rows`",
        f"count(CASE WHEN {invalid} THEN 1 END) AS invalid",
        f"count({delay}) AS timed",
        f"count({wait}) AS waited",
        f"kll_sketch_agg_bigint({delay}, {SKETCH_K}) AS delay",
        f"kll_sketch_agg_bigint({wait}, {SKETCH_K}) AS wait",
        f"max({delay}) AS delay_max",
        f"max({wait}) AS wait_max",
        "max_by(nick, lamport_timestamp) FILTER (WHERE sender_id = peer_id) AS nick",  # its latest own
        "array(count(*), sum(shiftright(a, 32)), sum(a & 4294967295), sum(shiftright(b, 32)), "
        "sum(b & 4294967295)) AS fingerprint",
    )))
    peer = "OVER (PARTITION BY peer_id)"
    ranks = "array(" + ", ".join(f"{q}D" for q in PERCENTILES) + ")"
    totals = logs.selectExpr(
        "channel_id", "peer_id", "`rows`", "fingerprint", f"max(nick) {peer} AS nick",
        *(f"sum({n}) {peer} AS {n}" for n in ("invalid", "timed", "waited")),
        *(f"max({s}_max) {peer} AS {s}_max" for s in ("delay", "wait")),
        *(f"kll_merge_agg_bigint({s}) {peer} AS {s}" for s in ("delay", "wait")))
    return totals.selectExpr(  # an empty sketch has no quantiles
        "* EXCEPT (delay, wait)",
        *(f"IF({n} > 0, kll_sketch_get_quantile_bigint({s}, {ranks}), NULL) AS {s}"
          for s, n in (("delay", "timed"), ("wait", "waited"))))


def _named(values, maximum) -> dict | None:
    if values is None:  # no timed row
        return None
    named = {f"p{round(q * 100)}": v for q, v in zip(PERCENTILES, values, strict=True)}
    return {**named, "max": maximum}


def collect(rows: DataFrame) -> tuple[list[dict], dict[tuple[str, str], tuple]]:
    """The summary as plain data: the peers, sorted by peer id (rows without
    one under None), and each log's fingerprint by (channel, peer)."""
    peers: dict[str | None, dict] = {}
    prints: dict[tuple[str, str], tuple] = {}
    for r in rows.collect():
        peer = peers.setdefault(r["peer_id"], {
            "peer_id": r["peer_id"], "nick": r["nick"], "rows": 0, "channels": [], "invalid": r["invalid"],
            "timed": r["timed"],
            "delay_ms": _named(r["delay"], r["delay_max"]), "wait_ms": _named(r["wait"], r["wait_max"])})
        peer["rows"] += r["rows"]
        if r["channel_id"] is not None:
            peer["channels"].append(r["channel_id"])
            prints[r["channel_id"], r["peer_id"]] = tuple(r["fingerprint"])
    for peer in peers.values():
        peer["channels"].sort()
    return sorted(peers.values(), key=lambda p: (p["peer_id"] is None, p["peer_id"] or "")), prints
