"""Replies, reactions, edits and deletions: their payloads, what they derive, how the store finds them."""

import random
from dataclasses import dataclass

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app import commands as cmd
from chat_app.annotations import DELETED, derive, refusal
from chat_app.payload import Payload, PayloadError
from chat_app.store import Store, StoredMessage

PARENT = "ab" * 16
DM_PARENT = "cd" * 32
ALICE, BOB, CAROL = "a" * 64, "b" * 64, "c" * 64


# ------------------------------------------------------------------ payloads


@pytest.mark.parametrize("payload", [
    Payload("reply", "bob", "me too\nand more", 2, 5, PARENT),
    Payload("react", "bob", "👍", 2, 5, PARENT),
    Payload("react", "bob", "+1", 2, 5, DM_PARENT),
    Payload("edit", "alice", "fixed", 3, 5, PARENT),
    Payload("delete", "alice", "", 4, 5, PARENT),
])
def test_kinds_about_a_message_round_trip_with_it(payload):
    assert Payload.decode(payload.encode()) == payload
    assert cbor2.loads(payload.encode())["about"] == payload.about


def _raw(**fields):
    """A reaction to PARENT, with ``fields`` changed (None: left out)."""
    data = {"kind": "react", "nick": "bob", "text": "👍", "seq": 1, "sent_at": 0, "about": PARENT} | fields
    return cbor2.dumps({k: v for k, v in data.items() if v is not None})


@pytest.mark.parametrize("content, reason", [
    (_raw(about=None), "needs the id of the message"),
    (_raw(about=PARENT.upper()), "lowercase hex"),
    (_raw(about=PARENT[:-1]), "32 or 64 digits"),
    (_raw(about=PARENT + "0"), "32 or 64 digits"),
    (_raw(about="zz" * 16), "lowercase hex"),
    (_raw(about=b"\xab" * 16), "'about' is not a str"),
    (_raw(kind="text", about=PARENT), "about no other message"),
    (_raw(text="two words"), "reaction cannot hold a space"),
    (_raw(text="x\x1b[2J"), "control character"),
    (_raw(text="x" * 17), "1 to 16 characters"),
    (_raw(text=""), "needs text"),
    (_raw(kind="edit", text="", about=PARENT), "needs text"),
    (_raw(kind="reply", text="a\x07", about=PARENT), "control character"),
    (_raw(kind="delete", text="why", about=PARENT), "carries no text"),
])
def test_a_bad_annotation_from_the_network_is_refused_with_a_reason(content, reason):
    with pytest.raises(PayloadError, match=reason):
        Payload.decode(content)


# ---------------------------------------------------------------- derivation


@dataclass(frozen=True)
class M:
    message_id: str
    lamport: int
    sender_id: str
    kind: str | None
    text: str | None


TARGET = M(PARENT, 1, ALICE, "text", "helo")


def _note(i, sender, kind, text=""):
    return M(f"{i:032x}", 10 + i, sender, kind, text)


def test_edits_from_the_author_win_in_log_order_and_others_are_refused():
    notes = [_note(1, ALICE, "edit", "hello"), _note(2, BOB, "edit", "pwned"), _note(3, ALICE, "edit", "hello!")]
    derived, refused = derive(TARGET, notes)
    assert (derived.text, derived.edited) == ("hello!", True)
    assert refused == [notes[1]]


def test_a_deletion_by_the_author_stays_and_hides_reactions_but_not_by_someone_else():
    derived, refused = derive(TARGET, [_note(1, BOB, "delete"), _note(2, BOB, "react", "👍")])
    assert (derived.text, derived.deleted, derived.reactions) == ("helo", False, (("👍", 1),))
    assert len(refused) == 1
    notes = [_note(1, ALICE, "delete"), _note(2, ALICE, "edit", "back"), _note(3, BOB, "react", "+1")]
    derived, _ = derive(TARGET, notes)
    assert (derived.text, derived.deleted, derived.reactions) == (DELETED, True, ())


def test_reactions_count_one_per_person_and_emoji_and_a_second_takes_it_back():
    notes = [_note(1, ALICE, "react", "👍"), _note(2, BOB, "react", "👍"), _note(3, BOB, "react", "+1"),
             _note(4, CAROL, "react", "+1"), _note(5, CAROL, "react", "+1"), _note(6, CAROL, "react", "👍")]
    derived, refused = derive(TARGET, notes)
    assert derived.reactions == (("👍", 3), ("+1", 1)) and not refused
    assert derived.reaction_line == "👍 3  +1 1"


def test_nothing_changes_a_missing_message_or_one_that_is_not_a_line():
    assert refusal(None, _note(1, ALICE, "react", "👍")) == "it is about a message not in the log"
    assert "cannot take one" in refusal(_note(9, ALICE, "react", "x"), _note(1, ALICE, "react", "👍"))


def test_a_file_message_takes_reactions_and_its_author_s_deletion_but_no_edit():
    offer = M(PARENT, 1, ALICE, "file", "notes.txt\nsds-file 5 4096 " + "1" * 64 + " " + "2" * 64 + " text/plain")
    notes = [_note(1, BOB, "react", "👍"), _note(2, ALICE, "edit", "other.txt"), _note(3, CAROL, "react", "👍")]
    derived, refused = derive(offer, notes)
    assert (derived.text, derived.edited, derived.reactions) == (offer.text, False, (("👍", 2),))
    assert refused == [notes[1]]
    assert refusal(offer, notes[1]) == "an edit of a file message, which cannot take one"
    assert refusal(offer, _note(4, BOB, "reply", "thanks")) is None
    derived, refused = derive(offer, [*notes, _note(5, ALICE, "delete")])
    assert (derived.text, derived.deleted) == (DELETED, True)


_notes = st.lists(st.tuples(st.sampled_from([ALICE, BOB, CAROL]), st.sampled_from(["edit", "delete", "react"]),
                            st.sampled_from(["a", "b", "👍", "+1"])), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_notes, st.randoms())
def test_the_order_of_arrival_never_changes_what_a_message_becomes(notes, rnd):
    log = [_note(i, sender, kind, "" if kind == "delete" else text) for i, (sender, kind, text) in enumerate(notes)]
    arrived = log[:]
    rnd.shuffle(arrived)
    assert derive(TARGET, arrived) == derive(TARGET, log)
    edits = [n.text for n in log if n.kind == "edit" and n.sender_id == ALICE]
    deleted = any(n.kind == "delete" and n.sender_id == ALICE for n in log)
    if not deleted and edits:  # the last edit in log order, wherever it arrived
        assert derive(TARGET, arrived)[0].text == edits[-1]


# --------------------------------------------------------------------- store


def _row(mid, lamport, sender, kind, text, about=None):
    return StoredMessage("general", mid, lamport, sender, "nick", kind, text, lamport, 0, b"wire", 0, 0,
                         sender == ALICE, about=about)


def test_the_store_finds_what_is_about_a_message_by_index_on_a_real_file(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    rows = [_row(PARENT, 1, ALICE, "text", "helo")]
    rows += [_row(f"{i:032x}", i + 2, BOB, "text", f"noise {i}") for i in range(50)]
    rows += [_row("e" * 32, 100, ALICE, "edit", "hello", PARENT), _row("f" * 32, 90, BOB, "react", "👍", PARENT)]
    random.Random(1).shuffle(rows)
    store.commit_step("general", None, rows, 0)
    store.close()
    store = Store(tmp_path / "db.sqlite3")  # read back from the file
    about = store.about("general", [PARENT])
    assert [(m.kind, m.about) for m in about] == [("react", PARENT), ("edit", PARENT)]  # log order
    plan = " ".join(r[-1] for r in store._conn.execute(
        "EXPLAIN QUERY PLAN SELECT message_id FROM messages WHERE channel = ? AND about IN (?) "
        "ORDER BY lamport, message_id", ("general", PARENT)))
    assert "messages_about" in plan and "SCAN messages" not in plan
    assert store.message("general", PARENT).text == "helo"
    assert store.shown_back("general", 1).text == "noise 49"  # the edit and the reaction are not lines
    assert store.shown_back("general", 51).message_id == PARENT and store.shown_back("general", 52) is None
    assert derive(store.message("general", PARENT), about)[0].text == "hello"


# ------------------------------------------------------------------ commands


@pytest.mark.parametrize("line, value", [
    ("/reply 1 me too", cmd.Reply("1", "me too")),
    ("/react -2 👍", cmd.React("-2", "👍")),
    (f"/edit {PARENT} better", cmd.Edit(PARENT, "better")),
    ("/delete -1", cmd.Delete("-1")),
])
def test_commands_about_a_message_parse_on_both_surfaces_and_back(line, value):
    for surface in cmd.BOTH:
        assert cmd.parse(line, surface) == value
    assert cmd.parse(value.line, "tui") == value
    assert value.back in (1, 2, None)


@pytest.mark.parametrize("line", ["/reply 0 hi", "/reply x hi", "/react 1", "/edit 1", f"/edit {PARENT[:-2]} x"])
def test_commands_about_a_message_say_what_they_need(line):
    assert isinstance(cmd.parse(line, "headless"), cmd.Invalid)
