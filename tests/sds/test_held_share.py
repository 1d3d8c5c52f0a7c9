"""A sender's share of the incoming buffer, full of its later messages, takes
an earlier one in place of its latest: the earlier ones are what the later
ones wait for. Refusing them instead left a receiver that had lost a burst
holding 256 later messages for ever, each earlier one refused as it came
again (a runtime test of a 296-message burst failed about one run in 30)."""

from __future__ import annotations

from sync.sds import Delivered, Rejected

from .helpers import T0, make, of, parse
from .test_insider import message

SHARE = 8


def test_an_earlier_message_takes_the_place_of_the_latest_in_a_full_share():
    carol = make("carol", max_held_per_sender=SHARE)
    sender = "a" * 32
    wires: list[bytes] = []
    for n in range(SHARE + 4):  # each names the one before: a chain
        wires.append(message(sender, n, [parse(wires[-1]).message_id] if wires else [], T0))
    for wire in wires[2:]:  # the first two are lost: the rest wait for the second, and the share fills
        carol.receive(wire, T0)
    carol.events()
    assert carol.waiting == SHARE and carol.stats["held_full"] == 2
    carol.receive(wires[1], T0)  # the second comes again; it waits for the first, and gets in
    assert [r.kind for r in of(carol.events(), Rejected)] == ["evicted"]
    assert carol.stats["held_full"] == 2 and carol.waiting == SHARE
    carol.receive(wires[0], T0)
    delivered = [e.content for e in of(carol.events(), Delivered)]
    assert delivered == [b"message %d" % n for n in range(SHARE + 1)]  # all but the latest, which comes again
    for wire in wires[SHARE + 1:]:
        carol.receive(wire, T0)
    rest = [e.content for e in of(carol.events(), Delivered)]
    assert rest == [b"message %d" % n for n in range(SHARE + 1, SHARE + 4)]
