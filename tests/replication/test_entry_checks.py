"""The replication engine asks what an arrived entry is (``EntryArrived``:
the session's channels and an entry; answered with ``entry_checked``: the
entry's channel, author and sequence number, or a refusal). Two checks
answer: the runtime's (``CatchUp.check``: a signed envelope holding an SDS
chat message) and the toy one of the engine's own tests
(``channel|author|seq``).

They must differ in what an entry is, and only there. The engine's tests and
the conformance suite need entries whose author and sequence number a toy store
can read without keys, protobuf or SQLite (heights, holes and thousands of
mutated inputs per run), and ``sync`` knows nothing of envelopes. A real entry's
author is a key's hash and its sequence number sits in CBOR inside the SDS
content inside a signature. What the engine relies on is the contract, so the
contract is checked here, through a real ``Connection``, for both checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from chat_app.runtime import Runtime
from chat_app.runtime.catchup import CatchUp
from chat_app.store import Store
from sync.replication import EntryKey, EntryReceived, ReplicationError, encode, log_id
from sync.replication import messages as m
from tests.replication.checking import Check as Validate, Checking, checking
from tests.replication.test_replication import validate_toy_entry

T = 1_767_225_600_000


@dataclass
class Check:
    validate: Validate
    author: str  # who wrote the entries
    general: bytes  # a valid entry of channel "general", the author's first
    random: bytes  # a valid entry of channel "random"
    garbage: bytes


def _real_check(tmp_path) -> tuple[Check, Runtime]:
    """Entries as a real runtime stores and replicates them, and the check a
    real runtime's links use (another peer's: it holds none of the keys)."""
    author = Runtime(Store(tmp_path / "author.sqlite3"), nick="alice", static_peers=[("127.0.0.1", 9)])
    author.start(["general", "random"], 7000, ["127.0.0.1"], T)
    for channel in ("general", "random"):
        author.say(channel, f"hello {channel}", "text", T)
    author.datagrams_to_send()
    reader = Runtime(Store(tmp_path / "reader.sqlite3"), nick="bob")
    links = CatchUp(False, reader.envelopes, reader.private.blind)  # the check the reader's runtime makes
    (general,) = author.store.entries_after("general", author.peer_id, 0)
    (random_,) = author.store.entries_after("random", author.peer_id, 0)
    def validate(channels: tuple[str, ...], entry: bytes) -> EntryKey:
        verdict, _ = links.check(channels, entry, reader.envelopes.open_entry(entry))
        if isinstance(verdict, ReplicationError):
            raise verdict
        return verdict

    return Check(validate, author.peer_id, general, random_, b"\x00not an envelope"), author


@pytest.fixture(params=["toy", "real"])
def check(request, tmp_path) -> Check:
    if request.param == "toy":
        return Check(validate_toy_entry, "alice", b"general|alice|1", b"random|alice|1", b"general|alice")
    return _real_check(tmp_path)[0]


def session(check: Check, named: tuple[m.Item, ...] | None = None) -> tuple[Checking, int]:
    """A log-height session on "general" with nothing of ours, in which the
    other side (played here) has named the author's log at height 1 in its
    ``Have`` - or ``named`` - so it may send the author's first entry."""
    a = checking(("general",), check.validate, initiator=True, now=T, mode=m.LOG_HEIGHT)
    a.receive(encode(m.Announce(T, ("general", "random"))), T)
    sid = a.sync()
    a.provide_heights(sid, {})
    a.receive(encode(m.Have(sid, ((check.author, log_id("general"), 1),) if named is None else named)), T)
    a.datagrams_to_send(T)
    list(a.events())
    return a, sid


def test_a_valid_entry_is_reported_under_its_channel(check):
    assert check.validate(("general",), check.general).channel == "general"
    a, sid = session(check)
    a.receive(encode(m.EntryMessage(sid, check.general)), T)
    assert [(e.channel, e.entry) for e in a.events() if isinstance(e, EntryReceived)] == [("general", check.general)]
    assert a.closed is None


@pytest.mark.parametrize("which", ["random", "garbage"])
def test_an_entry_the_session_did_not_ask_for_closes_it_and_is_not_reported(check, which):
    entry = getattr(check, which)
    with pytest.raises(ReplicationError):
        check.validate(("general",), entry)
    a, sid = session(check)
    a.receive(encode(m.EntryMessage(sid, entry)), T)
    events = a.events()
    assert not [e for e in events if isinstance(e, EntryReceived)]
    assert a.closed  # the session, and its link, are over
    if which == "random":
        assert "not requested" in a.closed


def test_only_the_real_check_refuses_a_forged_or_non_chat_entry(tmp_path):
    """What a toy entry cannot carry: a signature, and a message kind."""
    check, author = _real_check(tmp_path)
    forged = bytearray(check.general)
    forged[len(forged) // 2] ^= 1
    with pytest.raises(ReplicationError, match="entry refused"):
        check.validate(("general",), bytes(forged))
    author.typing("general", T + 10_000)
    (typing,) = [data for data, _ in author.datagrams_to_send()]
    with pytest.raises(ReplicationError, match="not a chat message"):
        check.validate(("general",), typing)
