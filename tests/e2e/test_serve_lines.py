"""``sds-chat serve`` speaks to a person: readable lines at start, for peers
coming and going, and a summary of what it kept; JSON only with ``--json``.
A real store peer process and a real headless peer, on loopback."""

import json
import queue
import signal
import subprocess
import sys
import threading
import time

from chat_app import events as ev
from chat_app.serve_lines import ServeLines
from chat_app.store import Store, StoreUnreadable, database_path

from .harness import ROOT, HeadlessPeer


def serve(data_dir, *args):
    return subprocess.Popen([sys.executable, "-m", "chat_app.cli", "serve", "--data-dir", str(data_dir),
                             "--no-discovery", "--bind", "127.0.0.1", "--channel", "general", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def reader(proc) -> queue.Queue:
    """The process's stdout, line by line, read on a thread (a test never blocks on a silent
    process); None at its end."""
    lines: queue.Queue = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def kept(data_dir, channel: str) -> int:
    """What the running store peer has stored, read as ``export`` reads it."""
    try:
        store = Store(database_path(data_dir), read_only=True)
    except StoreUnreadable:
        return 0
    try:
        return store.count(channel)
    finally:
        store.close()


def test_a_store_peer_says_what_it_keeps_in_lines_for_people(tmp_path):
    store = serve(tmp_path / "store", "--mailbox", "--channel", "~" + "ab" * 16)
    out, alice = reader(store), None
    try:
        start = [out.get(timeout=60) for _ in range(5)]
        assert start[0].startswith("store peer store (") and "listening on 127.0.0.1, port " in start[0]
        port = int(start[0].split("port ")[1].split(" ")[0])
        assert start[1:4] == ["keeps and serves the full history of: #general\n",
                              f"keeps blind (encrypted, without the key): ~{'ab' * 16}\n",
                              "mailbox: holds sealed direct messages for peers who are away\n"]
        alice = HeadlessPeer(tmp_path / "alice", "alice", "--no-discovery", "--peer", f"127.0.0.1:{port}")
        met = out.get(timeout=60)  # heard from over --peer: no announcement, so no nick yet
        assert met.startswith("+ ") and f"({alice.peer_id[:8]}…) at 127.0.0.1:{alice.port}: " in met, met
        alice.send("kept by the store")
        deadline = time.monotonic() + 60
        while kept(tmp_path / "store", "general") < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        store.send_signal(signal.SIGTERM)
        store.wait(timeout=30)
        if alice is not None:
            alice.stop()
    rest = list(iter(lambda: out.get(timeout=30), None))
    assert not [line for line in start + rest if line.startswith("{")]  # no JSON
    summary = next(line for line in rest if line.startswith("last "))
    assert "kept #general 1;" in summary, rest
    assert rest[-1] == "stopped\n"


def test_serve_json_writes_events_as_before(tmp_path):
    store = serve(tmp_path / "store", "--json")
    try:
        ready = json.loads(store.stdout.readline())
    finally:
        store.send_signal(signal.SIGTERM)
        store.communicate(timeout=30)
    assert ready["event"] == "ready" and ready["channels"] == ["general"]


def test_what_peers_send_is_shown_inert():
    lines = ServeLines(blind=[], mailbox=False, clock=lambda: 0.0)
    shown = lines.event(ev.PeerJoined("f" * 32, "\x1b]0;owned\x07eve\u202e", ("10.0.0.9", 4000), None, (),
                                      ("general", "x\x1b[2J")))
    assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
    assert shown == "+ ␛]0;owned␇eve (ffffffff…) at 10.0.0.9:4000: #general, #x␛[2J\n"
    assert lines.event(ev.PeerUpdated("f" * 32, "\x1b]0;owned\x07eve\u202e", ("10.0.0.9", 4001), None, (),
                                      ("general", "x\x1b[2J"))) is None  # only its address moved
