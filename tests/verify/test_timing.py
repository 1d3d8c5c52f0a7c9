"""Delivery timing per peer: send-to-delivery delay and the wait for
history, as approximate percentiles computed in Spark."""

import pytest

from chat_app.verify.job import check
from chat_app.verify.schema import EXPORT

pytestmark = pytest.mark.slow  # a local Spark

SENT = 1_700_000_000_000


def conversation(n=1_000):
    """alice writes n messages; bob receives message i after i ms and
    delivers it i // 10 ms later (it waited for its history); alice's own
    copies are delivered at once and must not count."""
    rows = []
    for i in range(1, n + 1):
        mid = f"m{i:05d}"
        base = {"channel_id": "general", "pos": i - 1, "message_id": mid, "sender_id": "alice",
                "lamport_timestamp": SENT + 1_000 * i, "causal_history": [f"m{i - 1:05d}"] if i > 1 else [],
                "content": f"message {i}"}
        sent = base["lamport_timestamp"]
        rows.append({**base, "peer_id": "alice", "received_at_ms": sent, "delivered_at_ms": sent})
        rows.append({**base, "peer_id": "bob", "received_at_ms": sent + i, "delivered_at_ms": sent + i + i // 10})
    return rows


def test_percentiles_of_delay_and_wait_per_peer(spark):
    report = check(spark, spark.createDataFrame(conversation(), EXPORT))
    alice, bob = report["peers"]
    assert alice["peer_id"] == "alice" and alice["timed"] == 0 and alice["delay_ms"] is None
    assert bob["timed"] == 1_000
    # delay of message i is i + i // 10: p50 of 1..1000 is 500 -> 550
    assert bob["delay_ms"] == {"p50": 550, "p90": 990, "p99": 1089, "max": 1100}
    assert bob["wait_ms"] == {"p50": 50, "p90": 90, "p99": 99, "max": 100}


def test_rows_without_timing_count_but_are_not_timed(spark):
    rows = conversation(10)
    for row in rows:
        if row["peer_id"] == "bob" and row["pos"] % 2:
            row["delivered_at_ms"] = None
    report = check(spark, spark.createDataFrame(rows, EXPORT))
    bob = report["peers"][1]
    assert bob["rows"] == 10 and bob["timed"] == 5
    assert bob["delay_ms"]["max"] == 9 and report["verdict"] == "consistent"  # message 9: 9 + 0


def test_simulated_conversation_matches_exact_percentiles(spark, tampered_exports):
    """On the simulator's exports the approximate percentiles agree with
    exact ones computed here from the same rows."""
    import pyarrow.parquet as pq

    out, _ = tampered_exports
    table = pq.read_table(out)
    report = check(spark, spark.createDataFrame(table.to_pylist(), EXPORT))
    for peer in report["peers"]:
        delays = sorted(r["delivered_at_ms"] - r["lamport_timestamp"] for r in table.to_pylist()
                        if r["peer_id"] == peer["peer_id"] and r["sender_id"] != peer["peer_id"])
        assert peer["timed"] == len(delays) > 0
        for q in (50, 90, 99):
            exact = delays[min(len(delays) - 1, max(0, -(-q * len(delays) // 100) - 1))]
            assert peer["delay_ms"][f"p{q}"] == exact
        assert peer["delay_ms"]["max"] == delays[-1] and delays[-1] > 0
