"""The client's command-line behaviour, run as real processes: the data
directory lock, stdin that is a file, channel names, export's refusals."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from .harness import ROOT, log_order

pytestmark = pytest.mark.slow


def sds_chat(*args: str, env: dict | None = None, stdin=subprocess.DEVNULL, timeout: float = 60):
    return subprocess.run([sys.executable, "-m", "chat_app.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          stdin=stdin, timeout=timeout, env={**os.environ, **(env or {})})


def test_a_second_peer_on_a_data_dir_in_use_refuses_to_start(spawn, tmp_path):
    first = spawn("alice")
    out = sds_chat("--headless", "--data-dir", str(first.data_dir), "--bind", "127.0.0.1", "--no-discovery")
    assert out.returncode == 2
    assert out.stdout == ""  # not even a ready event: it never listened
    (line,) = out.stderr.splitlines()
    assert str(first.data_dir) in line and "--data-dir" in line and "Traceback" not in line
    first.send("still here")
    assert first.wait_delivered(1)[0]["text"] == "still here"


def test_the_default_data_dir_is_locked_too_and_freed_when_the_holder_dies(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path)}
    args = ("--headless", "--bind", "127.0.0.1", "--no-discovery")
    holder = subprocess.Popen([sys.executable, "-m", "chat_app.cli", *args], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, **env})
    try:
        assert '"ready"' in holder.stdout.readline()
        out = sds_chat(*args, env=env)
        assert out.returncode == 2 and str(tmp_path / "sds-chat") in out.stderr
    finally:
        holder.kill()  # no goodbye: the kernel still drops the lock
        holder.wait()
    out = sds_chat(*args, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert '"ready"' in out.stdout


@pytest.mark.parametrize("source", ["file", "devnull"])
def test_headless_runs_commands_from_a_file_or_dev_null_and_leaves_at_its_end(tmp_path, source):
    commands = tmp_path / "cmds.txt"
    commands.write_text("/join #ops\nhello from a file\n/part\n")
    path = commands if source == "file" else os.devnull
    with open(path) as stdin:
        out = sds_chat("--headless", "--data-dir", str(tmp_path / "d"), "--bind", "127.0.0.1", "--no-discovery",
                       stdin=stdin, timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    names = [line.split('"')[3] for line in out.stdout.splitlines()]
    assert names[0] == "ready" and names[-1] == "bye"
    if source == "file":
        assert '"text":"hello from a file"' in out.stdout and '"channel":"ops"' in out.stdout
        assert names.index("joined") < names.index("delivered") < names.index("parted")


def test_quitting_right_after_starting_leaves_nothing_pending(spawn, lan, tmp_path):
    """Quitting while discovery is still resolving what it browses and
    repeating our own records: nothing may be left pending or failing."""
    host = lan.host("alice")
    spawn("bob", "--bind", "127.0.0.1", host=host)  # another peer on alice's host, for her to resolve
    commands = tmp_path / "cmds.txt"
    commands.write_text("/join #ops\n/join #dev\n")
    cmd = [*host.prefix(), sys.executable, "-m", "chat_app.cli", "--headless",
           "--data-dir", str(tmp_path / "alice"), "--bind", "127.0.0.1"]
    with open(commands) as stdin:
        out = subprocess.run(cmd, cwd=ROOT, stdin=stdin, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for complaint in ("Task was destroyed", "never retrieved", "Traceback"):
        assert complaint not in out.stderr, out.stderr


def test_channel_names_are_checked_for_join_channel_and_serve(spawn, tmp_path):
    alice = spawn("alice", "--channel", "general", "--channel", "random")
    alice.send("/join #bad!name")  # after a space would come a passphrase
    assert "not allowed in a channel name" in alice.wait_for(lambda e: e["event"] == "error")["reason"]
    alice.send("/join #random")  # already joined: made current, nothing announced
    assert alice.wait_for(lambda e: e["event"] == "joined")["already"] is True
    alice.send("in random")
    assert alice.wait_delivered(1, channel="random")[0]["text"] == "in random"
    for args in (("--channel", "bad name"), ("serve", "--channel", "#" + "x" * 300)):
        out = sds_chat("--data-dir", str(tmp_path / "other"), "--bind", "127.0.0.1", "--no-discovery", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert "channel name" in out.stderr.splitlines()[-1]


def test_topic_travels_and_ignore_hides_a_nick_across_a_restart(spawn):
    alice, bob = spawn("alice"), spawn("bob")
    for me, other in ((alice, bob), (bob, alice)):
        me.wait_for(lambda e, o=other: e["event"] == "peer_joined" and e["peer_id"] == o.peer_id, 15)
    alice.send("/topic release on friday")
    got = bob.wait_for(lambda e: e["event"] == "topic")
    assert (got["topic"], got["nick"], got["channel"]) == ("release on friday", "alice", "general")
    bob.send("/topic")
    bob.wait_for(lambda e: e["event"] == "topic" and e["topic"] == "release on friday", fresh=True)
    alice.send("/ignore BOB")
    assert alice.wait_for(lambda e: e["event"] == "ignoring")["nicks"] == ["bob"]
    bob.send("you cannot see this")
    deadline = time.monotonic() + 30
    while len(log_order(alice)) < 2 and time.monotonic() < deadline:  # stored, though not shown
        time.sleep(0.2)
    bob.send("/quit")
    bob.proc.wait(timeout=20)
    alice.stop()
    alice.start()  # the list is kept in her store
    assert alice.wait_for(lambda e: e["event"] == "ready")
    alice.send("/ignore")
    assert alice.wait_for(lambda e: e["event"] == "ignoring")["nicks"] == ["bob"]
    texts = [e.get("text") for e in alice.previous_events + alice.events if e["event"] == "delivered"]
    assert "release on friday" in texts and "you cannot see this" not in texts
    assert len(log_order(alice)) == 2  # still stored: everyone's log stays the same
