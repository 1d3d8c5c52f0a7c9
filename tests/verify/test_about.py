"""``verify`` on replies, reactions, edits and deletions: each names a message
the log holds, and an edit or deletion comes from that message's author."""

import pytest

from .test_checks import examples, verify

pytestmark = pytest.mark.slow  # a local Spark


def _annotate(logs, index, kind, about):
    """Make message ``index`` a ``kind`` about ``about`` in every peer's log alike."""
    for log in logs.values():
        log[index]["kind"], log[index]["about"] = kind, about


def _by_other_and_same_author(log):
    """(index of a message, index of a later one by another author, one by the same author)."""
    first = log[2]
    other = next(i for i, r in enumerate(log) if i > 2 and r["sender_id"] != first["sender_id"])
    same = next(i for i, r in enumerate(log) if i > 2 and r["sender_id"] == first["sender_id"])
    return 2, other, same


def test_replies_reactions_and_the_authors_edits_are_consistent(spark, logs):
    log = next(iter(logs.values()))
    target, other, same = _by_other_and_same_author(log)
    about = log[target]["message_id"]
    _annotate(logs, other, "react", about)
    _annotate(logs, same, "edit", about)
    report = verify(spark, logs)
    assert report["verdict"] == "consistent" and report["anomalies"] == {}


def test_an_edit_by_someone_else_and_a_reaction_to_nothing_are_reported_with_a_witness(spark, logs):
    a = next(iter(logs))
    log = logs[a]
    target, other, same = _by_other_and_same_author(log)
    about = log[target]["message_id"]
    _annotate(logs, other, "delete", about)
    _annotate(logs, same, "react", "f" * 32)
    found = {e["message_id"]: e for e in examples(verify(spark, logs), "bad_about")}
    assert set(found) == {log[other]["message_id"], log[same]["message_id"]}
    forged = found[log[other]["message_id"]]
    assert forged["other_message_id"] == about and forged["other_peer_id"] == log[target]["sender_id"]
    assert "is by someone other than the author of" in forged["explanation"]
    assert "names a message no peer holds" in found[log[same]["message_id"]]["explanation"]


def test_a_file_message_takes_replies_reactions_and_its_author_s_deletion_and_an_edit_is_reported(spark, logs):
    log = next(iter(logs.values()))
    target, other, same = _by_other_and_same_author(log)
    about = log[target]["message_id"]
    for peer_log in logs.values():
        peer_log[target]["kind"] = "file"
    _annotate(logs, other, "react", about)
    _annotate(logs, next(i for i in range(3, len(log)) if i not in (other, same)), "reply", about)
    _annotate(logs, same, "delete", about)
    assert verify(spark, logs)["anomalies"] == {}
    _annotate(logs, same, "edit", about)  # the author's own: still no edit of an offer
    found = examples(verify(spark, logs), "bad_about")
    assert [(e["message_id"], e["other_message_id"]) for e in found] == [(log[same]["message_id"], about)]
    assert "edits the offer of the file message" in found[0]["explanation"]
