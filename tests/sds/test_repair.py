"""SDS-R: request and response timing, response groups, cancellation."""

from sync.sds import Config, RepairRequested, RepairSent
from sync.sds.repair import is_responder
from sync.sds.wire import hash64

from .helpers import T0, make, of, parse, take, take_content

T_MIN, T_MAX = 30_000, 120_000


def _missing_setup(history=3, **config):
    """a sends `history + 1` messages; b and c receive only the last one."""
    a = make("alice", causal_history_size=history, **config)
    b, c = make("bob", **config), make("carol", **config)
    ids = [a.send(f"m{i}".encode(), T0 + i) for i in range(history + 1)]
    wires = take(a)
    for r in (b, c):
        r.receive(wires[-1], T0 + 100)
        list(r.events())
    return a, b, c, ids, wires


def test_missing_entries_get_a_request_time_by_the_formula():
    _, b, _, ids, _ = _missing_setup()
    for dep in ids[:-1]:
        expected = T0 + 100 + hash64("bob", dep) % (T_MAX - T_MIN) + T_MIN
        assert b._incoming.requests.get(dep) == expected
        assert T0 + 100 + T_MIN <= expected < T0 + 100 + T_MAX


def test_at_most_three_due_requests_ride_along_lowest_t_req_first():
    _, b, _, ids, _ = _missing_setup(history=5)
    deadlines = sorted((b._incoming.requests.get(dep), dep) for dep in ids[:-1])
    b.send(b"anyone?", T0 + 100 + T_MAX)
    msg = parse(take_content(b)[0])
    assert [e.message_id for e in msg.repair_request] == [dep for _, dep in deadlines[:3]]
    assert all(e.sender_id == "alice" for e in msg.repair_request)
    assert of(b.events(), RepairRequested)[0].message_ids == tuple(dep for _, dep in deadlines[:3])


def test_no_request_before_t_req_and_the_field_stays_unset():
    _, b, _, _, _ = _missing_setup()
    b.send(b"too early", T0 + 100 + T_MIN - 1)
    assert len(parse(take_content(b)[0]).repair_request) == 0


def test_seeing_another_request_drops_our_own():
    _, b, c, ids, _ = _missing_setup()
    c.send(b"carol asks", T0 + 100 + T_MAX)
    request = take_content(c)[0]
    asked = {e.message_id for e in parse(request).repair_request}
    assert asked and all(dep in b._incoming.requests for dep in asked)
    b.receive(request, T0 + 100 + T_MAX + 1)
    assert not any(dep in b._incoming.requests for dep in asked)


def test_the_original_sender_answers_at_once():
    a, b, _, ids, wires = _missing_setup()
    b.send(b"please repair", T0 + 100 + T_MAX)
    request = take_content(b)[0]
    asked = [e.message_id for e in parse(request).repair_request]
    a.receive(request, T0 + 100 + T_MAX + 5)
    assert all(a._repair.due.get(dep) == T0 + 100 + T_MAX + 5 for dep in asked)  # distance 0
    a.handle_timer(T0 + 100 + T_MAX + 5)
    out = take(a)
    for dep in asked:
        assert wires[ids.index(dep)] in out  # the original bytes, verbatim
    assert {e.message_id for e in of(a.events(), RepairSent)} == set(asked)


def test_other_holders_back_off_by_xor_distance_and_cancel_when_beaten():
    a, b, c, ids, wires = _missing_setup()
    for w in wires[:-1]:  # carol gets everything
        c.receive(w, T0 + 200)
    b.send(b"please repair", T0 + 100 + T_MAX)
    request = take_content(b)[0]
    dep = parse(request).repair_request[0].message_id
    now = T0 + 100 + T_MAX + 5
    c.receive(request, now)
    distance = hash64("carol") ^ hash64("alice")
    assert c._repair.due.get(dep) == now + distance * hash64(dep) % T_MAX
    c.receive(wires[ids.index(dep)], now + 1)  # alice's rebroadcast reaches carol first
    c.handle_timer(now + T_MAX)
    assert dep not in [e.message_id for e in of(c.events(), RepairSent)]


def test_response_groups_follow_the_formula():
    config = Config(expected_participants=1000)
    assert config.num_response_groups == 8
    mid = "some-message"
    for name in ("p1", "p2", "p3", "p4", "p5"):
        same = hash64(name, mid) % 8 == hash64("alice", mid) % 8
        assert is_responder(name, "alice", mid, config) == same
    assert is_responder("alice", "alice", mid, config)  # always for its own messages


def test_participants_outside_the_response_group_do_not_answer():
    config = dict(expected_participants=1000)
    a, b, c, ids, wires = _missing_setup(**config)
    outsider = next(f"x{i}" for i in range(1000) if not is_responder(f"x{i}", "alice", ids[0], Config(**config)))
    x = make(outsider, **config)
    for w in wires:
        x.receive(w, T0 + 50)
    b.send(b"please repair", T0 + 100 + T_MAX)
    x.receive(take_content(b)[0], T0 + 100 + T_MAX + 1)
    assert ids[0] not in x._repair.due
