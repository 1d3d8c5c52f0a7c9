"""The consistency checks: each a pure ``DataFrame -> DataFrame`` function.

Input is the union of every export (``schema.EXPORT``); each check returns
rows of ``schema.ANOMALY`` - a kind, where it is, a witness (a second message
and/or a second peer) and a one-line explanation built with column
functions (no Python UDFs: everything runs in the JVM).

Theory of operation: the full rows are shuffled only twice.

* ``messages``: one group per (channel, message) - which peers hold it,
  how many rows it has, its payload versions, one holder's copy.
  Missing and minority messages, payload conflicts, duplicates and Lamport
  clocks are read from these (rows / peers of them), not from every row.
* ``flagged``: one window over each peer's log, sorted by position, keeping
  only rows out of place (a gap, a collision, out of (lamport, id) order).
  Position and order checks read these few rows; disagreements are looked
  for only in the logs they show out of order.

Causal checks use two facts. A peer lacks a dependency only if it lacks that
message, so causal gaps come from the (small) missing set. And in a log in
(lamport, id) order a dependency can come later only if its timestamp is not
below the message's - a Lamport clock violation - so inversions come from
those pairs, plus a full check restricted to the few logs out of order.
Joins against every row always broadcast the small side.
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


# --------------------------------------------------------------- the two passes

def channel_peers(rows: DataFrame) -> DataFrame:
    """(channel_id, all_peers): every peer that exported the channel."""
    return rows.groupBy("channel_id").agg(F.array_sort(F.collect_set("peer_id")).alias("all_peers"))


def messages(rows: DataFrame) -> DataFrame:
    """One row per (channel, message): its holders, row count, payload
    versions (with a witness peer for the lowest and highest) and one copy.

    Versions are told apart by a 64-bit hash of the payload, so the
    aggregation compares and collects numbers, not strings and arrays."""
    payload = F.struct("sender_id", "lamport_timestamp", F.col("causal_history").alias("history"))
    version = F.xxhash64("sender_id", "lamport_timestamp", "causal_history")
    return (rows.select("channel_id", "message_id", "peer_id", payload.alias("v"), version.alias("h"))
            .groupBy("channel_id", "message_id")
            .agg(F.count("*").alias("n_rows"), F.array_sort(F.collect_set("peer_id")).alias("holders"),
                 F.size(F.collect_set("h")).alias("versions"), F.min_by("v", "h").alias("a"),
                 F.max_by("v", "h").alias("b"), F.min_by("peer_id", "h").alias("pa"),
                 F.max_by("peer_id", "h").alias("pb"))
            .withColumn("history", F.col("a.history"))
            .withColumn("lamport", F.col("a.lamport_timestamp"))
            .withColumn("n_holders", F.size("holders")))


def _out_of_order() -> Column:
    return ((F.col("prev_lamport") > F.col("lamport_timestamp"))
            | ((F.col("prev_lamport") == F.col("lamport_timestamp")) & (F.col("prev_id") > F.col("message_id"))))


def flagged(rows: DataFrame) -> DataFrame:
    """Rows out of place in their peer's log, each with its predecessor."""
    w = Window.partitionBy(*LOG).orderBy("pos", "message_id")
    with_prev = (rows.select(*LOG, "pos", "message_id", "lamport_timestamp")
                 .withColumn("prev_pos", F.lag("pos").over(w))
                 .withColumn("prev_id", F.lag("message_id").over(w))
                 .withColumn("prev_lamport", F.lag("lamport_timestamp").over(w)))
    gap = (F.col("prev_pos").isNull() & (F.col("pos") != 0)) | (F.col("pos") - F.col("prev_pos") > 1)
    return (with_prev
            .withColumn("gap", gap)
            .withColumn("collision", F.col("pos") == F.col("prev_pos"))
            .withColumn("disorder", _out_of_order())
            .where(F.col("gap") | F.col("collision") | F.col("disorder")))


# ------------------------------------------------------------- per message

def missing_messages(msgs: DataFrame, peers: DataFrame) -> DataFrame:
    """A peer of the channel lacks a message other peers hold."""
    lacking = (msgs.join(F.broadcast(peers), "channel_id").where(F.col("n_holders") < F.size("all_peers"))
               .select("channel_id", "message_id", "n_holders", F.size("all_peers").alias("peers"),
                       F.col("holders")[0].alias("a_holder"),
                       F.explode(F.array_except("all_peers", "holders")).alias("peer_id")))
    return anomalies(
        lacking, "missing_message",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" lacks message "), _short("message_id"),
                 F.lit(", which "), _s("n_holders"), F.lit(" of "), _s("peers"), F.lit(" peers hold (e.g. "),
                 _short("a_holder"), F.lit(")")),
        peer="peer_id", message="message_id", other_peer="a_holder")


def minority_messages(msgs: DataFrame, peers: DataFrame) -> DataFrame:
    """A message that fewer than half of the channel's peers hold."""
    few = (msgs.join(F.broadcast(peers), "channel_id").where(F.col("n_holders") * 2 < F.size("all_peers"))
           .withColumn("peers", F.size("all_peers")).withColumn("a_holder", F.col("holders")[0]))
    return anomalies(
        few, "minority_message",
        F.concat(F.lit("message "), _short("message_id"), F.lit(" is held by only "), _s("n_holders"),
                 F.lit(" of "), _s("peers"), F.lit(" peers")),
        peer="a_holder", message="message_id")


def payload_conflicts(msgs: DataFrame) -> DataFrame:
    """One message id, different sender / lamport / causal history."""
    fields = F.concat_ws(", ",
                         F.when(F.col("a.sender_id") != F.col("b.sender_id"), F.lit("sender")),
                         F.when(F.col("a.lamport_timestamp") != F.col("b.lamport_timestamp"), F.lit("lamport")),
                         F.when(~F.col("a.history").eqNullSafe(F.col("b.history")), F.lit("causal history")))
    return anomalies(
        msgs.where(F.col("versions") > 1), "payload_conflict",
        F.concat(F.lit("message "), _short("message_id"), F.lit(": peers "), _short("pa"), F.lit(" and "),
                 _short("pb"), F.lit(" disagree on its "), fields),
        peer="pa", message="message_id", other_peer="pb")


def duplicate_deliveries(rows: DataFrame, msgs: DataFrame) -> DataFrame:
    """A peer delivered a message more than once (a message with more rows
    than holders; only those are looked up among the rows)."""
    twice = F.broadcast(msgs.where(F.col("n_rows") > F.col("n_holders")).select("channel_id", "message_id"))
    dups = (rows.join(twice, ["channel_id", "message_id"])
            .groupBy(*LOG, "message_id")
            .agg(F.count("*").alias("times"), F.min("pos").alias("first"), F.max("pos").alias("last"))
            .where(F.col("times") > 1))
    return anomalies(
        dups, "duplicate_delivery",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" delivered "), _short("message_id"), F.lit(" "),
                 _s("times"), F.lit(" times (positions "), _s("first"), F.lit(" and "), _s("last"), F.lit(")")),
        peer="peer_id", message="message_id")


def clock_pairs(msgs: DataFrame) -> DataFrame:
    """(message, dependency) pairs whose dependency's Lamport timestamp is
    not below the message's: the author's clock did not advance."""
    deps = msgs.select("channel_id", "message_id", "lamport", F.col("holders")[0].alias("holder"),
                       F.explode("history").alias("dep"))
    stamps = msgs.select("channel_id", F.col("message_id").alias("dep"), F.col("lamport").alias("dep_lamport"))
    return deps.join(stamps, ["channel_id", "dep"]).where(F.col("dep_lamport") >= F.col("lamport"))


def lamport_clock_violations(pairs: DataFrame) -> DataFrame:
    return anomalies(
        pairs, "lamport_clock_violation",
        F.concat(F.lit("message "), _short("message_id"), F.lit(" (lamport "), _s("lamport"),
                 F.lit(") depends on "), _short("dep"), F.lit(" (lamport "), _s("dep_lamport"), F.lit(")")),
        peer="holder", message="message_id", other_message="dep")


# ------------------------------------------------------------------ per log

def position_gaps(flags: DataFrame) -> DataFrame:
    start = F.coalesce(F.col("prev_pos") + 1, F.lit(0))
    return anomalies(
        flags.where("gap"), "position_gap",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit("'s log skips positions "), _s(start), F.lit(".."),
                 _s(F.col("pos") - 1), F.lit(" (before "), _short("message_id"), F.lit(")")),
        peer="peer_id", message="message_id", other_message="prev_id")


def position_collisions(flags: DataFrame) -> DataFrame:
    return anomalies(
        flags.where("collision"), "position_collision",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has two messages at position "), _s("pos"),
                 F.lit(": "), _short("prev_id"), F.lit(" and "), _short("message_id")),
        peer="peer_id", message="prev_id", other_message="message_id")


def lamport_order_violations(flags: DataFrame) -> DataFrame:
    """Along each log, (lamport, message_id) must increase."""
    return anomalies(
        flags.where("disorder"), "lamport_order_violation",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has "), _short("prev_id"), F.lit(" (lamport "),
                 _s("prev_lamport"), F.lit(") before "), _short("message_id"), F.lit(" (lamport "),
                 _s("lamport_timestamp"), F.lit(")")),
        peer="peer_id", message="message_id", other_message="prev_id")


def order_disagreements(rows: DataFrame, flags: DataFrame) -> DataFrame:
    """Two peers hold messages a and b in opposite orders.

    Two logs in (lamport, id) order agree, so a disagreement needs a log p
    out of that order. Walk p's log restricted to the messages another peer
    q holds: p and q disagree exactly when q's positions do not increase
    along the walk, and then two neighbours of the walk are a witness (p has
    a before b, q has b before a) - even when messages only p holds lie
    between them. Only the (few) logs out of order are walked; with none,
    nothing is joined at all."""
    disordered = flags.where("disorder").select(*LOG).distinct()
    if disordered.isEmpty():  # flags are persisted and small: the common, clean case costs nothing
        return anomalies(rows.limit(0).select("channel_id"), "order_disagreement", F.lit(""))
    walked = rows.join(F.broadcast(disordered), LOG).select(
        "channel_id", F.col("peer_id").alias("p"), "message_id", F.col("pos").alias("pos_p"))
    others = rows.select("channel_id", F.col("peer_id").alias("q"), "message_id", F.col("pos").alias("pos_q"))
    w = Window.partitionBy("channel_id", "p", "q").orderBy("pos_p", "message_id")
    walks = (walked.join(others, ["channel_id", "message_id"]).where(F.col("q") != F.col("p"))
             .withColumn("a", F.lag("message_id").over(w))
             .withColumn("pos_q_of_a", F.lag("pos_q").over(w)))
    witnessed = (walks.where(F.col("pos_q_of_a") > F.col("pos_q"))
                 .groupBy("channel_id", "p", "a", F.col("message_id").alias("b")).agg(F.min("q").alias("q")))
    return anomalies(
        witnessed, "order_disagreement",
        F.concat(F.lit("peer "), _short("p"), F.lit(" has "), _short("a"), F.lit(" before "), _short("b"),
                 F.lit(", peer "), _short("q"), F.lit(" has "), _short("b"), F.lit(" before "), _short("a")),
        peer="p", message="a", other_message="b", other_peer="q")


# ------------------------------------------------------------------- causal

def causal_gaps(msgs: DataFrame, missing: DataFrame) -> DataFrame:
    """A peer delivered a message but never one of its dependencies: either
    nobody holds the dependency, or this peer is missing it."""
    deps = msgs.select("channel_id", "message_id", "holders", F.explode("history").alias("dep"))
    known = msgs.select("channel_id", F.col("message_id").alias("dep"))
    unheld = (deps.join(known, ["channel_id", "dep"], "left_anti")
              .select("channel_id", "message_id", "dep", F.explode("holders").alias("peer_id")))
    lacked = F.broadcast(missing.select("channel_id", "peer_id", F.col("message_id").alias("dep")))
    lacking = (deps.join(lacked, ["channel_id", "dep"])
               .where(F.array_contains("holders", F.col("peer_id")))
               .select("channel_id", "message_id", "dep", "peer_id"))
    return anomalies(
        unheld.unionByName(lacking), "causal_gap",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" delivered "), _short("message_id"),
                 F.lit(" but never its dependency "), _short("dep")),
        peer="peer_id", message="message_id", other_message="dep")


def causal_inversions(rows: DataFrame, flags: DataFrame, pairs: DataFrame) -> DataFrame:
    """A peer has a message before one of its dependencies."""
    suspicious = F.broadcast(flags.where(F.col("disorder") | F.col("collision")).select(*LOG).distinct())
    # logs out of (lamport, id) order: check every dependency
    odd = rows.join(suspicious, LOG).select(*LOG, "message_id", "pos", "causal_history")
    deps = odd.select(*LOG, "message_id", "pos", F.explode("causal_history").alias("dep"))
    own = odd.select(*LOG, F.col("message_id").alias("dep"), F.col("pos").alias("dep_pos"))
    in_odd = deps.join(own, [*LOG, "dep"]).where(F.col("dep_pos") > F.col("pos"))
    # ordered logs: a later dependency must be a clock violation sorting after its message
    late = F.broadcast(pairs.where((F.col("dep_lamport") > F.col("lamport"))
                                  | ((F.col("dep_lamport") == F.col("lamport")) & (F.col("dep") > F.col("message_id"))))
                       .select("channel_id", "message_id", "dep"))
    at_m = rows.select(*LOG, "message_id", "pos").join(late, ["channel_id", "message_id"])
    at_d = rows.select(*LOG, F.col("message_id").alias("dep"), F.col("pos").alias("dep_pos"))
    in_ordered = (at_d.join(F.broadcast(at_m), [*LOG, "dep"]).join(suspicious, LOG, "left_anti")
                  .where(F.col("dep_pos") > F.col("pos")))
    both = in_odd.unionByName(in_ordered.select(in_odd.columns))
    return anomalies(
        both, "causal_inversion",
        F.concat(F.lit("peer "), _short("peer_id"), F.lit(" has "), _short("message_id"), F.lit(" at "),
                 _s("pos"), F.lit(" before its dependency "), _short("dep"), F.lit(" at "), _s("dep_pos")),
        peer="peer_id", message="message_id", other_message="dep")


def all_checks(rows: DataFrame, peers: DataFrame | None = None, persist=lambda df: df) -> list[tuple[str, DataFrame]]:
    """Every check, in report order: (name, anomalies). ``peers`` is
    ``channel_peers(rows)`` when the caller already knows it (then it need
    not be computed again); ``persist`` caches the shared intermediate
    results (the caller owns the storage level)."""
    peers = persist(channel_peers(rows)) if peers is None else peers
    msgs = persist(messages(rows))
    flags = persist(flagged(rows))
    missing = persist(missing_messages(msgs, peers))
    pairs = persist(clock_pairs(msgs))
    return [
        ("missing messages", missing),
        ("minority messages", minority_messages(msgs, peers)),
        ("duplicate deliveries", duplicate_deliveries(rows, msgs)),
        ("position gaps", position_gaps(flags)),
        ("position collisions", position_collisions(flags)),
        ("payload conflicts", payload_conflicts(msgs)),
        ("Lamport order", lamport_order_violations(flags)),
        ("causal gaps", causal_gaps(msgs, missing)),
        ("causal inversions", causal_inversions(rows, flags, pairs)),
        ("Lamport clocks", lamport_clock_violations(pairs)),
        ("order disagreements", order_disagreements(rows, flags)),
    ]
