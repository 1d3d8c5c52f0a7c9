"""People, nicks and peers with real headless processes on the test LAN: a
nick that cannot travel is refused or repaired, never a crash; a peer that
crashed without a goodbye leaves even if it shares no channel with us; a
private channel comes back after a restart without its passphrase."""

import stat
import subprocess
import sys
import time

import pytest

from chat_app.peers import UNSHARED_SILENT_MS
from chat_app.store import Store, database_path
from chat_app.store.channel_keys import FILE

from .harness import ROOT

ROOM, PASS = "operations-room", "correct horse battery staple"


def test_a_long_nick_is_refused_in_one_line_and_a_saved_one_repaired(spawn, lan, tmp_path):
    host = lan.host("alice")
    refused = subprocess.run([*host.prefix(), sys.executable, "-m", "chat_app.cli", "--headless", "--nick", "x" * 40,
                              "--data-dir", str(tmp_path / "refused")], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == f"sds-chat: --nick {'x' * 40!r}: a nick must be 1 to 32 characters\n"

    saved = Store(database_path(tmp_path / "alice"))
    saved.set_nick("y" * 40)  # saved before the rule: every later start used to fail
    saved.close()
    bob = spawn("bob")
    alice = spawn("y" * 40, host=host, data_dir=tmp_path / "alice", give_nick=False)
    assert alice.ready["nick"] == "y" * 32
    alice.wait_for(lambda e: e["event"] == "error" and "cannot be used" in e["reason"])
    alice.wait_for(lambda e: e["event"] == "peer_joined" and e["peer_id"] == bob.peer_id, 30)
    alice.send("hello with a nick that travels")
    (heard,) = bob.wait_delivered(1, timeout=60)
    assert (heard["nick"], heard["text"]) == ("y" * 32, "hello with a nick that travels")
    assert alice.stop() == 0 and "Traceback" not in alice.stderr_path.read_text()
    bob.wait_for(lambda e: e["event"] == "peer_left" and e["peer_id"] == alice.peer_id, 30)  # its goodbye went out


@pytest.mark.slow
def test_a_crashed_peer_sharing_no_channel_leaves_the_count(spawn):
    alice = spawn("alice")
    dave = spawn("dave", "--channel", "elsewhere")
    alice.wait_for(lambda e: e["event"] == "peer_joined" and e["peer_id"] == dave.peer_id, 30)
    dave.kill9()  # no goodbye, no mDNS farewell
    crashed = time.monotonic()
    alice.wait_for(lambda e: e["event"] == "peer_left" and e["peer_id"] == dave.peer_id,
                   UNSHARED_SILENT_MS / 1000 + 30)
    assert time.monotonic() - crashed <= UNSHARED_SILENT_MS / 1000 + 30
    alice.send("/peers")
    listed = alice.wait_for(lambda e: e["event"] == "peers", 10, fresh=True)["peers"]
    assert dave.peer_id not in [p["peer_id"] for p in listed]


def test_a_private_channel_comes_back_after_a_restart_without_its_passphrase(spawn):
    alice = spawn("alice", "--channel", f"{ROOM}:{PASS}")
    bob = spawn("bob", "--channel", f"{ROOM}:{PASS}")
    bob.wait_for(lambda e: e["event"] == "peer_joined" and e["peer_id"] == alice.peer_id, 30)
    keys = alice.data_dir / FILE
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600 and PASS not in keys.read_text()
    alice.stop()
    alice.args = ()  # no --channel, no passphrase: what the data directory holds
    alice.start()
    assert ROOM in alice.ready["channels"] and ROOM in alice.ready.get("private", [])
    assert [e for e in alice.events if e["event"] == "error"] == []
    bob.send(f"/join #{ROOM}")
    bob.send("welcome back")
    (heard,) = alice.wait_delivered(1, timeout=60, channel=ROOM)
    assert heard["text"] == "welcome back"
