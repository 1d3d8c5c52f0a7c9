"""The consistency checks: each a pure ``DataFrame -> DataFrame`` function.

Input is the union of every export (``schema.EXPORT``); each check returns
rows of ``schema.ANOMALY`` - a kind, where it is, a witness (a second message
and/or a second peer) and a one-line explanation built with column
functions (no Python UDFs: everything runs in the JVM).

Expressions are written as SQL text (``selectExpr``, ``where``, ``F.expr``)
rather than composed from ``Column`` objects: each ``Column`` operation is a
round trip from Python to the JVM, and building every check that way took
about 8,000 of them - on a small input, more time than running the checks.

Theory of operation: the rows are shuffled only twice.

* ``messages``: one group per (channel, message) - which peers hold it,
  how many rows it has, whether its copies differ, one copy.
  Missing and minority messages, payload conflicts, duplicates, Lamport
  clocks and gaps in an author's sequence numbers are read from these
  (rows / peers of them), not from every row.
* ``flagged``: one window over each peer's log, sorted by position, keeping
  only rows out of place (a gap, a collision, out of (lamport, id) order).
  Position and order checks read these few rows; disagreements are looked
  for only in the logs they show out of order.

Both read only one log of a channel whose peers' logs are identical (same
fingerprint, ``peers.summary``; ``one_for_all``): in a healthy conversation,
that is every channel, and the rows shuffled are one peer's, not every
peer's.

Causal checks use two facts. A peer lacks a dependency only if it lacks that
message, so causal gaps come from the (small) missing set. And in a log in
(lamport, id) order a dependency can come later only if its timestamp is not
below the message's - a Lamport clock violation - so inversions come from
those pairs, plus a full check restricted to the few logs out of order.
Every dependency is joined with the messages' timestamps once
(``dependencies``), which finds both the dependencies nobody holds and the
clock violations; only those few are kept.

Joins against every row broadcast the small side, except on tiny inputs
(``all_checks(..., broadcast=False)``): there every broadcast is a Spark job
of its own, and sort-merge joins inside the one query cost less than the
jobs' fixed cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

LOG = ["channel_id", "peer_id"]


class Sql(str):
    """A SQL expression, as opposed to text to quote."""


def _s(sql: str) -> Sql:
    return Sql(f"coalesce(cast({sql} as string), '?')")


def _short(sql: str) -> Sql:
    """Ids are long: explanations show their first 12 characters."""
    return Sql(f"substring({_s(sql)}, 1, 12)")


def _say(*parts: str) -> Sql:
    """One explanation: plain strings are quoted, ``Sql`` parts evaluated."""
    def quoted(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return Sql("concat(" + ", ".join(p if isinstance(p, Sql) else quoted(p) for p in parts) + ")")


def _agg(df, *expressions: str):
    return df.agg(*map(F.expr, expressions))


def _hinted(df: DataFrame) -> DataFrame:
    return F.broadcast(df)


def _plain(df: DataFrame) -> DataFrame:
    return df


def anomalies(df: DataFrame, kind: str, explanation: str, peer=None, message=None,
              other_message=None, other_peer=None) -> DataFrame:
    def col(sql, name):
        return f"{sql or 'CAST(NULL AS STRING)'} AS {name}"

    return df.selectExpr(
        f"'{kind}' AS kind", "channel_id", col(peer, "peer_id"), col(message, "message_id"),
        col(other_message, "other_message_id"), col(other_peer, "other_peer_id"), f"{explanation} AS explanation")


# --------------------------------------------------------------- the two passes

def channel_peers(rows: DataFrame) -> DataFrame:
    """(channel_id, all_peers): every peer that exported the channel."""
    return _agg(rows.groupBy("channel_id"), "array_sort(collect_set(peer_id)) AS all_peers")


PAYLOAD_HASH = "xxhash64(sender_id, lamport_timestamp, causal_history)"
"""A message's payload as one number: its copies differ when these do."""


def messages(rows: DataFrame, holders: bool = True) -> DataFrame:
    """One row per (channel, message): its holders, row count, whether its
    copies differ, and one copy (the one with the lowest payload hash).

    Copies are told apart by a 64-bit hash of the payload, so the
    aggregation compares numbers, not strings and arrays; which peers hold
    which version is worked out by ``payload_conflicts``, for the few
    messages whose hashes differ. Collecting the holders is most of the
    aggregation's cost: without ``holders`` (the caller knows them) the
    columns ``holders`` and ``n_holders`` are left out."""
    payloads = rows.selectExpr("channel_id", "message_id", "peer_id", "seq", f"{PAYLOAD_HASH} AS h",
                               "struct(causal_history AS history, lamport_timestamp AS lamport, sender_id AS author) "
                               "AS copy")
    found = ["count(*) AS n_rows", "min(h) != max(h) AS conflicting", "min(seq) AS seq", "min_by(copy, h) AS copy"]
    if holders:
        found.append("array_sort(collect_set(peer_id)) AS holders")
    msgs = _agg(payloads.groupBy("channel_id", "message_id"), *found).selectExpr("*", "copy.*").drop("copy")
    return msgs.selectExpr("*", "size(holders) AS n_holders") if holders else msgs


OUT_OF_ORDER = "prev_lamport > lamport_timestamp OR (prev_lamport = lamport_timestamp AND prev_id > message_id)"


def flagged(rows: DataFrame) -> DataFrame:
    """Rows out of place in their peer's log, each with its predecessor."""
    w = "OVER (PARTITION BY channel_id, peer_id ORDER BY pos, message_id)"
    with_prev = rows.selectExpr(*LOG, "pos", "message_id", "lamport_timestamp", f"lag(pos) {w} AS prev_pos",
                                f"lag(message_id) {w} AS prev_id", f"lag(lamport_timestamp) {w} AS prev_lamport")
    return (with_prev
            .selectExpr("*", "(prev_pos IS NULL AND pos != 0) OR (pos - prev_pos > 1) AS gap",
                        "pos = prev_pos AS collision", f"{OUT_OF_ORDER} AS disorder")
            .where("gap OR collision OR disorder"))


FLAGGED = [*LOG, "pos", "message_id", "lamport_timestamp", "prev_pos", "prev_id", "prev_lamport", "gap", "collision",
           "disorder"]
"""``flagged``'s columns."""


@dataclass(frozen=True)
class Agreement:
    """Channels whose peers' logs all have the same fingerprint
    (``peers.summary``), each with the peer whose log is read for all
    (``references``); ``complete``: that is every channel."""
    references: dict[str, str]
    complete: bool


def one_for_all(rows: DataFrame, peers: DataFrame, agreed: Agreement, hint=_hinted) -> tuple[DataFrame, DataFrame]:
    """``messages(rows)`` and ``flagged(rows)``, reading one log of each
    channel whose peers' logs are identical: every message of that log is
    held by every peer of the channel, as many times over, and every row it
    flags is flagged in every peer's log. The other channels are read whole.
    The shared intermediates are then exactly what reading every log gives,
    so every check after them is unchanged; but a channel of n identical
    logs costs one log's aggregation and sort, not n. An export holds one
    peer's logs, and the filter on peer ids is applied to the files' row
    groups by their statistics: only the chosen peers' files are read."""
    channels = sorted(agreed.references)
    chosen = literal_table(rows.sparkSession, [
        F.struct(F.lit(c).alias("channel_id"), F.lit(agreed.references[c]).alias("peer_id")) for c in channels])
    one = (rows.where(F.col("peer_id").isin(sorted(set(agreed.references.values()))))
           .join(hint(chosen), LOG, "left_semi"))
    msgs = messages(one, holders=False).join(hint(peers), "channel_id").selectExpr(
        "channel_id", "message_id", "n_rows * size(all_peers) AS n_rows", "conflicting", "seq", "history", "lamport",
        "author", "all_peers AS holders", "size(all_peers) AS n_holders")
    flags = flagged(one).join(hint(peers), "channel_id").selectExpr(
        "channel_id", "explode(all_peers) AS peer_id", *FLAGGED[2:])
    if not agreed.complete:
        rest = rows.where(~F.col("channel_id").isin(channels))
        msgs, flags = msgs.unionByName(messages(rest)), flags.unionByName(flagged(rest))
    return msgs, flags


def agreement(prints: dict[tuple[str, str], tuple]) -> Agreement:
    """From each log's fingerprint (``peers.collect``), keyed by (channel,
    peer): the channels whose peers' logs all agree, each read from its
    first peer's log."""
    logs: dict[str, dict[str, tuple]] = {}
    for (channel, peer), fingerprint in prints.items():
        logs.setdefault(channel, {})[peer] = fingerprint
    agreed = {channel: min(by_peer) for channel, by_peer in logs.items() if len(set(by_peer.values())) == 1}
    return Agreement(agreed, len(agreed) == len(logs))


def literal_table(spark, structs: list) -> DataFrame:
    """A small table of literal rows (``F.struct`` columns), built in the
    JVM: no executor ever starts a Python worker for it."""
    return spark.range(1).select(F.inline(F.array(*structs)))


# ------------------------------------------------------------- per message

def missing_messages(msgs: DataFrame, peers: DataFrame, hint=_hinted) -> DataFrame:
    """A peer of the channel lacks a message other peers hold."""
    lacking = (msgs.join(hint(peers), "channel_id").where("n_holders < size(all_peers)")
               .selectExpr("channel_id", "message_id", "n_holders", "size(all_peers) AS peers",
                           "holders[0] AS a_holder", "explode(array_except(all_peers, holders)) AS peer_id"))
    return anomalies(
        lacking, "missing_message",
        _say("peer ", _short("peer_id"), " lacks message ", _short("message_id"), ", which ", _s("n_holders"),
             " of ", _s("peers"), " peers hold (e.g. ", _short("a_holder"), ")"),
        peer="peer_id", message="message_id", other_peer="a_holder")


def minority_messages(msgs: DataFrame, peers: DataFrame, hint=_hinted) -> DataFrame:
    """A message that fewer than half of the channel's peers hold."""
    few = (msgs.join(hint(peers), "channel_id").where("n_holders * 2 < size(all_peers)")
           .selectExpr("*", "size(all_peers) AS peers", "holders[0] AS a_holder"))
    return anomalies(
        few, "minority_message",
        _say("message ", _short("message_id"), " is held by only ", _s("n_holders"), " of ", _s("peers"), " peers"),
        peer="a_holder", message="message_id")


def payload_conflicts(rows: DataFrame, msgs: DataFrame, hint=_hinted) -> DataFrame:
    """One message id, different sender / lamport / causal history: the
    versions with the lowest and highest hash, each with a witness peer
    (ties among a version's holders go by peer id, so the choice does not
    depend on the order rows arrive in)."""
    conflicting = hint(msgs.where("conflicting").select("channel_id", "message_id"))
    versions = rows.join(conflicting, ["channel_id", "message_id"]).selectExpr(
        "channel_id", "message_id", "peer_id", f"{PAYLOAD_HASH} AS h",
        "struct(sender_id, lamport_timestamp, causal_history AS history) AS v")
    pairs = _agg(versions.groupBy("channel_id", "message_id"), "min_by(v, h) AS a", "max_by(v, h) AS b",
                 "min(struct(h, peer_id)).peer_id AS pa", "max(struct(h, peer_id)).peer_id AS pb")
    fields = Sql("concat_ws(', ', CASE WHEN a.sender_id != b.sender_id THEN 'sender' END, "
                 "CASE WHEN a.lamport_timestamp != b.lamport_timestamp THEN 'lamport' END, "
                 "CASE WHEN NOT (a.history <=> b.history) THEN 'causal history' END)")
    return anomalies(
        pairs, "payload_conflict",
        _say("message ", _short("message_id"), ": peers ", _short("pa"), " and ", _short("pb"),
             " disagree on its ", fields),
        peer="pa", message="message_id", other_peer="pb")


def duplicate_deliveries(rows: DataFrame, msgs: DataFrame, hint=_hinted) -> DataFrame:
    """A peer delivered a message more than once (a message with more rows
    than holders; only those are looked up among the rows)."""
    twice = hint(msgs.where("n_rows > n_holders").select("channel_id", "message_id"))
    dups = _agg(rows.join(twice, ["channel_id", "message_id"]).groupBy(*LOG, "message_id"),
                "count(*) AS times", "min(pos) AS first_pos", "max(pos) AS last_pos").where("times > 1")
    return anomalies(
        dups, "duplicate_delivery",
        _say("peer ", _short("peer_id"), " delivered ", _short("message_id"), " ", _s("times"),
             " times (positions ", _s("first_pos"), " and ", _s("last_pos"), ")"),
        peer="peer_id", message="message_id")


def _deps(msgs: DataFrame) -> DataFrame:
    """(message, dependency) pairs, with the message's timestamp and holders."""
    return msgs.selectExpr("channel_id", "message_id", "lamport", "holders", "explode(history) AS dep")


def dependencies(msgs: DataFrame) -> DataFrame:
    """Every message's dependencies, each with the message it depends on and
    that one's holders, and the dependency's Lamport timestamp (null if
    nobody holds it) - one join for the checks that follow a dependency."""
    stamps = msgs.selectExpr("channel_id", "message_id AS dep", "lamport AS dep_lamport")
    return _deps(msgs).join(stamps, ["channel_id", "dep"], "left")


def odd_dependencies(deps: DataFrame) -> DataFrame:
    """The dependencies nobody holds, and those whose Lamport timestamp is
    not below their message's: few, in a healthy conversation."""
    return deps.where("dep_lamport IS NULL OR dep_lamport >= lamport")


def clock_pairs(odd: DataFrame) -> DataFrame:
    """(message, dependency) pairs whose dependency's Lamport timestamp is
    not below the message's: the author's clock did not advance."""
    return odd.where("dep_lamport IS NOT NULL").selectExpr("*", "holders[0] AS holder")


def lamport_clock_violations(pairs: DataFrame) -> DataFrame:
    return anomalies(
        pairs, "lamport_clock_violation",
        _say("message ", _short("message_id"), " (lamport ", _s("lamport"), ") depends on ", _short("dep"),
             " (lamport ", _s("dep_lamport"), ")"),
        peer="holder", message="message_id", other_message="dep")


def sequence_gaps(msgs: DataFrame) -> DataFrame:
    """An author's sequence numbers in a channel skip some: messages it sent
    that no exporting peer holds - lost everywhere, which no check comparing
    peers can see - or numbers its peer skipped. Every channel numbers each
    author's messages from 1 (the payload's ``seq``; SVS's own sequence
    number in an SVS channel). Rows without a number are left out."""
    w = "OVER (PARTITION BY channel_id, author ORDER BY seq, message_id)"
    numbered = msgs.where("seq IS NOT NULL").selectExpr(
        "channel_id", "author", "seq", "message_id", f"lag(seq) {w} AS prev_seq", f"lag(message_id) {w} AS prev_id")
    return anomalies(
        numbered.where("seq > coalesce(prev_seq, 0) + 1"), "sequence_gap",
        _say("author ", _short("author"), " skips sequence numbers ", _s("coalesce(prev_seq, 0) + 1"), "..",
             _s("seq - 1"), " (before ", _short("message_id"), "): no peer holds them"),
        message="message_id", other_message="prev_id", other_peer="author")


# ------------------------------------------------------------------ per log

def position_gaps(flags: DataFrame) -> DataFrame:
    return anomalies(
        flags.where("gap"), "position_gap",
        _say("peer ", _short("peer_id"), "'s log skips positions ", _s("coalesce(prev_pos + 1, 0)"), "..",
             _s("pos - 1"), " (before ", _short("message_id"), ")"),
        peer="peer_id", message="message_id", other_message="prev_id")


def position_collisions(flags: DataFrame) -> DataFrame:
    return anomalies(
        flags.where("collision"), "position_collision",
        _say("peer ", _short("peer_id"), " has two messages at position ", _s("pos"), ": ", _short("prev_id"),
             " and ", _short("message_id")),
        peer="peer_id", message="prev_id", other_message="message_id")


def lamport_order_violations(flags: DataFrame) -> DataFrame:
    """Along each log, (lamport, message_id) must increase."""
    return anomalies(
        flags.where("disorder"), "lamport_order_violation",
        _say("peer ", _short("peer_id"), " has ", _short("prev_id"), " (lamport ", _s("prev_lamport"), ") before ",
             _short("message_id"), " (lamport ", _s("lamport_timestamp"), ")"),
        peer="peer_id", message="message_id", other_message="prev_id")


def order_disagreements(rows: DataFrame, flags: DataFrame, hint=_hinted) -> DataFrame:
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
        return anomalies(rows.limit(0).select("channel_id"), "order_disagreement", "''")
    walked = rows.join(hint(disordered), LOG).selectExpr(
        "channel_id", "peer_id AS p", "message_id", "pos AS pos_p")
    others = rows.selectExpr("channel_id", "peer_id AS q", "message_id", "pos AS pos_q")
    w = "OVER (PARTITION BY channel_id, p, q ORDER BY pos_p, message_id)"
    walks = (walked.join(others, ["channel_id", "message_id"]).where("q != p")
             .selectExpr("*", f"lag(message_id) {w} AS a", f"lag(pos_q) {w} AS pos_q_of_a"))
    witnessed = _agg(walks.where("pos_q_of_a > pos_q").selectExpr("channel_id", "p", "a", "message_id AS b", "q")
                     .groupBy("channel_id", "p", "a", "b"), "min(q) AS q")
    return anomalies(
        witnessed, "order_disagreement",
        _say("peer ", _short("p"), " has ", _short("a"), " before ", _short("b"), ", peer ", _short("q"), " has ",
             _short("b"), " before ", _short("a")),
        peer="p", message="a", other_message="b", other_peer="q")


# ------------------------------------------------------------------- causal

def causal_gaps(msgs: DataFrame, odd: DataFrame, missing: DataFrame, hint=_hinted) -> DataFrame:
    """A peer delivered a message but never one of its dependencies: either
    nobody holds the dependency, or this peer is missing it."""
    unheld = (odd.where("dep_lamport IS NULL")
              .selectExpr("channel_id", "message_id", "dep", "explode(holders) AS peer_id"))
    deps = _deps(msgs)
    lacked = hint(missing.selectExpr("channel_id", "peer_id", "message_id AS dep"))
    lacking = (deps.join(lacked, ["channel_id", "dep"]).where("array_contains(holders, peer_id)")
               .select("channel_id", "message_id", "dep", "peer_id"))
    return anomalies(
        unheld.unionByName(lacking), "causal_gap",
        _say("peer ", _short("peer_id"), " delivered ", _short("message_id"), " but never its dependency ",
             _short("dep")),
        peer="peer_id", message="message_id", other_message="dep")


def causal_inversions(rows: DataFrame, flags: DataFrame, pairs: DataFrame, hint=_hinted) -> DataFrame:
    """A peer has a message before one of its dependencies."""
    suspicious = hint(flags.where("disorder OR collision").select(*LOG).distinct())
    # logs out of (lamport, id) order: check every dependency
    odd = rows.join(suspicious, LOG).select(*LOG, "message_id", "pos", "causal_history")
    deps = odd.selectExpr(*LOG, "message_id", "pos", "explode(causal_history) AS dep")
    own = odd.selectExpr(*LOG, "message_id AS dep", "pos AS dep_pos")
    in_odd = deps.join(own, [*LOG, "dep"]).where("dep_pos > pos")
    # ordered logs: a later dependency must be a clock violation sorting after its message
    late = hint(pairs.where("dep_lamport > lamport OR (dep_lamport = lamport AND dep > message_id)")
                       .select("channel_id", "message_id", "dep"))
    at_m = rows.select(*LOG, "message_id", "pos").join(late, ["channel_id", "message_id"])
    at_d = rows.selectExpr(*LOG, "message_id AS dep", "pos AS dep_pos")
    in_ordered = (at_d.join(hint(at_m), [*LOG, "dep"]).join(suspicious, LOG, "left_anti")
                  .where("dep_pos > pos"))
    both = in_odd.unionByName(in_ordered.select(in_odd.columns))
    return anomalies(
        both, "causal_inversion",
        _say("peer ", _short("peer_id"), " has ", _short("message_id"), " at ", _s("pos"),
             " before its dependency ", _short("dep"), " at ", _s("dep_pos")),
        peer="peer_id", message="message_id", other_message="dep")


def about_checks(rows: DataFrame, msgs: DataFrame) -> DataFrame:
    """A reply, reaction, edit or deletion naming a message that no peer
    holds in the channel, an edit or deletion of another author's message,
    or an edit of a file message, whose text is its offer (the message it
    names is the witness). Such a message changes nothing where it is shown;
    here it is reported. Replies, reactions and deletions of a file message
    are as good as of any other. Only the rows that name a message are read,
    once per message (its lowest peer's copy), and the file messages' ids."""
    notes = _agg(rows.where("about IS NOT NULL").groupBy("channel_id", "message_id"),
                 "min(struct(peer_id, sender_id, kind, about)) AS n").selectExpr("channel_id", "message_id", "n.*")
    targets = msgs.selectExpr("channel_id", "message_id AS about", "author AS target_author")
    offers = rows.where("kind = 'file'").selectExpr("channel_id", "message_id AS about", "true AS offer").distinct()
    bad = notes.join(targets, ["channel_id", "about"], "left").join(offers, ["channel_id", "about"], "left").where(
        "target_author IS NULL OR (kind IN ('edit', 'delete') AND target_author != sender_id) "
        "OR (kind = 'edit' AND offer IS NOT NULL)")
    return anomalies(
        bad, "bad_about",
        _say("the ", _s("kind"), " ", _short("message_id"), Sql(
            "CASE WHEN target_author IS NULL THEN ' names a message no peer holds: ' "
            "WHEN target_author != sender_id THEN ' is by someone other than the author of ' "
            "ELSE ' edits the offer of the file message ' END"), _short("about")),
        peer="peer_id", message="message_id", other_message="about",
        other_peer="target_author")


def all_checks(rows: DataFrame, peers: DataFrame | None = None, persist=lambda df: df,
               broadcast: bool = True, agreed: Agreement | None = None) -> list[tuple[str, DataFrame]]:
    """Every check, in report order: (name, anomalies). ``peers`` is
    ``channel_peers(rows)`` when the caller already knows it (then it need
    not be computed again); ``persist`` caches the shared intermediate
    results (the caller owns the storage level); ``broadcast`` hints that
    the small side of each join be broadcast (off: Spark plans the joins
    itself, as sort-merge joins when broadcasting is switched off).
    ``agreed``: the channels whose logs are identical, each read from one
    of them (``one_for_all``)."""
    hint = _hinted if broadcast else _plain
    peers = persist(channel_peers(rows)) if peers is None else peers
    if agreed is None or not agreed.references:
        msgs, flags = messages(rows), flagged(rows)
    else:
        msgs, flags = one_for_all(rows, peers, agreed, hint)
    msgs, flags = persist(msgs), persist(flags)
    missing = persist(missing_messages(msgs, peers, hint))
    odd = persist(odd_dependencies(dependencies(msgs)))
    pairs = clock_pairs(odd)
    return [
        ("missing messages", missing),
        ("minority messages", minority_messages(msgs, peers, hint)),
        ("duplicate deliveries", duplicate_deliveries(rows, msgs, hint)),
        ("position gaps", position_gaps(flags)),
        ("position collisions", position_collisions(flags)),
        ("payload conflicts", payload_conflicts(rows, msgs, hint)),
        ("Lamport order", lamport_order_violations(flags)),
        ("causal gaps", causal_gaps(msgs, odd, missing, hint)),
        ("causal inversions", causal_inversions(rows, flags, pairs, hint)),
        ("Lamport clocks", lamport_clock_violations(pairs)),
        ("sequence gaps", sequence_gaps(msgs)),
        ("order disagreements", order_disagreements(rows, flags, hint)),
        ("replies, reactions, edits, deletions", about_checks(rows, msgs)),
    ]
