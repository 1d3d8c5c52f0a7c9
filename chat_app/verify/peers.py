"""The per-peer pass: one aggregation over every row that yields each
peer's totals, its channels, the rows lacking required fields, and how late
messages reached it.

Delivery timing, per peer, over the messages other peers wrote:

* **delay** = ``delivered_at_ms - lamport_timestamp``: from send to
  delivery. SDS sets a message's Lamport timestamp to its author's clock in
  milliseconds (unless causality pushed it a little ahead), so it stands for
  the send time. Across machines the figure includes their clock skew, and
  can even be negative.
* **wait** = ``delivered_at_ms - received_at_ms``: how long a message that
  had arrived waited for its causal history before it could be delivered.

Both are approximate percentiles (``percentile_approx``), computed in Spark
next to the counts: the driver receives a handful of numbers per peer,
however many rows there are. Rows without the timing columns count as
rows but not in the percentiles.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from chat_app.verify.schema import REQUIRED

PERCENTILES = (0.5, 0.9, 0.99)
ACCURACY = 10_000  # relative error about 1/ACCURACY of the value range


def _percentiles(value) -> F.Column:
    return F.percentile_approx(value, list(PERCENTILES), ACCURACY)


def summary(rows: DataFrame) -> DataFrame:
    """One row per exporting peer (a null peer_id collects invalid rows)."""
    invalid = F.expr(" OR ".join(f"{c} IS NULL" for c in REQUIRED))
    foreign = F.col("sender_id") != F.col("peer_id")
    delay = F.when(foreign, F.col("delivered_at_ms") - F.col("lamport_timestamp"))
    wait = F.when(foreign, F.col("delivered_at_ms") - F.col("received_at_ms"))
    return rows.groupBy("peer_id").agg(
        F.count("*").alias("rows"),
        F.array_sort(F.collect_set("channel_id")).alias("channels"),
        F.count(F.when(invalid, 1)).alias("invalid"),
        F.count(delay).alias("timed"),
        _percentiles(delay).alias("delay"),
        _percentiles(wait).alias("wait"),
        F.max(delay).alias("delay_max"),
        F.max(wait).alias("wait_max"),
    )


def _named(values, maximum) -> dict | None:
    if values is None:
        return None
    named = {f"p{round(q * 100)}": v for q, v in zip(PERCENTILES, values, strict=True)}
    return {**named, "max": maximum}


def collect(rows: DataFrame) -> list[dict]:
    """The summary as plain data, sorted by peer id (invalid rows under None)."""
    found = []
    for r in rows.collect():
        found.append({
            "peer_id": r["peer_id"], "rows": r["rows"], "channels": list(r["channels"]), "invalid": r["invalid"],
            "timed": r["timed"], "delay_ms": _named(r["delay"], r["delay_max"]),
            "wait_ms": _named(r["wait"], r["wait_max"]),
        })
    return sorted(found, key=lambda p: (p["peer_id"] is None, p["peer_id"] or ""))
