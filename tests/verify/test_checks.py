"""Each anomaly kind, injected into clean exports, is reported with its
witness; clean exports report nothing."""

import json

import pytest

from chat_app.verify.job import check
from chat_app.verify.schema import EXPORT

pytestmark = pytest.mark.slow  # a local Spark


def verify(spark, logs) -> dict:
    """The report, which must not depend on the plan chosen for the input's size."""
    rows = spark.createDataFrame([row for log in logs.values() for row in log], EXPORT)
    report = check(spark, rows)
    assert check(spark, rows, tiny=True) == report, "tiny inputs' plan (no broadcasts, no caches) disagrees"
    return report


def renumber(log):
    for pos, row in enumerate(log):
        row["pos"] = pos
    return log


def examples(report, kind):
    assert kind in report["anomalies"], f"{kind} not reported: {json.dumps(report['anomalies'])[:500]}"
    return report["anomalies"][kind]["examples"]


def ids(logs, peer):
    return [r["message_id"] for r in logs[peer]]


def test_clean_exports_report_nothing(spark, logs):
    report = verify(spark, logs)
    assert report["verdict"] == "consistent" and report["anomalies"] == {}
    assert report["rows"] == 60 and [p["rows"] for p in report["peers"]] == [20, 20, 20]


def test_missing_message(spark, logs):
    a, b, _ = logs
    gone = logs[b].pop(7)
    renumber(logs[b])
    report = verify(spark, logs)
    (example,) = examples(report, "missing_message")
    assert (example["peer_id"], example["message_id"]) == (b, gone["message_id"])
    assert example["other_peer_id"] in (a, "peer002") and "which 2 of 3 peers hold" in example["explanation"]
    assert "minority_message" not in report["anomalies"]


def test_minority_message(spark, logs):
    a, b, c = logs
    gone = logs[b].pop(3)["message_id"]
    logs[c].pop(3)
    renumber(logs[b]), renumber(logs[c])
    report = verify(spark, logs)
    (example,) = examples(report, "minority_message")
    assert example["message_id"] == gone and example["peer_id"] == a
    assert "held by only 1 of 3 peers" in example["explanation"]
    assert report["anomalies"]["missing_message"]["count"] == 2


def test_duplicate_delivery(spark, logs):
    _, b, _ = logs
    logs[b].append(dict(logs[b][4], pos=20))
    (example,) = examples(verify(spark, logs), "duplicate_delivery")
    assert (example["peer_id"], example["message_id"]) == (b, logs[b][4]["message_id"])
    assert "2 times (positions 4 and 20)" in example["explanation"]


def test_position_gap(spark, logs):
    _, b, _ = logs
    for row in logs[b][6:]:
        row["pos"] += 1
    (example,) = examples(verify(spark, logs), "position_gap")
    assert example["peer_id"] == b and "skips positions 6..6" in example["explanation"]
    assert example["message_id"] == logs[b][6]["message_id"]


def test_position_collision(spark, logs):
    _, b, _ = logs
    logs[b][6]["pos"] = 5
    (example,) = examples(verify(spark, logs), "position_collision")
    assert example["peer_id"] == b and "two messages at position 5" in example["explanation"]
    assert {example["message_id"], example["other_message_id"]} == {logs[b][5]["message_id"], logs[b][6]["message_id"]}


def test_payload_conflict(spark, logs):
    _, _, c = logs
    logs[c][9]["causal_history"] = ["somebody-else"]
    (example,) = examples(verify(spark, logs), "payload_conflict")
    assert example["message_id"] == logs[c][9]["message_id"]
    assert c in (example["peer_id"], example["other_peer_id"])
    assert "disagree on its causal history" in example["explanation"]


def test_order_disagreement_with_a_two_message_witness(spark, logs):
    a, b, _ = logs
    log = logs[b]
    log[10], log[11] = log[11], log[10]
    renumber(log)
    report = verify(spark, logs)
    (example,) = examples(report, "order_disagreement")
    first, second = log[10]["message_id"], log[11]["message_id"]  # b's (wrong) order
    assert (example["peer_id"], example["message_id"], example["other_message_id"]) == (b, first, second)
    assert example["other_peer_id"] == a
    assert example["explanation"] == (f"peer {b[:12]} has {first[:12]} before {second[:12]}, "
                                      f"peer {a[:12]} has {second[:12]} before {first[:12]}")
    assert examples(report, "lamport_order_violation")[0]["peer_id"] == b


def test_order_disagreement_across_a_message_only_one_peer_holds(spark, logs):
    """b swaps two messages and has a third, that no other peer holds, between
    them: no two *neighbours* of b's log are held in the other order
    anywhere, yet b disagrees with everyone on the first two."""
    a, b, c = logs
    log = logs[b]
    first, second = log[10], log[11]
    stray = dict(second, message_id="held-only-by-b", causal_history=[])
    log[10:12] = [second, stray, first]
    renumber(log)
    found = {(e["peer_id"], e["message_id"], e["other_message_id"], e["other_peer_id"])
             for e in examples(verify(spark, logs), "order_disagreement")}
    assert found == {(b, second["message_id"], first["message_id"], a)}


def test_lamport_order_violation_that_every_peer_shares(spark, logs):
    """All peers agree, so no disagreement - but the order breaks (lamport, id)."""
    for log in logs.values():
        log[10], log[11] = log[11], log[10]
        renumber(log)
    report = verify(spark, logs)
    assert report["anomalies"]["lamport_order_violation"]["count"] == 3
    assert "order_disagreement" not in report["anomalies"]


def test_causal_gap(spark, logs):
    _, b, _ = logs
    dependent = next(r for r in logs[b] if r["causal_history"] and r["pos"] > 5)
    dep = dependent["causal_history"][-1]
    logs[b] = renumber([r for r in logs[b] if r["message_id"] != dep])
    found = [e for e in examples(verify(spark, logs), "causal_gap") if e["message_id"] == dependent["message_id"]]
    assert found and found[0]["peer_id"] == b and found[0]["other_message_id"] == dep


def test_causal_inversion(spark, logs):
    _, b, _ = logs
    log = logs[b]
    index = next(i for i, r in enumerate(log) if i > 5 and log[i - 1]["message_id"] in r["causal_history"])
    log[index - 1], log[index] = log[index], log[index - 1]
    renumber(log)
    (example,) = [e for e in examples(verify(spark, logs), "causal_inversion")]
    assert (example["peer_id"], example["message_id"], example["other_message_id"]) == (
        b, log[index - 1]["message_id"], log[index]["message_id"])


def test_lamport_clock_violation(spark, logs):
    victim = next(r for r in logs["peer000"] if r["causal_history"] and r["pos"] > 5)
    dep = victim["causal_history"][0]
    dep_lamport = next(r["lamport_timestamp"] for r in logs["peer000"] if r["message_id"] == dep)
    for log in logs.values():
        for row in log:
            if row["message_id"] == victim["message_id"]:
                row["lamport_timestamp"] = dep_lamport  # not above its dependency
    found = [e for e in examples(verify(spark, logs), "lamport_clock_violation") if e["other_message_id"] == dep]
    assert found and found[0]["message_id"] == victim["message_id"]


def test_sequence_gap_a_message_every_peer_lost(spark, logs):
    rows = logs["peer000"]
    by_author = {}
    for r in rows:
        by_author.setdefault(r["sender_id"], []).append(r)
    author, theirs = next((a, sorted(rs, key=lambda r: r["seq"])) for a, rs in by_author.items() if len(rs) >= 3)
    lost, after = theirs[1], theirs[2]
    for peer, log in logs.items():
        logs[peer] = renumber([r for r in log if r["message_id"] != lost["message_id"]])
    report = verify(spark, logs)
    assert "missing_message" not in report["anomalies"]  # nobody holds it: comparing peers cannot see it
    [gap] = examples(report, "sequence_gap")
    assert (gap["message_id"], gap["other_message_id"], gap["other_peer_id"]) == \
        (after["message_id"], theirs[0]["message_id"], author)
    assert f"skips sequence numbers {lost['seq']}..{lost['seq']}" in gap["explanation"]


def test_exports_without_sequence_numbers_are_checked_as_before(spark, logs):
    for log in logs.values():
        for row in log:
            row["seq"] = None
    assert verify(spark, logs)["verdict"] == "consistent"


# A channel whose logs are identical on every peer is checked from one of
# them (``one_for_all``; ``verify`` above compares that plan with the one that
# reads every log): what it finds must be found in every peer's log.

def test_a_duplicate_every_peer_shares_is_found_in_every_log(spark, logs):
    for log in logs.values():
        log.append(dict(log[4], pos=20))
    found = examples(verify(spark, logs), "duplicate_delivery")
    assert sorted(e["peer_id"] for e in found) == sorted(logs)
    assert {e["message_id"] for e in found} == {logs["peer000"][4]["message_id"]}


def test_channels_whose_logs_agree_and_one_whose_logs_do_not(spark, logs):
    """Two more channels, copies of the first: in one every peer shares the
    same position gap, in the other one peer lacks a message."""
    a, b, _ = logs
    for peer, log in logs.items():
        gapped = [dict(r, channel_id="gapped", pos=r["pos"] + (r["pos"] >= 6)) for r in log]
        lacking = [dict(r, channel_id="lacking") for r in log if not (peer == b and r["pos"] == 7)]
        log.extend(gapped + renumber(lacking))
    report = verify(spark, logs)
    gaps = examples(report, "position_gap")
    assert sorted(e["peer_id"] for e in gaps) == sorted(logs) and {e["channel_id"] for e in gaps} == {"gapped"}
    (missing,) = examples(report, "missing_message")
    assert (missing["channel_id"], missing["peer_id"]) == ("lacking", b)
    found = {(kind, e["channel_id"]) for kind, v in report["anomalies"].items() for e in v["examples"]}
    assert {kind for kind, channel in found if channel == "gapped"} == {"position_gap"}
    assert {channel for _, channel in found} == {"gapped", "lacking"}  # the first channel is clean


def test_agreement_reads_one_log_of_each_channel_whose_logs_all_agree():
    from chat_app.verify.checks import agreement

    same, other = (3, 1, 2, 3, 4), (3, 1, 2, 3, 5)
    prints = {("a", "p2"): same, ("a", "p1"): same, ("b", "p1"): same, ("b", "p2"): other, ("c", "p3"): other}
    agreed = agreement(prints)
    assert agreed.references == {"a": "p1", "c": "p3"} and not agreed.complete
    assert agreement({("a", "p1"): same, ("a", "p2"): same}).complete
