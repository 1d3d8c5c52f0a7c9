"""The UDP endpoint reads a quiet socket at once and a busy one in batches."""

import asyncio
import socket
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.net.udp import BUSY_RATE, MAX_BATCH, MAX_PAUSE_S, QUIET_RATE, Pacing, open_udp


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1.5), st.integers(1, 60) | st.just(MAX_BATCH)), min_size=1, max_size=80))
def test_the_pause_is_none_while_quiet_or_behind_and_never_over_the_cap(reads):
    """Whatever the reads (time since the last one, datagrams read), the
    pause is between 0 and ``MAX_PAUSE_S``; and 0 whenever this second and
    the last held no more than ``QUIET_RATE`` datagrams together, or the
    read filled a whole batch (more is waiting: no pause would gather more)."""
    pacing, now, history = Pacing(), 1_000.0, []
    for gap, count in reads:
        now += gap
        history.append((now, count))
        pause = pacing.pause(now, count)
        assert 0.0 <= pause <= MAX_PAUSE_S
        recent = sum(c for t, c in history if int(t) >= int(now) - 1)
        if recent <= QUIET_RATE or count == MAX_BATCH:
            assert pause == 0.0


def test_the_pause_grows_with_the_rate_and_outlasts_a_second_boundary():
    pauses = []
    for rate in (QUIET_RATE, QUIET_RATE + 10, (QUIET_RATE + BUSY_RATE) // 2, BUSY_RATE, 2 * BUSY_RATE):
        pacing = Pacing()
        pacing.pause(10.0, rate)  # a second at this rate
        pauses.append(pacing.pause(11.0, 1))  # the first read of the next second still sees it
    assert pauses[0] == 0.0
    assert 0 < pauses[1] < pauses[2] < pauses[3]  # growing with the rate...
    assert pauses[3] == pauses[4] == MAX_PAUSE_S  # ...up to the cap, reached at BUSY_RATE
    after_silence = Pacing()
    after_silence.pause(10.0, 2 * BUSY_RATE)
    assert after_silence.pause(12.5, 1) == 0.0  # a second with nothing in it: quiet again


def _receive(send) -> tuple[list[bytes], int, int]:
    """Run an endpoint on loopback while ``send(port)`` runs on a thread;
    the datagrams it handed over in order, in how many batches, and how
    many pauses it took."""
    got: list[bytes] = []
    batches = 0

    def on_datagrams(batch):
        nonlocal batches
        batches += 1
        got.extend(data for data, _ in batch)

    async def run():
        endpoint = await open_udp("127.0.0.1", 0, on_datagrams)
        sender = threading.Thread(target=send, args=(endpoint.port,))
        sender.start()
        while sender.is_alive():
            await asyncio.sleep(0.05)
        await asyncio.sleep(MAX_PAUSE_S + 0.3)  # the last pause ends, the rest is read
        pauses = endpoint.stats["pauses"]
        endpoint.close()
        await asyncio.sleep(MAX_PAUSE_S)  # a pause pending at close must not read a closed socket
        return pauses

    pauses = asyncio.run(run())
    return got, batches, pauses


def _sender(count: int, interval: float):
    def send(port):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(count):
            sock.sendto(b"%d" % i, ("127.0.0.1", port))
            time.sleep(interval)
        sock.close()
    return send


def test_a_quiet_socket_is_read_at_once():
    got, batches, pauses = _receive(_sender(10, 0.06))
    assert got == [b"%d" % i for i in range(10)]
    assert pauses == 0


def test_a_busy_socket_is_read_in_few_batches_and_loses_nothing():
    """400 datagrams a second for 1.5 s, each sent alone: read as each
    arrives that is about 600 handovers; paced, a few dozen."""
    got, batches, pauses = _receive(_sender(600, 1 / 400))
    assert got == [b"%d" % i for i in range(600)]
    assert pauses > 0
    assert batches <= 100
