"""Spec section 4, rule by rule: when a member sends sync interests, the
steady and suppression states, and the timer ranges."""

import pytest

from sync.core import BROADCAST
from sync.svs import STEADY, SUPPRESSION, Channel, Config, Delivered, Missing, is_outdated
from sync.svs.packets import DataInterest, SyncInterest

from .helpers import BOOT, GROUP, T0, broadcasts, decode, member, p, sync_interest

PERIOD = (27_000, 33_000)  # 30 s +-10%
SUPPRESS = (100, 300)  # 200 ms +-50%


def within(value, bounds, now):
    return bounds[0] <= value - now <= bounds[1]


def test_a_new_member_announces_its_empty_vector_at_once():
    ch = Channel(GROUP, "/me", T0)
    assert ch.get_timer() == T0
    ch.handle_timer(T0)
    [sent] = broadcasts(ch, T0)
    assert isinstance(sent, SyncInterest) and sent.vector == {} and sent.part is None
    assert within(ch.get_timer(), PERIOD, T0)


def test_sequence_numbers_start_at_1_and_a_publication_sends_a_sync_interest_at_once():
    ch = member()
    now = T0 + 5_000
    assert ch.send(b"first", now) == 1
    assert ch.send(b"second", now + 1) == 2
    sent = broadcasts(ch, now)
    assert [s.vector for s in sent] == [{ch.me: 1}, {ch.me: 2}]
    assert within(ch.get_timer(), PERIOD, now + 1)  # the Sync Interest Timer was reset
    assert [e for e in ch.events() if isinstance(e, Delivered)] == [
        Delivered("/me", BOOT, 1, b"first", own=True), Delivered("/me", BOOT, 2, b"second", own=True)]


def test_the_periodic_timer_sends_the_vector_and_rearms():
    ch = member()
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    due = ch.get_timer()
    ch.handle_timer(due - 1)
    assert broadcasts(ch, due - 1) == []  # early: nothing
    ch.handle_timer(due)
    [sent] = broadcasts(ch, due)
    assert sent.vector == {ch.me: 1}
    assert within(ch.get_timer(), PERIOD, due)


def test_steady_an_up_to_date_vector_delays_ours_and_is_not_acknowledged():
    ch = member()
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    now = T0 + 20_000
    ch.receive(sync_interest("/other", {ch.me: 1}), now, "O")
    assert ch.state == STEADY
    assert ch.datagrams_to_send(now) == []  # no acknowledgement
    assert within(ch.get_timer(), PERIOD, now)  # reset from now: ours can wait


def test_steady_a_newer_vector_updates_the_state_and_fetches_from_the_producer():
    ch = member()
    now = T0 + 1_000
    ch.receive(sync_interest("/alice", {p("/alice"): 3}), now, "A")
    assert ch.state == STEADY and ch.vector[p("/alice")] == 3
    assert Missing("/alice", BOOT, 1, 3) in list(ch.events())
    outs = ch.datagrams_to_send(now)
    assert [(decode(o.data), o.to) for o in outs] == [(DataInterest(p("/alice"), s), "A") for s in (1, 2, 3)]
    assert ch.get_timer() == now + 1_000  # the first fetch's timeout, before the 30 s timer


def test_steady_an_outdated_vector_starts_suppression_then_an_up_to_date_reply():
    ch = member()
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    now = T0 + 2_000
    ch.receive(sync_interest("/late", {}), now, "L")  # lacks our entry: outdated
    assert ch.state == SUPPRESSION
    assert within(ch.get_timer(), SUPPRESS, now)
    assert ch.datagrams_to_send(now) == []  # not yet: suppression timer first
    due = ch.get_timer()
    ch.handle_timer(due)
    [sent] = broadcasts(ch, due)
    assert sent.vector == {ch.me: 1}
    assert ch.state == STEADY and within(ch.get_timer(), PERIOD, due)


def test_suppression_an_up_to_date_vector_heard_meanwhile_suppresses_ours():
    ch = member()
    ch.receive(sync_interest("/alice", {p("/alice"): 1}), T0 + 10, "A")
    ch.datagrams_to_send(T0 + 10)
    ch.receive(sync_interest("/late", {}), T0 + 100, "L")
    assert ch.state == SUPPRESSION
    ch.receive(sync_interest("/alice", {p("/alice"): 1}), T0 + 150, "A")  # someone answered first
    assert ch.state == SUPPRESSION  # only aggregated
    due = ch.get_timer()
    ch.handle_timer(due)
    assert broadcasts(ch, due) == []
    assert ch.state == STEADY and ch.stats["suppressed"] == 1


def test_suppression_aggregates_partial_answers_before_deciding():
    ch = member()
    vec = {p("/a"): 1, p("/b"): 2}
    ch.receive(sync_interest("/a", vec), T0 + 10, "A")
    ch.datagrams_to_send(T0 + 10)
    ch.receive(sync_interest("/late", {}), T0 + 100, "L")
    ch.receive(sync_interest("/x", {p("/a"): 1}), T0 + 120, "X")  # covers /a only
    due = ch.get_timer()
    ch.handle_timer(due)
    [sent] = broadcasts(ch, due)  # /b is still missing from what was heard: answer
    assert sent.vector == vec


def test_an_excerpt_is_not_outdated_for_the_entries_it_leaves_out():
    ch = member()
    ch.receive(sync_interest("/a", {p("/a"): 1, p("/b"): 2}), T0 + 10, "A")
    ch.receive(sync_interest("/c", {p("/a"): 1}, part=0), T0 + 20, "C")
    assert ch.state == STEADY
    ch.receive(sync_interest("/c", {p("/a"): 1}), T0 + 30, "C")  # the same, as a whole vector: outdated
    assert ch.state == SUPPRESSION


@pytest.mark.parametrize("part, last, lacks, outdated", [
    (1, 2, "/c", True),    # /c lies between the part's first (/b) and last (/d) entries: it lacks it
    (1, 2, "/a", False),   # /a lies before the stretch: part 0 speaks for it
    (1, 2, "/f", False),   # after it: part 2 speaks for it
    (0, 2, "/a", True),    # part 0 speaks from the very start
    (2, 2, "/f", True),    # the last part to the very end
])
def test_a_part_of_a_split_vector_speaks_for_its_stretch(part, last, lacks, outdated):
    ch = member()
    everyone = {p(n): 1 for n in ("/a", "/b", "/c", "/d", "/f")}
    ch.receive(sync_interest("/x", everyone), T0 + 10, "X")
    ch.datagrams_to_send(T0 + 10)
    stretch = {p(n): 1 for n in ("/b", "/c", "/d") if n != lacks}
    ch.receive(sync_interest("/y", stretch, part=part, last=last), T0 + 20, "Y")
    assert (ch.state == SUPPRESSION) == outdated


def test_the_outdated_definition():
    a, b = p("/a"), p("/b")
    assert is_outdated({a: 1}, {a: 2})
    assert not is_outdated({a: 2}, {a: 1})
    assert not is_outdated({a: 2, b: 1}, {a: 2, b: 1})  # equal
    assert is_outdated({a: 3}, {a: 1, b: 1})  # a missing entry counts as 0
    assert is_outdated({a: 3, b: 1}, {a: 1, b: 2})  # any one smaller entry suffices
    assert not is_outdated({a: 3}, {a: 1, b: 1}, spans=[])  # an excerpt speaks only for its entries


def test_timers_cover_their_ranges_and_differ_between_members():
    periodic, suppression = [], []
    for k in range(200):
        ch = member(f"/m{k}")
        periodic.append(ch.get_timer() - T0)
        ch.send(b"x", T0)
        ch.receive(sync_interest("/late", {}), T0 + 1, "L")
        suppression.append(ch.get_timer() - T0 - 1)
    assert min(periodic) >= 27_000 and max(periodic) <= 33_000
    assert min(periodic) < 27_600 and max(periodic) > 32_400  # spread over the range, not a constant
    assert min(suppression) >= 100 and max(suppression) <= 300
    assert min(suppression) < 120 and max(suppression) > 280
    assert len(set(periodic)) > 150


def test_the_v2_decaying_suppression_curve_lets_only_a_few_fire_early():
    waits = []
    for k in range(300):
        ch = member(f"/m{k}", config=Config(suppression_curve="decaying"))
        ch.send(b"x", T0)
        ch.receive(sync_interest("/late", {}), T0 + 1, "L")
        waits.append(ch.get_timer() - T0 - 1)
    assert 0 <= min(waits) and max(waits) <= 200
    assert 0 < sum(w < 100 for w in waits) < 0.15 * len(waits)  # a few fire early (about 7%)...
    assert sum(w > 180 for w in waits) > 0.6 * len(waits)  # ...most wait nearly the whole 200 ms (about 77%)


def test_vectors_with_a_bootstrap_time_over_24_hours_ahead_are_ignored():
    ch = member()
    ahead = p("/future", BOOT + 86_400 + 1)
    ch.receive(sync_interest("/future", {ahead: 1}), T0, "F")
    assert ahead not in ch.vector
    assert [e.kind for e in ch.events()] == ["future_bootstrap"]
    ch.receive(sync_interest("/soon", {p("/soon", BOOT + 86_400): 1}), T0, "S")
    assert p("/soon", BOOT + 86_400) in ch.vector


def test_a_2021_member_without_bootstrap_time_interoperates():
    old = member("/old", bootstrap_time=0)
    new = member("/new")
    old.send(b"hello", T0)
    [out] = old.datagrams_to_send(T0)
    assert b"\xcc\x01\x01" in out.data and b"\xd2" not in out.data  # the 2021 SeqNo form only
    new.receive(out.data, T0 + 5, "OLD")
    [request] = new.datagrams_to_send(T0 + 5)
    old.receive(request.data, T0 + 10, "NEW")
    [answer] = old.datagrams_to_send(T0 + 10)
    assert answer.to == "NEW"
    new.receive(answer.data, T0 + 15, "OLD")
    assert Delivered("/old", 0, 1, b"hello") in list(new.events())


def test_bad_content_is_the_callers_error():
    from sync.core import LocalProtocolError
    with pytest.raises(LocalProtocolError):
        member().send(b"", T0)


def test_outgoing_sync_interests_are_broadcast():
    ch = member()
    ch.send(b"x", T0)
    assert all(o.to is BROADCAST for o in ch.datagrams_to_send(T0))


def test_with_a_keepalive_a_member_whose_periodic_sync_is_suppressed_still_speaks():
    quiet = Channel(GROUP, "/quiet", T0, Config(keepalive_ms=20_000))
    quiet.datagrams_to_send(T0)  # its first vector
    now = T0
    for _ in range(10):  # someone else's up-to-date vector every 10 s keeps resetting the periodic timer
        now += 10_000
        quiet.receive(sync_interest("/other", {}), now, "O")
        if quiet.get_timer() <= now:
            quiet.handle_timer(now)
    sent = quiet.datagrams_to_send(now)
    assert len(sent) == 5 and quiet.stats["keepalive"] == 5  # one vector per 20 s, though always suppressed
    plain = Channel(GROUP, "/plain", T0)  # the spec: no keepalive, the timer reset each time
    plain.datagrams_to_send(T0)
    for k in range(1, 11):
        plain.receive(sync_interest("/other", {}), T0 + k * 10_000, "O")
        assert plain.get_timer() > T0 + k * 10_000 + 20_000


# ---------------------------------------------------------------- repeats (an extension, off by default)

REPEATS = Config(repeat_ms=1_000)


def test_with_repeats_a_publication_is_announced_again_at_doubling_gaps_then_periodically():
    ch = member(config=REPEATS)
    ch.send(b"x", T0)
    assert [s.vector for s in broadcasts(ch, T0)] == [{ch.me: 1}]
    now = T0
    for gap in (1_000, 2_000, 4_000):  # each +-50%
        due = ch.get_timer()
        assert within(due, (gap // 2, gap * 3 // 2), now)
        ch.handle_timer(due - 1)
        assert broadcasts(ch, due - 1) == []
        ch.handle_timer(due)
        assert [s.vector for s in broadcasts(ch, due)] == [{ch.me: 1}]
        now = due
    assert within(ch.get_timer(), PERIOD, now)  # three repeats, then the spec's 30 s
    assert ch.stats["sync_sent"] == 1 + 1 + 3  # the opening vector, the publication's, three repeats


def test_an_up_to_date_vector_from_someone_else_ends_the_repeats():
    ch = member(config=REPEATS)
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    ch.receive(sync_interest("/other", {ch.me: 1}), T0 + 100, "O")  # it says what a repeat would say
    assert within(ch.get_timer(), PERIOD, T0 + 100)
    ch.handle_timer(T0 + 10_000)
    assert broadcasts(ch, T0 + 10_000) == []


def test_an_outdated_vector_during_the_repeats_is_answered_as_the_spec_says():
    ch = member(config=REPEATS)
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    ch.receive(sync_interest("/other", {}), T0 + 100, "O")  # lacks our publication
    assert ch.state == SUPPRESSION and within(ch.get_timer(), SUPPRESS, T0 + 100)
    due = ch.get_timer()
    ch.handle_timer(due)
    assert [s.vector for s in broadcasts(ch, due)] == [{ch.me: 1}]
    assert within(ch.get_timer(), (1_000, 3_000), due)  # then the repeats go on


def test_without_repeats_a_publication_resets_the_periodic_timer_only():
    ch = member()
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    assert within(ch.get_timer(), PERIOD, T0)


def test_repeats_left_survive_export_and_restore():
    ch = member(config=REPEATS)
    ch.send(b"x", T0)
    ch.datagrams_to_send(T0)
    due = ch.get_timer()
    ch.handle_timer(due)
    ch.datagrams_to_send(due)
    restored = Channel.restore(ch.export_state(), REPEATS)
    assert restored.get_timer() == ch.get_timer()
    later = ch.get_timer()
    for one in (ch, restored):
        one.handle_timer(later)
    assert [o.data for o in restored.datagrams_to_send(later)] == [o.data for o in ch.datagrams_to_send(later)]
    assert restored.get_timer() == ch.get_timer() and within(ch.get_timer(), (2_000, 6_000), later)
