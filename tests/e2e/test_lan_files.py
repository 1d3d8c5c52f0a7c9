"""Files across hosts of the test LAN: offered in a channel, fetched in checked
chunks over the replication port from whoever holds them."""

import hashlib
import os

import pytest

from .test_headless import _introduced

pytestmark = pytest.mark.slow

SIZE = 3 * 1024 * 1024 + 12345  # a dozen chunks, the last one short


def _offer(peer, timeout: float = 60) -> dict:
    return peer.wait_for(lambda e: e["event"] == "file_offer", timeout)


def _received(peer, timeout: float = 60) -> dict:
    return peer.wait_for(lambda e: e["event"] == "file_received", timeout)


def test_a_late_joiner_fetches_a_file_from_a_third_peer_after_the_sender_quit(spawn, tmp_path):
    original = tmp_path / "holiday photos.tar"
    original.write_bytes(os.urandom(SIZE))
    alice, bob, carol = (spawn(nick) for nick in ("alice", "bob", "carol"))
    _introduced(alice, bob, carol)
    alice.send(f"/send {original}")
    assert _offer(alice)["own"] is True
    offer = _offer(bob)
    assert (offer["file_name"], offer["size"], offer["own"]) == ("holiday photos.tar", SIZE, False)
    assert offer["sha256"] == hashlib.sha256(original.read_bytes()).hexdigest()
    _offer(carol)  # carol sees it and leaves it: she holds nothing to serve
    bob.send(f"/accept {offer['number']}")
    got = _received(bob)
    assert open(got["path"], "rb").read() == original.read_bytes()
    alice.stop()

    dave = spawn("dave")  # joins late: the offer reaches him by catch-up, its bytes from bob
    late = _offer(dave, 90)
    assert late["file_name"] == "holiday photos.tar"
    dave.send(f"/accept {late['number']}")
    saved = _received(dave, 120)
    assert saved["path"].startswith(str(dave.data_dir / "downloads"))
    assert open(saved["path"], "rb").read() == original.read_bytes()
    progress = [e for e in dave.events if e["event"] == "file_progress"]
    assert progress and progress[-1]["done"] == SIZE
