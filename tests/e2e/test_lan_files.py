"""Files across hosts of the test LAN: offered in a channel, fetched in checked
chunks over the replication port from whoever holds them."""

import hashlib
import os
import shutil

import pytest

from .test_headless import _introduced
from .test_tmux import clients, tmux, wait_screen  # noqa: F401  (clients: a fixture)

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
    left = [e["reason"] for e in dave.events if e["event"] == "file_source_left"]
    assert set(left) <= {"does not hold it (not held here)"}, left  # carol, if asked before bob
    progress = [e for e in dave.events if e["event"] == "file_progress"]
    assert progress and progress[-1]["done"] == SIZE


def test_a_private_channels_file_crosses_the_switch_sealed(spawn, lan, tmp_path):
    from .test_lan_crypto import PASS, ROOM, Capture

    marker = b"LAUNCH-CODES-IN-THE-CLEAR:"
    original = tmp_path / "secret-plans.txt"
    original.write_bytes(marker * 40_000)  # a megabyte of it: any chunk in the clear would show it
    capture = Capture(lan.switch)
    alice = spawn("alice", "--channel", f"{ROOM}:{PASS}")
    bob = spawn("bob", "--channel", f"{ROOM}:{PASS}")
    _introduced(alice, bob)
    alice.send(f"/send {original}")
    offer = _offer(bob)
    assert offer["channel"] == ROOM
    bob.send(f"/accept {offer['number']}")
    assert open(_received(bob)["path"], "rb").read() == original.read_bytes()
    wire = capture.stop()
    assert len(wire) > original.stat().st_size  # the capture saw the transfer
    assert marker[:16] not in wire and b"secret-plans" not in wire


def test_a_file_in_a_direct_conversation(spawn):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    original = alice.data_dir.parent / "for-bob.bin"
    original.write_bytes(os.urandom(300_000))
    alice.send("/query bob")
    alice.wait_for(lambda e: e["event"] == "dm_open")
    alice.send(f"/send {original}")
    offer = _offer(bob)
    assert offer["channel"] == f"@{alice.peer_id}"
    bob.send("/accept")  # alone: the latest offer
    assert open(_received(bob)["path"], "rb").read() == original.read_bytes()
    bob.send("/files")
    listed = bob.wait_for(lambda e: e["event"] == "files", fresh=True)["files"]
    assert [(f["name"], f["state"]) for f in listed] == [("for-bob.bin", "done")]


def test_a_download_killed_midway_resumes_after_a_restart(spawn, tmp_path):
    original = tmp_path / "big.bin"
    with open(original, "wb") as f:
        for _ in range(120):
            f.write(os.urandom(1_000_000))
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.send(f"/send {original}")
    bob.send(f"/accept {_offer(bob)['number']}")
    cut = bob.wait_for(lambda e: e["event"] == "file_progress" and e["done"] > 5_000_000, 60)
    bob.kill9()
    assert cut["done"] < original.stat().st_size, "the download ended before it could be cut"
    bob.start()  # nothing typed: the accepted download carries on by itself
    resumed = bob.wait_for(lambda e: e["event"] == "file_progress", 60)
    assert resumed["done"] > cut["done"]  # its first chunk after the restart adds to what was verified before
    got = _received(bob, 120)
    assert hashlib.sha256(open(got["path"], "rb").read()).hexdigest() == hashlib.sha256(
        original.read_bytes()).hexdigest()
    assert not any(p.name.endswith(".part") for p in (bob.data_dir / "files-partial").iterdir())


def test_a_store_peer_keeps_a_file_and_serves_it_when_the_sender_is_gone(spawn, tmp_path):
    original = tmp_path / "minutes.odt"
    original.write_bytes(os.urandom(2_000_000))
    alice, store = spawn("alice"), spawn("store", "serve", "--channel", "general")
    _introduced(alice, store)
    alice.send(f"/send {original}")
    assert _offer(store)["auto"] is True  # nothing asked: a store keeps every file
    kept = _received(store)
    assert open(kept["path"], "rb").read() == original.read_bytes()
    alice.stop()
    bob = spawn("bob")
    bob.send(f"/accept {_offer(bob, 90)['number']}")
    assert open(_received(bob, 120)["path"], "rb").read() == original.read_bytes()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_the_client_asks_then_draws_the_progress_and_says_where_it_saved(spawn, clients, tmp_path):  # noqa: F811

    alice = clients("alice")
    bob = spawn("bob")
    wait_screen(alice, "● bob")
    original = tmp_path / "slides.pdf"
    original.write_bytes(os.urandom(4_000_000))
    bob.send(f"/send {original}")
    shown = wait_screen(alice, "/accept 1 to fetch it")  # the screen is narrow: the line wraps
    assert "bob offers slides.pdf (4.0 MB):" in shown
    assert "[file] slides.pdf (4.0 MB," in shown and "sds-file" not in shown, shown  # not the facts line
    tmux("send-keys", "-t", alice, "/accept 1", "Enter")
    shown = wait_screen(alice, "slides.pdf saved as", 60)
    assert "] 100%" in shown and "MB/s" in shown, shown
    assert (tmp_path / "alice" / "downloads" / "slides.pdf").read_bytes() == original.read_bytes()
