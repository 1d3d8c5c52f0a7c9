"""The two peers' logs around an order disagreement, for the HTML report.

Two small Spark jobs, only when a page is asked for and peers disagree: the
positions of the witness messages in both logs, then the rows a few
positions either side. Never more than ``PICTURES * 2 * (2 * RADIUS + span)``
rows reach the driver, where span is how far apart the two messages are
(capped at ``MAX_SPAN``).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

PICTURES = 3  # order disagreements drawn
RADIUS = 3  # neighbours shown either side of the witness
MAX_SPAN = 12  # a witness further apart is shown around its first message only


def _any(conditions):
    return reduce(lambda a, b: a | b, conditions)


def order_contexts(rows: DataFrame, examples: list[dict]) -> list[tuple[dict, dict[str, list[dict]]]]:
    """[(example, {peer: [row, ...] in log order})] for the first few witnesses."""
    chosen = [e for e in examples if e.get("other_peer_id") and e.get("other_message_id")][:PICTURES]
    if not chosen:
        return []
    wanted = [(e["channel_id"], peer, m) for e in chosen for peer in (e["peer_id"], e["other_peer_id"])
              for m in (e["message_id"], e["other_message_id"])]
    found = rows.where(_any([(F.col("channel_id") == c) & (F.col("peer_id") == p) & (F.col("message_id") == m)
                             for c, p, m in wanted]))
    pos = {(r["channel_id"], r["peer_id"], r["message_id"]): r["pos"]
           for r in found.select("channel_id", "peer_id", "message_id", "pos").collect()}
    spans: list[dict[str, tuple[int, int]]] = []  # per example: peer -> (first, last) position shown
    for e in chosen:
        shown = {}
        for peer in (e["peer_id"], e["other_peer_id"]):
            keys = ((e["channel_id"], peer, e["message_id"]), (e["channel_id"], peer, e["other_message_id"]))
            at = [pos[k] for k in keys if k in pos]
            if at:
                shown[peer] = (min(at) - RADIUS, min(max(at), min(at) + MAX_SPAN) + RADIUS)
        spans.append(shown)
    windows = [(e["channel_id"], peer, lo, hi) for e, shown in zip(chosen, spans, strict=True)
               for peer, (lo, hi) in shown.items()]
    if not windows:
        return [(e, {}) for e in chosen]
    near = rows.where(_any([(F.col("channel_id") == c) & (F.col("peer_id") == p) & F.col("pos").between(lo, hi)
                            for c, p, lo, hi in windows]))
    got = near.select("channel_id", "peer_id", "pos", "message_id", "content").collect()
    pictures = []
    for e, shown in zip(chosen, spans, strict=True):
        logs = {peer: sorted((r.asDict() for r in got if r["channel_id"] == e["channel_id"] and r["peer_id"] == peer
                              and lo <= r["pos"] <= hi), key=lambda r: (r["pos"], r["message_id"]))
                for peer, (lo, hi) in shown.items()}
        pictures.append((e, logs))
    return pictures
