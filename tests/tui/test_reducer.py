"""The client's state, changed by the node's events one kind at a time and by
what the user does: each function from a state to a state, with the effects
it asks of the screen. No app, no node: plain values."""

import pytest

from chat_app import events as ev
from chat_app.tui import channels, direct, history, presence
from chat_app.tui.effects import (
    Aspect, Bell, Changed, Follow, Mentioned, OlderPlaced, Placed, ReadConversations, ReadPage, Relayout,
    Run, SaveSettings, Show, Toast, Unseen,
)
from chat_app.commands import Whois
from chat_app.tui.model import NOTICE_KINDS, PRESENCE_KINDS, MessageRow
from chat_app.tui.read_markers import ReadMarkers
from chat_app.tui.reducer import REDUCERS, reduce
from chat_app.tui.settings import Settings
from chat_app.tui.state import ClientState

ME, BOB, CAROL = "a" * 32, "b" * 32, "c" * 32
NOW = 1_700_000_000_000
DM = f"@{BOB}"


def changed(effects) -> Aspect:
    out = Aspect(0)
    for effect in effects:
        if isinstance(effect, Changed):
            out |= effect.aspects
    return out


def of(kind, effects) -> list:
    return [e for e in effects if isinstance(e, kind)]


def started(*names: str, current: str | None = None, **settings) -> ClientState:
    """A state after ``ready`` for ``names`` (an empty page read for each)."""
    state = ClientState(Settings(**settings), highlight=["lunch"])
    reduce(state, ev.Ready(ME, "alice", 4000, (), names), NOW)
    if current is not None:
        channels.switch_to(state, current)
    return state


def said(text: str, i: int = 1, channel: str = "general", sender: str = BOB, nick: str = "bob", own=False):
    return ev.MessageDelivered(channel, i, f"{i:032x}", sender, NOW + i, nick, "text", text, i, own)


def test_ready_adds_each_channel_in_order_and_opens_on_the_last_one_used():
    state = ClientState(Settings(last_channel="random"))
    effects = reduce(state, ev.Ready(ME, "alice", 4000, (), ("general", "random"), private=("random",)), NOW)
    assert list(state.channels) == ["general", "random"] and state.current == "random"
    assert (state.nick, state.peer_id, state.private, state.presence.started_at) == ("alice", ME, {"random"}, NOW)
    assert of(ReadPage, effects) == [ReadPage("general"), ReadPage("random")]
    assert ReadConversations() in effects and of(Show, effects)[0].model is state.channels["random"]
    assert changed(effects) & (Aspect.NICK | Aspect.SWITCHED) == Aspect.NICK | Aspect.SWITCHED
    assert SaveSettings() not in effects  # it opened where the settings said


def test_joined_adds_marks_and_switches_and_a_joined_channel_is_only_switched_to():
    state = started("general")
    effects = reduce(state, ev.Joined("ops", private=True, svs=True), NOW)
    assert list(state.channels) == ["general", "ops"] and state.current == "ops"
    assert state.private == state.svs == {"ops"} and ReadPage("ops") in effects
    assert state.settings.last_channel == "ops" and SaveSettings() in effects
    again = reduce(state, ev.Joined("general", already=True), NOW)
    assert state.current == "general" and of(ReadPage, again) == []


def test_parted_forgets_the_channel_and_shows_the_first_one_left():
    state = started("general", "random", "dev", current="random")
    state.presence.lines["random"] = []
    effects = reduce(state, ev.Parted("random"), NOW)
    assert list(state.channels) == ["general", "dev"] and state.current == "general"
    assert "random" not in state.presence.lines and of(Show, effects)[0].left is None  # nothing to come back to
    reduce(state, ev.Parted("dev"), NOW)
    assert state.current == "general"


def test_a_message_elsewhere_counts_as_unread_and_a_mention_as_one():
    state = started("general", "random", current="general")
    effects = reduce(state, said("is lunch ready?", channel="random"), NOW)
    random = state.channels["random"]
    assert [r.text for r in random.entries] == ["is lunch ready?"] and (random.unread, random.mentions) == (1, 1)
    assert of(Mentioned, effects) == [Mentioned("random", "bob", "is lunch ready?")]
    assert of(Placed, effects) == [] and changed(effects) == Aspect.SIDEBAR
    reduce(state, said("nothing for you", 2, channel="random"), NOW)
    assert (random.unread, random.mentions) == (2, 1)


def test_a_message_here_is_placed_and_followed_or_marked_unseen_when_scrolled_up():
    state = started("general", current="general")
    effects = reduce(state, said("hello"), NOW)
    assert of(Placed, effects) == [Placed(state.channels["general"].by_id[f"{1:032x}"], replaced=False)]
    assert Follow() in effects and state.channels["general"].unread == 0
    state.following = False  # the reader scrolled up
    effects = reduce(state, said("while you read", 2), NOW)
    assert Follow() not in effects and of(Unseen, effects) == [Unseen(f"{2:032x}")]
    assert state.channels["general"].unread == 1
    effects = reduce(state, said("mine", 3, sender=ME, nick="alice", own=True), NOW)  # ours: followed, never unread
    assert Follow() in effects and state.channels["general"].unread == 1
    assert state.channels["general"].by_id[f"{3:032x}"].ack == "unacknowledged"


def test_a_waiting_message_takes_its_place_and_a_message_ends_its_senders_typing():
    state = started("general", current="general")
    reduce(state, ev.Typing("general", BOB, "bob", NOW + 5_000), NOW)
    assert state.typing_here(NOW) == ["bob"]
    reduce(state, ev.MessageWaiting("general", "w" * 32, BOB, NOW + 9, "bob", "text", "later", 1), NOW)
    model = state.channels["general"]
    assert model.waiting == {"w" * 32} and state.typing_here(NOW) == []
    effects = reduce(state, ev.MessageDelivered("general", 1, "w" * 32, BOB, NOW + 9, "bob", "text", "later", 2,
                                                False), NOW)
    assert model.waiting == set() and of(Placed, effects)[0].replaced and model.unread == 0


def test_an_acknowledgement_marks_our_message_and_never_steps_back():
    state = started("general", "random", current="general")
    reduce(state, said("mine", sender=ME, nick="alice", own=True), NOW)
    mid = f"{1:032x}"
    effects = reduce(state, ev.MessageAcknowledged("general", mid, "acknowledged", 2, "bloom"), NOW)
    row = state.channels["general"].by_id[mid]
    assert (row.ack, row.peers) == ("acknowledged", 2) and of(Placed, effects) == [Placed(row, replaced=True)]
    assert reduce(state, ev.MessageAcknowledged("general", mid, "possibly_acknowledged", 1), NOW) == []
    reduce(state, said("mine too", 2, channel="random", sender=ME, nick="alice", own=True), NOW)
    assert reduce(state, ev.MessageAcknowledged("random", f"{2:032x}", "acknowledged", 1), NOW) == []  # not shown
    assert state.channels["random"].by_id[f"{2:032x}"].ack == "acknowledged"


def test_the_topic_is_kept_per_channel_and_drawn_only_for_the_current_one():
    state = started("general", "random", current="general")
    effects = reduce(state, ev.TopicChanged("random", "dice", "bob", "t" * 32), NOW)
    assert state.channels["random"].topic == ("dice", "bob") and changed(effects) == Aspect(0)
    assert of(Toast, effects) == [] and told(state, "random") == []  # a new topic: its row in the history says it
    state.topic_asked.add("random")  # /topic asked
    reduce(state, ev.TopicChanged("random", "dice", "bob", "t" * 32), NOW)
    reduce(state, ev.TopicChanged("random", "cards", "carol", "v" * 32), NOW)  # then a new one
    assert told(state, "random") == [("info", "topic of #random: dice (set by bob)")] and not state.topic_asked
    assert changed(reduce(state, ev.TopicChanged("general", "work", None, "u" * 32), NOW)) == Aspect.TOPIC


def test_nick_changed_tells_every_channel_and_keeps_a_nick_from_the_settings():
    state = started("general", "random", nick="alice")
    effects = reduce(state, ev.NickChanged("alice", "alicia"), NOW)
    assert state.nick == "alicia" and state.settings.nick == "alicia" and SaveSettings() in effects
    assert [r.text for m in state.channels.values() for r in m.entries] == ["you are now known as alicia"] * 2
    assert not of(Toast, effects) and changed(effects) & Aspect.NICK
    plain = started("general")
    assert SaveSettings() not in reduce(plain, ev.NickChanged("alice", "al"), NOW) and plain.settings.nick is None


def test_peers_joining_leaving_and_renaming_are_lines_in_their_channels():
    state = started("general", "random", current="general")
    reduce(state, ev.PeerJoined(CAROL, "carol", ("10.0.0.3", 1), channels=("general",)), NOW + 1_000)
    assert presence_lines(state) == []  # there before us
    later = NOW + presence.ALREADY_HERE_MS + 1
    reduce(state, ev.PeerJoined(BOB, "bob", ("10.0.0.2", 1), channels=("general", "random")), later)
    reduce(state, ev.PeerUpdated(BOB, "bob", ("10.0.0.2", 1), channels=("general",)), later)
    reduce(state, ev.PeerUpdated(BOB, "robert", ("10.0.0.2", 1), channels=("general",)), later)
    effects = reduce(state, ev.PeerLeft(BOB, "robert"), later)
    assert presence_lines(state) == [("join", "bob (bbbbbbbb) has joined #general"),
                                     ("nick", "bob is now known as robert"), ("quit", "robert has quit")]
    assert presence_lines(state, "random") == [("join", "bob (bbbbbbbb) has joined #random"),
                                               ("part", "bob has left #random")]
    assert of(Placed, effects) and changed(effects) == Aspect.MEMBERS | Aspect.TYPING
    assert not state.roster.members[BOB].present and state.roster.members[CAROL].present
    assert state.channels["random"].unread == 0


def presence_lines(state, channel="general"):
    return [(r.kind, r.text) for r in state.channels[channel].entries if r.kind in PRESENCE_KINDS]


def told(state, channel="general"):
    """The client's notices in ``channel``: (kind, text)."""
    return [(r.kind, r.text) for r in state.channels[channel].entries if r.kind in NOTICE_KINDS]


def test_heard_away_and_back():
    state = started("general")
    assert reduce(state, ev.PeerHeard(BOB, NOW), NOW) == []  # not known: nothing to show
    reduce(state, ev.PeerJoined(BOB, "bob", ("10.0.0.2", 1)), NOW)
    assert reduce(state, ev.PeerHeard(BOB, NOW + 5), NOW) == [Changed(Aspect.MEMBERS)]
    effects = reduce(state, ev.PeerAway(BOB, "bob", "lunch"), NOW)
    assert state.roster.members[BOB].away == "lunch" and not of(Toast, effects)
    reduce(state, ev.PeerAway(BOB, "bob", None), NOW)
    assert told(state) == [("info", "bob is away: lunch"), ("info", "bob is back")]
    assert reduce(state, ev.PeerAway(ME, "alice", "out"), NOW) == [Changed(Aspect.MEMBERS)]  # ours: no line
    assert state.roster.my_away == "out"


def test_typing_comes_and_goes_per_channel():
    state = started("general", "random", current="general")
    assert reduce(state, ev.Typing("random", BOB, "bob", NOW + 5_000), NOW) == [Changed(Aspect.TYPING)]
    assert state.typing_here(NOW) == [] and state.channels["random"].typing_now(NOW) == ["bob"]
    reduce(state, ev.TypingStopped("random", BOB), NOW)
    assert state.channels["random"].typing == {}
    assert reduce(state, ev.Typing("elsewhere", BOB, "bob", NOW), NOW) == []


def test_catch_up_is_shown_while_it_runs_and_told_when_it_brought_messages():
    state = started("general")
    reduce(state, ev.CatchupStarted(("10.0.0.2", 7), ("general",)), NOW)
    assert state.catching_up == {("10.0.0.2", 7): ["general"]}
    effects = reduce(state, ev.CatchupFinished(("10.0.0.2", 7), ("general",), 3, 0, "done"), NOW)
    assert state.catching_up == {} and Toast("caught up: 3 messages from 10.0.0.2:7") in effects
    assert of(Toast, reduce(state, ev.CatchupFinished(("h", 1), (), 0, 0, "done"), NOW)) == []


def test_what_the_node_answers_is_told():
    state = started("general")
    assert not of(Toast, reduce(state, ev.Error("no"), NOW))
    reduce(state, ev.Whois("bob", ()), NOW)
    assert Run(Whois("bob")) in reduce(state, ev.Trusted("bob", "ab cd"), NOW)  # which key: /whois marks it
    assert of(Toast, reduce(state, ev.KeyChanged("bob", BOB, "ab", "cd"), NOW))[0].severity == "error"
    reduce(state, ev.Peers((), ("10.0.0.1",), 4000), NOW)
    lines = told(state)
    assert lines[:3] == [("error", "no"), ("info", "/whois bob: nobody of that nick seen yet"),
                         ("info", "bob verified: ab cd")]
    assert lines[3][0] == "error" and "ANOTHER KEY" in lines[3][1]
    assert lines[4][1].startswith("/peers: 0 peers on the network\nNobody seen yet")
    assert lines[4][1].endswith("others reach you at 10.0.0.1:4000")
    assert reduce(state, ev.MessagesHeld("general", 1), NOW) == reduce(state, ev.Bye(), NOW) == []


def test_whois_is_a_block_in_the_buffer_and_marks_who_is_verified():
    state = started("general")
    person = {"sender_id": BOB, "fingerprint": "3f2a 9c01 77be d40e 5b19", "short": "bob~3f2a",
              "addresses": [["10.0.0.2", 4000]], "first_seen": NOW - 60_000, "last_seen": NOW, "trusted": True,
              "was": None}
    effects = reduce(state, ev.Whois("bob", (person,)), NOW)
    block = told(state)[0][1].splitlines()
    assert block[0] == "/whois bob: one key" and "fingerprint 3f2a 9c01 77be d40e 5b19  ✓ verified" in block[1]
    assert block[2] == f"  id {BOB}" and block[3] == "  addresses 10.0.0.2:4000"
    assert block[4].startswith("  first seen 2023-11-") and ", last seen " in block[4]
    assert state.trusted == {BOB} and state.label(BOB, "bob") == "bob✓"
    assert Relayout(follow=True, relabel=True) in effects and changed(effects) & Aspect.MEMBERS


def test_ignoring_drops_loaded_rows_and_unignoring_reads_every_channel_again():
    state = started("general", current="general")
    mallory = "e" * 32
    reduce(state, said("spam", 1, sender=mallory, nick="Mallory"), NOW)
    reduce(state, said("ham", 2), NOW)
    state.channels["general"].history_complete = True
    effects = reduce(state, ev.Ignoring(("Mallory",), (mallory,)), NOW)
    assert [r.text for r in state.channels["general"].entries] == ["ham", "ignoring: Mallory"]
    assert Relayout() in effects and state.ignored == {mallory}
    effects = reduce(state, ev.Ignoring(()), NOW)
    assert told(state) == [("info", "ignoring: nobody")] and ReadPage("general") in effects


def test_a_direct_conversation_opens_counts_every_message_as_a_mention_and_rings():
    state = started("general", current="general", closed=[BOB])
    effects = reduce(state, ev.DmDelivered(DM, BOB, "bob", "d" * 32, BOB, 5, "bob", "text", "psst", NOW, False), NOW)
    model = state.channels[DM]
    assert (model.unread, model.mentions) == (1, 1) and Bell() in effects and ReadPage(DM) in effects
    assert state.settings.closed == [] and SaveSettings() in effects  # a closed one opens again
    assert state.title(DM) == "@bob" and state.current == "general"
    effects = reduce(state, ev.DmAcknowledged(DM, BOB, "d" * 32), NOW)
    assert effects == []  # not ours, and not on screen
    reduce(state, ev.DmOpened(DM, BOB, "bob"), NOW)
    assert state.current == DM and model.unread == 0 and state.members_here()[0].nick == "bob"


def test_closing_a_direct_conversation_keeps_it_closed():
    state = started("general")
    reduce(state, ev.DmOpened(DM, BOB, "bob"), NOW)
    effects = direct.close(state, DM)
    assert DM not in state.channels and state.current == "general" and state.settings.closed == [BOB]
    assert SaveSettings() in effects and direct.close(state, DM) == []
    assert direct.listed(state, [(DM, "bob"), (f"@{CAROL}", "carol")]) and list(state.channels) == [
        "general", f"@{CAROL}"]


def test_switching_clears_the_unread_count_and_marks_the_first_unread_message():
    state = started("general", "random", "dev", current="general")
    for i in range(3):
        reduce(state, said(f"r{i}", i, channel="random"), NOW)
    effects = channels.switch_to(state, "random")
    show = of(Show, effects)[0]
    assert show.marker == f"{0:032x}" and show.left == "general" and state.channels["random"].unread == 0
    assert state.read_markers.get("general") is None  # nothing in general to have seen
    assert channels.cycle(state, 1) and state.current == "dev"
    assert channels.cycle(state, 1) and state.current == "general"  # round the end
    assert channels.number(state, 9) == [Bell()] and state.current == "general"
    assert channels.next_unread(state) == [Toast("no unread messages")]


def test_leaving_a_channel_at_its_newest_message_remembers_it_as_read():
    state = started("general", "random", current="general")
    reduce(state, said("seen"), NOW)
    state.following = False
    channels.switch_to(state, "random")
    assert state.read_markers.get("general") is None
    channels.switch_to(state, "general")
    state.following = True
    channels.switch_to(state, "random")
    assert state.read_markers.get("general") == (NOW + 1, f"{1:032x}")


def test_a_first_page_counts_what_came_since_the_reader_left():
    state = ClientState(read_markers=ReadMarkers({"random": (NOW + 1, f"{1:032x}")}))
    reduce(state, ev.Ready(ME, "alice", 4000, (), ("general", "random")), NOW)
    rows = [MessageRow(NOW + i, f"{i:032x}", BOB, "bob", f"m{i}") for i in range(4)]
    effects = history.page_read(state, "random", history.Page(rows, (NOW, f"{0:032x}"), True, frozenset(),
                                                              ("dice", "bob")), None)
    random = state.channels["random"]
    assert random.unread == 2 and len(random) == 4 and random.history_complete and random.topic == ("dice", "bob")
    assert Changed(Aspect.SIDEBAR) in effects and state.ignored == frozenset()
    effects = history.page_read(state, "general", history.Page(rows[:1], None, False, frozenset()), None)
    assert effects == [Relayout(follow=True)]  # on screen: drawn, and kept at the newest


def test_an_older_page_goes_on_top_and_keeps_the_first_row_in_place():
    state = started("general", current="general")
    model = state.channels["general"]
    model.upsert(MessageRow(NOW + 10, "n" * 32, BOB, "bob", "newer"))
    older = [MessageRow(NOW + i, f"{i:032x}", BOB, "bob", f"m{i}") for i in range(3)]
    effects = history.page_read(state, "general", history.Page(older, (NOW, f"{0:032x}"), False, frozenset()),
                                (NOW + 10, "n" * 32))
    assert effects == [OlderPlaced(3, True, "n" * 32)] and len(model) == 4 and model.read_from == (NOW, f"{0:032x}")
    assert history.older_page(state, "general") == [ReadPage("general", (NOW, f"{0:032x}"))]


def test_folding_the_presence_lines_away_and_back():
    state = started("general", current="general")
    state.presence.started_at = NOW - presence.ALREADY_HERE_MS - 1
    reduce(state, ev.PeerJoined(BOB, "bob", ("10.0.0.2", 1), channels=("general",)), NOW)
    effects = presence.toggle(state)
    assert len(state.channels["general"]) == 0 and not state.settings.joins
    assert Relayout(follow=True) in effects and SaveSettings() in effects
    presence.toggle(state)
    assert presence_lines(state) == [("join", "bob (bbbbbbbb) has joined #general")]


def test_typing_indicators_can_be_hidden():
    state = started("general", current="general")
    reduce(state, ev.Typing("general", BOB, "bob", NOW + 5_000), NOW)
    effects = channels.toggle_typing(state)
    assert state.typing_here(NOW) == [] and not state.settings.typing and changed(effects) == Aspect.TYPING


@pytest.mark.parametrize("kind", [ev.Ready, ev.Joined, ev.Parted, ev.NickChanged, ev.TopicChanged, ev.PeerAway,
                                  ev.Ignoring, ev.Error, ev.Whois, ev.Trusted, ev.KeyChanged, ev.MessageDelivered,
                                  ev.MessageWaiting, ev.MessageAcknowledged, ev.CatchupStarted, ev.CatchupFinished,
                                  ev.Typing, ev.TypingStopped, ev.PeerJoined, ev.PeerUpdated, ev.PeerHeard,
                                  ev.PeerLeft, ev.DmOpened, ev.DmDelivered, ev.DmAcknowledged, ev.Peers])
def test_every_event_the_client_shows_has_its_function(kind):
    assert kind in REDUCERS


def test_someone_verified_in_an_earlier_run_is_marked_without_a_line():
    state = started("general")
    effects = reduce(state, ev.Verified("bob", BOB), NOW)
    assert state.trusted == {BOB} and state.label(BOB, "bob") == "bob✓"
    assert Relayout(follow=True, relabel=True) in effects and told(state) == []
    assert reduce(state, ev.Verified("bob", BOB), NOW) == []  # told once is enough


def test_a_direct_conversation_follows_the_other_persons_new_nick():
    """bob takes the nick robert: the conversation with him is @robert in the
    sidebar and the title, whether his announcement or a message of his in a
    channel says it first, not @bob until he writes to us again."""
    state = started("general", current="general")
    reduce(state, ev.DmOpened(DM, BOB, "bob"), NOW)
    later = NOW + presence.ALREADY_HERE_MS + 1
    reduce(state, ev.PeerJoined(BOB, "bob", ("10.0.0.2", 1), channels=("general",)), later)
    effects = reduce(state, ev.PeerUpdated(BOB, "robert", ("10.0.0.2", 1), channels=("general",)), later)
    assert state.title(DM) == "@robert" and Aspect.SIDEBAR | Aspect.TITLE in changed(effects)
    effects = reduce(state, said("hi", channel="general", nick="bobby"), later)
    assert state.title(DM) == "@bobby" and Aspect.SIDEBAR in changed(effects)


def test_the_new_messages_rule_goes_above_the_first_unread_message_not_above_our_own_after_it():
    """bob wrote m1 after where alice left #random, and she answered (m2) from
    another run before a restart: one unread, and the rule above m1, not
    above her own m2, the newest."""
    state = ClientState(read_markers=ReadMarkers({"random": (NOW, f"{0:032x}")}))
    reduce(state, ev.Ready(ME, "alice", 4000, (), ("general", "random")), NOW)
    rows = [MessageRow(NOW + i, f"{i:032x}", BOB, "bob", f"m{i}") for i in range(2)]
    rows.append(MessageRow(NOW + 2, f"{2:032x}", ME, "alice", "m2", own=True))
    history.page_read(state, "random", history.Page(rows, (NOW, f"{0:032x}"), True, frozenset()), None)
    assert state.channels["random"].unread == 1
    assert of(Show, channels.switch_to(state, "random"))[0].marker == f"{1:032x}"


def test_what_was_never_opened_is_still_unread_after_a_restart():
    """bob writes to alice, who never opens the conversation before she
    quits: it has no read marker yet, and with none every message would count
    as seen at the next start. Quitting marks it read up to just before it."""
    state = started("general", current="general")
    reduce(state, said("old news", 1), NOW)
    dm = ev.DmDelivered(DM, BOB, "bob", "d" * 64, BOB, 5, "bob", "text", "psst", NOW + 5, False)
    reduce(state, dm, NOW)
    reduce(state, said("unseen here", 3, channel="general"), NOW)  # on screen, but scrolled up
    state.following = False
    state.channels["general"].unread = 1
    channels.quitting(state)
    again = ClientState(read_markers=state.read_markers)
    reduce(again, ev.Ready(ME, "alice", 4000, (), ("general",)), NOW)
    direct.listed(again, [(DM, "bob")])
    rows = [MessageRow(NOW + 5, "d" * 64, BOB, "bob", "psst")]
    history.page_read(again, DM, history.Page(rows, None, True, frozenset()), None)
    assert again.current == "general" and again.channels[DM].unread == 1
    general = [MessageRow(NOW + i, f"{i:032x}", BOB, "bob", t) for i, t in ((1, "old news"), (3, "unseen here"))]
    effects = history.page_read(again, "general", history.Page(general, None, True, frozenset()), None)
    assert of(Unseen, effects) == [Unseen(f"{3:032x}")]  # on screen: the rule above it


def test_a_peer_that_announces_no_channel_is_a_member_where_it_spoke_only():
    """Found by its traffic (no mDNS), a stranger who wrote in #general is
    listed there, not in a private channel it cannot read; a peer that
    announces its channels is listed in those."""
    state = started("general", "ops", current="ops")
    reduce(state, ev.PeerJoined(BOB, None, ("10.0.0.2", 1), found=("traffic",)), NOW)
    reduce(state, ev.PeerJoined(CAROL, "carol", ("10.0.0.3", 1), channels=("general", "ops")), NOW)
    reduce(state, said("hi", sender=BOB, nick="mallory"), NOW + 1)
    assert [m.peer_id for m in state.members_here()] == [CAROL]
    channels.switch_to(state, "general")
    assert sorted(m.peer_id for m in state.members_here()) == [BOB, CAROL]


@pytest.mark.parametrize("look_alike", ["Bob", "ＢＯＢ", "ｂｏｂ", "𝐛𝐨𝐛",
                                       "bo\u034fb", "bob\ufe0f", "\u3164bob", "bob "])  # stored before the rule
def test_a_nick_that_reads_as_another_in_another_case_or_width_gets_the_key_suffix_too(look_alike):
    """Two keys calling themselves bob are shown ``bob~3f2a``; one calling
    itself Bob, a fullwidth ｂｏｂ or a mathematical bold 𝐛𝐨𝐛 reads the same
    and was shown bare beside the real bob - as were nicks stored before the
    nick rule with an invisible character or a space at an end."""
    state = started("general")
    reduce(state, ev.PeerJoined(BOB, "bob", ("10.0.0.2", 1), channels=("general",)), NOW)
    assert state.label(BOB, "bob") == "bob"
    reduce(state, ev.PeerJoined(CAROL, look_alike, ("10.0.0.3", 1), channels=("general",)), NOW + 1)
    assert state.label(BOB, "bob") == f"bob~{BOB[:4]}"
    assert state.label(CAROL, look_alike) == f"{look_alike}~{CAROL[:4]}"
    assert state.label(CAROL, "carol") == "carol"  # a nick nobody else reads alike stays bare
