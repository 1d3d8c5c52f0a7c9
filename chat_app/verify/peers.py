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


def summary(rows: DataFrame) -> DataFrame:
    """One row per exporting peer (a null peer_id collects invalid rows).

    Written as SQL text: one round trip to the JVM per expression."""
    invalid = " OR ".join(f"{c} IS NULL" for c in REQUIRED)
    foreign = "sender_id != peer_id"
    delay = f"CASE WHEN {foreign} THEN delivered_at_ms - lamport_timestamp END"
    wait = f"CASE WHEN {foreign} THEN delivered_at_ms - received_at_ms END"
    quantiles = "array(" + ", ".join(f"{q}D" for q in PERCENTILES) + ")"
    return rows.groupBy("peer_id").agg(*map(F.expr, (
        "count(*) AS `rows`",
        "array_sort(collect_set(channel_id)) AS channels",
        f"count(CASE WHEN {invalid} THEN 1 END) AS invalid",
        f"count({delay}) AS timed",
        f"percentile_approx({delay}, {quantiles}, {ACCURACY}) AS delay",
        f"percentile_approx({wait}, {quantiles}, {ACCURACY}) AS wait",
        f"max({delay}) AS delay_max",
        f"max({wait}) AS wait_max",
    )))


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
