"""A received file message's offer is parsed once, where its payload is
decoded, and travels on with the delivered event: the file manager and the
client take it from there (real runtimes, an in-memory network, real SQLite)."""

from __future__ import annotations

import pytest

from chat_app import events as ev
from chat_app.files.events import FileOffered
from chat_app.files.manager import Files
from chat_app.file_offer import FileOffer
from chat_app.tui.reducer import reduce
from chat_app.tui.state import ClientState

from ..runtime.conftest import Net
from ..runtime.test_direct import introduce

OFFER = FileOffer("report.pdf", 1_048_576, 262_144, "1" * 64, "2" * 64, "application/pdf")


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The texts ``FileOffer.parse`` is asked to read, from the moment the fixture is used."""
    seen: list[str] = []
    parse = FileOffer.parse.__func__

    def counted(cls, text: str) -> FileOffer:
        seen.append(text)
        return parse(cls, text)

    monkeypatch.setattr(FileOffer, "parse", classmethod(counted))
    return seen


def _delivered_to(net: Net, rt, kind: type) -> ev.MessageDelivered | ev.DmDelivered:
    return next(e for e in net.seen(rt) if isinstance(e, kind) and e.kind == "file" and not e.own)


@pytest.mark.parametrize("where", ["general", "general+svs", "direct"])
def test_a_received_offer_is_parsed_once_and_the_files_and_the_client_take_it_from_the_event(
        tmp_path, parses, where):
    net = Net(tmp_path)
    channel = "general" if where == "direct" else where
    alice, bob = net.add("alice", channels=(channel,)), net.add("bob", channels=(channel,))
    if where == "direct":
        introduce(net, alice, bob)
        alice.direct.send("bob", OFFER.text, "file", alice.nick, net.now)
    else:
        alice.say(alice.channels[0], OFFER.text, "file", net.now)
    parses.clear()  # alice's side: the payload made to send (what follows is bob receiving it)
    net.run(2_000)
    delivered = _delivered_to(net, bob, ev.DmDelivered if where == "direct" else ev.MessageDelivered)
    assert delivered.offer == OFFER and delivered.text == OFFER.text
    assert "offer" not in delivered.to_json()  # the JSON lines say what they said before: the text

    offered: list[ev.AppEvent] = []
    files = Files(tmp_path / "bob", offered.append, lambda sender: [])
    try:
        for event in net.seen(bob):
            files.observe(event)
    finally:
        files.pool.shutdown()
        files.ledger.close()
    state = ClientState()
    reduce(state, ev.Ready(bob.peer_id, "bob", 4000, (), (channel,)), net.now)
    for event in net.seen(bob):
        reduce(state, event, net.now)

    assert parses == [OFFER.text]  # bob's routing, decoding the payload: nothing after it
    assert [(e.file_name, e.size) for e in offered if isinstance(e, FileOffered)] == [("report.pdf", 1_048_576)]
    assert state.channels[delivered.channel].by_id[delivered.message_id].text == \
        "[file] report.pdf (1.0 MB, application/pdf)"
