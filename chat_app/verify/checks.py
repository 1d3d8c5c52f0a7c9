"""The consistency checks: each a pure ``DataFrame -> DataFrame`` function.

Input is the union of every export (``schema.EXPORT``); each check returns
rows of ``schema.ANOMALY`` - a kind, where it is, a witness (a second message
and/or a second peer) and a one-line explanation built with column
functions (no Python UDFs: everything runs in the JVM).

``ordered`` adds each row's predecessor in its peer's log (one window pass,
shared by the position, Lamport-order and disagreement checks).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .schema import ANOMALY_COLUMNS

LOG = ["channel_id", "peer_id"]


def _s(col: str | Column) -> Column:
    column = F.col(col) if isinstance(col, str) else col
    return F.coalesce(column.cast("string"), F.lit("?"))


def _short(col: str | Column) -> Column:
    """Ids are long: explanations show their first 12 characters."""
    return F.substring(_s(col), 1, 12)


def anomalies(df: DataFrame, kind: str, explanation: Column, peer=None, message=None,
              other_message=None, other_peer=None) -> DataFrame:
    def col(c):
        return F.lit(None).cast("string") if c is None else (F.col(c) if isinstance(c, str) else c)

    return df.select(
        F.lit(kind).alias("kind"), F.col("channel_id"), col(peer).alias("peer_id"), col(message).alias("message_id"),
        col(other_message).alias("other_message_id"), col(other_peer).alias("other_peer_id"),
        explanation.alias("explanation"),
    ).select(*ANOMALY_COLUMNS)


def ordered(rows: DataFrame) -> DataFrame:
    """Each row with the previous row of the same peer's log (by position)."""
    w = Window.partitionBy(*LOG).orderBy("pos")
    return (rows
            .withColumn("prev_pos", F.lag("pos").over(w))
            .withColumn("prev_id", F.lag("message_id").over(w))
            .withColumn("prev_lamport", F.lag("lamport_timestamp").over(w)))


def holders(rows: DataFrame) -> DataFrame:
    """Per message: how many peers hold it, and how many peers the channel has."""
    peers = rows.groupBy("channel_id").agg(F.countDistinct("peer_id").alias("peers"))
    held = rows.groupBy("channel_id", "message_id").agg(
        F.countDistinct("peer_id").alias("holders"), F.min("peer_id").alias("a_holder"))
    return held.join(peers, "channel_id")


def missing_messages(rows: DataFrame, held: DataFrame) -> DataFrame:
    """A peer lacks a message some other peer of the channel holds. Only
    messages not held by everyone are expanded, so this stays cheap."""
    incomplete = held.where(F.col("holders") < F.col("peers"))
    peers = rows.select("channel_id", "peer_id").distinct()
    lacking = (incomplete.join(peers, "channel_id")
               .join(rows.select("channel_id", "peer_id", "message_id"),
                     ["channel_id", "peer_id", "message_id"], "left_anti"))
    return anomalies(
        lacking, "missing_message",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" lacks message "), _short("message_id"),
                 F.lit(", which "), _s("holders"), F.lit(" of "), _s("peers"), F.lit(" peers hold (e.g. "),
                 _short("a_holder"), F.lit(")")),
        peer="peer_id", message="message_id", other_peer="a_holder")


def minority_messages(held: DataFrame) -> DataFrame:
    """A message that fewer than half of the channel's peers hold."""
    few = held.where(F.col("holders") * 2 < F.col("peers"))
    return anomalies(
        few, "minority_message",
        F.concat(F.lit("message "), _short("message_id"), F.lit(" is held by only "), _s("holders"),
                 F.lit(" of "), _s("peers"), F.lit(" peers")),
        peer="a_holder", message="message_id")


def duplicate_deliveries(rows: DataFrame) -> DataFrame:
    dups = (rows.groupBy(*LOG, "message_id")
            .agg(F.count("*").alias("times"), F.min("pos").alias("first"), F.max("pos").alias("last"))
            .where(F.col("times") > 1))
    return anomalies(
        dups, "duplicate_delivery",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" delivered "), _short("message_id"), F.lit(" "),
                 _s("times"), F.lit(" times (positions "), _s("first"), F.lit(" and "), _s("last"), F.lit(")")),
        peer="peer_id", message="message_id")


def position_collisions(rows: DataFrame) -> DataFrame:
    clash = (rows.groupBy(*LOG, "pos")
             .agg(F.count("*").alias("n"), F.min("message_id").alias("a"), F.max("message_id").alias("b"))
             .where(F.col("n") > 1))
    return anomalies(
        clash, "position_collision",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has "), _s("n"), F.lit(" messages at position "),
                 _s("pos"), F.lit(": "), _short("a"), F.lit(" and "), _short("b")),
        peer="peer_id", message="a", other_message="b")


def position_gaps(ordered_rows: DataFrame) -> DataFrame:
    gap = ordered_rows.where(
        (F.col("prev_pos").isNull() & (F.col("pos") != 0)) | (F.col("pos") - F.col("prev_pos") > 1))
    start = F.coalesce(F.col("prev_pos") + 1, F.lit(0))
    return anomalies(
        gap, "position_gap",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit("'s log skips positions "), _s(start), F.lit(".."),
                 _s(F.col("pos") - 1), F.lit(" (before "), _short("message_id"), F.lit(")")),
        peer="peer_id", message="message_id", other_message="prev_id")


def _out_of_order() -> Column:
    return ((F.col("prev_lamport") > F.col("lamport_timestamp"))
            | ((F.col("prev_lamport") == F.col("lamport_timestamp")) & (F.col("prev_id") > F.col("message_id"))))


def lamport_order_violations(ordered_rows: DataFrame) -> DataFrame:
    """Along each log, (lamport, message_id) must increase."""
    bad = ordered_rows.where(_out_of_order())
    return anomalies(
        bad, "lamport_order_violation",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has "), _short("prev_id"), F.lit(" (lamport "),
                 _s("prev_lamport"), F.lit(") before "), _short("message_id"), F.lit(" (lamport "),
                 _s("lamport_timestamp"), F.lit(")")),
        peer="peer_id", message="message_id", other_message="prev_id")


def payload_conflicts(rows: DataFrame) -> DataFrame:
    """One message id, different sender / lamport / causal history."""
    payload = F.struct(F.col("sender_id"), F.col("lamport_timestamp"),
                       F.concat_ws(",", F.coalesce(F.col("causal_history"), F.array())).alias("history"))
    versions = (rows.select("channel_id", "message_id", "peer_id", payload.alias("v"))
                .groupBy("channel_id", "message_id")
                .agg(F.countDistinct("v").alias("n"), F.min("v").alias("a"), F.max("v").alias("b"),
                     F.min_by("peer_id", "v").alias("pa"), F.max_by("peer_id", "v").alias("pb"))
                .where(F.col("n") > 1))
    fields = F.concat_ws(", ",
                         F.when(F.col("a.sender_id") != F.col("b.sender_id"), F.lit("sender")),
                         F.when(F.col("a.lamport_timestamp") != F.col("b.lamport_timestamp"), F.lit("lamport")),
                         F.when(F.col("a.history") != F.col("b.history"), F.lit("causal history")))
    return anomalies(
        versions, "payload_conflict",
        F.concat(F.lit("message "), _short("message_id"), F.lit(": peers "), _short("pa"), F.lit(" and "),
                 _short("pb"), F.lit(" disagree on its "), fields),
        peer="pa", message="message_id", other_peer="pb")


def causal_anomalies(rows: DataFrame) -> DataFrame:
    """Per peer: a dependency never delivered (gap) or delivered after the
    message that needs it (inversion)."""
    deps = rows.select(*LOG, "message_id", "pos", F.explode("causal_history").alias("dep"))
    own = rows.select(*LOG, F.col("message_id").alias("dep"), F.col("pos").alias("dep_pos"))
    joined = deps.join(own, [*LOG, "dep"], "left")
    gaps = anomalies(
        joined.where(F.col("dep_pos").isNull()), "causal_gap",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" delivered "), _short("message_id"),
                 F.lit(" but never its dependency "), _short("dep")),
        peer="peer_id", message="message_id", other_message="dep")
    inversions = anomalies(
        joined.where(F.col("dep_pos") > F.col("pos")), "causal_inversion",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has "), _short("message_id"), F.lit(" at "),
                 _s("pos"), F.lit(" before its dependency "), _short("dep"), F.lit(" at "), _s("dep_pos")),
        peer="peer_id", message="message_id", other_message="dep")
    return gaps.unionByName(inversions)


def lamport_clock_violations(rows: DataFrame) -> DataFrame:
    """A dependency whose Lamport timestamp is not below the message's: the
    author's clock did not advance past what it had seen. Checked once per
    message (from one holder's copy), not once per peer."""
    messages = (rows.groupBy("channel_id", "message_id")
                .agg(F.min("lamport_timestamp").alias("lamport"), F.first("causal_history").alias("history"),
                     F.min("peer_id").alias("holder")))
    deps = messages.select("channel_id", "message_id", "lamport", "holder", F.explode("history").alias("dep"))
    stamps = messages.select("channel_id", F.col("message_id").alias("dep"), F.col("lamport").alias("dep_lamport"))
    bad = deps.join(stamps, ["channel_id", "dep"]).where(F.col("dep_lamport") >= F.col("lamport"))
    return anomalies(
        bad, "lamport_clock_violation",
        F.concat(F.lit("message "), _short("message_id"), F.lit(" (lamport "), _s("lamport"),
                 F.lit(") depends on "), _short("dep"), F.lit(" (lamport "), _s("dep_lamport"), F.lit(")")),
        peer="holder", message="message_id", other_message="dep")


def order_disagreements(rows: DataFrame, ordered_rows: DataFrame) -> DataFrame:
    """Two peers hold messages a and b in opposite orders. A peer's log that
    disagrees with (lamport, id) order has an adjacent pair out of order
    (any inversion implies one); for each such pair (p has a before b), look
    for a peer q that has b before a. Candidates are few, so they are
    broadcast to the joins instead of shuffling every row."""
    candidates = F.broadcast(ordered_rows.where(_out_of_order()).select(
        "channel_id", F.col("peer_id").alias("p"), F.col("prev_id").alias("a"), F.col("message_id").alias("b")))
    at_a = rows.select("channel_id", F.col("peer_id").alias("q"), F.col("message_id").alias("a"),
                       F.col("pos").alias("pos_a"))
    at_b = rows.select("channel_id", F.col("peer_id").alias("q"), F.col("message_id").alias("b"),
                       F.col("pos").alias("pos_b"))
    witnessed = (candidates.join(at_a, ["channel_id", "a"]).where(F.col("q") != F.col("p"))
                 .join(at_b, ["channel_id", "q", "b"]).where(F.col("pos_b") < F.col("pos_a"))
                 .groupBy("channel_id", "p", "a", "b").agg(F.min("q").alias("q")))
    return anomalies(
        witnessed, "order_disagreement",
        F.concat(F.lit("peer "), _short("p"), F.lit(" has "), _short("a"), F.lit(" before "), _short("b"),
                 F.lit(", peer "), _short("q"), F.lit(" has "), _short("b"), F.lit(" before "), _short("a")),
        peer="p", message="a", other_message="b", other_peer="q")


def all_checks(rows: DataFrame) -> list[tuple[str, DataFrame]]:
    """Every check, in report order: (name, anomalies)."""
    ordered_rows = ordered(rows)
    held = holders(rows)
    return [
        ("missing messages", missing_messages(rows, held)),
        ("minority messages", minority_messages(held)),
        ("duplicate deliveries", duplicate_deliveries(rows)),
        ("position gaps", position_gaps(ordered_rows)),
        ("position collisions", position_collisions(rows)),
        ("payload conflicts", payload_conflicts(rows)),
        ("Lamport order", lamport_order_violations(ordered_rows)),
        ("causal gaps and inversions", causal_anomalies(rows)),
        ("Lamport clocks", lamport_clock_violations(rows)),
        ("order disagreements", order_disagreements(rows, ordered_rows)),
    ]
