"""A channel's life as a terminal user sees it: the client in tmux on one host
of the test LAN, and a headless peer on another that comes in (found by
mDNS), renames itself, sets the topic, goes away and quits."""

import shutil
import subprocess
import sys
import time
import uuid

import pytest

from chat_app.store import Store

from .harness import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]


SERVER = f"sds-life-{uuid.uuid4().hex[:6]}"  # a tmux server of our own: another's clients cannot shrink the window


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SERVER, *args], capture_output=True, text=True, check=True).stdout


def wait_screen(session: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = tmux("capture-pane", "-p", "-t", session)
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in {session}:\n{tmux('capture-pane', '-p', '-t', session)}")


@pytest.fixture
def alice(tmp_path, lan):
    session = "alice"
    data = tmp_path / "alice"
    store = Store(data / "sds-chat.sqlite3")
    store.join("general", 0)
    store.close()
    host = " ".join(lan.host("alice").prefix())
    cmd = f"cd {ROOT} && {host} {sys.executable} -m chat_app.cli --nick alice --data-dir {data} --no-bell"
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "30", cmd)
    wait_screen(session, "Message, or /help")
    yield session
    subprocess.run(["tmux", "-L", SERVER, "kill-server"], capture_output=True)


def test_join_nick_topic_away_and_quit_show_in_a_real_terminal(alice, spawn):
    time.sleep(5)  # peers found in the first seconds were there before us: no join line for them
    bob = spawn("bob")
    wait_screen(alice, f"--> │ bob ({bob.peer_id[:8]}) has joined")  # the needles fit one line at 80 columns
    bob.send("/nick robert")
    wait_screen(alice, "-- │ bob is now known as robert")
    bob.send("/topic release on Friday")
    shown = wait_screen(alice, "#general: release on Friday  (set by robert)")  # the line above the history
    wait_screen(alice, "-- │ robert set the topic:")
    bob.send("/away lunch")
    wait_screen(alice, "-- │ robert is away: lunch")  # in the buffer
    shown = wait_screen(alice, "◐ robert  away:")  # in the member list, cut short at 80 columns
    assert shown.index("#general: release on Friday") < shown.index("has joined")
    bob.stop()
    wait_screen(alice, "<-- │ robert has quit")
