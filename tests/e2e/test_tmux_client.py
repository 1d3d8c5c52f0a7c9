"""The client in a real terminal (tmux), where keys come as bytes: a burst of
keys read at once, a bracketed paste, Alt and Ctrl+PgUp sequences. One client
on a host of the test LAN, with a history from two earlier days."""

import shutil
import subprocess
import sys
import time
import uuid

import pytest

from chat_app.store import Store, StoredMessage

from .harness import ROOT
from .test_tmux import screen, tmux, wait_screen

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]

JAN_1 = 1_767_261_600_000  # 2026-01-01 10:00 UTC


def earlier_days(data_dir) -> None:
    """Two messages from dave in #general, a day apart; #random joined too."""
    store = Store(data_dir / "sds-chat.sqlite3")
    rows = [StoredMessage("general", f"{i:032x}", JAN_1 + i * 86_400_000, "d" * 32, "dave", "text", text, i + 1,
                          JAN_1 + i * 86_400_000, b"-", JAN_1, JAN_1, False)
            for i, text in enumerate(["new year's day", "the day after"])]
    store.commit_step("general", None, rows, JAN_1)
    store.join("general", JAN_1)
    store.join("random", JAN_1)
    store.close()


def wait_gone(session: str, needle: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = screen(session)
        if needle not in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} still on screen:\n{screen(session)}")


@pytest.fixture
def client(tmp_path, lan):
    session = f"sds-keys-{uuid.uuid4().hex[:6]}"
    data = tmp_path / "alice"
    earlier_days(data)
    host = " ".join(lan.host("alice").prefix())
    cmd = (f"cd {ROOT} && TZ=UTC {host} {sys.executable} -m chat_app.cli --nick alice --data-dir {data} --no-bell")
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", cmd)
    wait_screen(session, "Message, or /help")
    yield session
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_keys_pastes_and_channels_in_a_real_terminal(client):
    shown = wait_screen(client, "the day after")
    assert "Thursday 1 January 2026" in shown and "Friday 2 January 2026" in shown  # a rule for each day
    assert shown.index("Thursday 1") < shown.index("new year's day") < shown.index("Friday 2") < shown.index(
        "the day after")

    tmux("send-keys", "-t", client, "one", "Enter", "two", "Enter")  # one burst
    shown = wait_screen(client, "alice │ two")
    assert "alice │ one" in shown and "onetwo" not in shown

    tmux("send-keys", "-t", client, "/whoi", "Tab")  # letters and Tab in one read: the Tab completes them
    wait_screen(client, "/whois ")
    tmux("send-keys", "-t", client, "C-u")

    tmux("send-keys", "-t", client, "Up", "Up")  # input history: "one" again
    tmux("send-keys", "-t", client, " more", "Enter")
    wait_screen(client, "alice │ one more")

    tmux("set-buffer", "-b", "sds-test", "a pasted line")
    tmux("paste-buffer", "-p", "-d", "-b", "sds-test", "-t", client)  # bracketed: one line into the field
    time.sleep(0.5)
    assert "alice │ a pasted line" not in screen(client)  # not sent until Enter
    tmux("send-keys", "-t", client, "Enter")
    wait_screen(client, "alice │ a pasted line")
    tmux("set-buffer", "-b", "sds-test", "first pasted\nsecond pasted\n")
    tmux("paste-buffer", "-p", "-d", "-b", "sds-test", "-t", client)
    wait_screen(client, "Send 2 lines as one message (Enter or o), or as 2")
    tmux("send-keys", "-t", client, "y")
    wait_screen(client, "alice │ second pasted")
    tmux("set-buffer", "-b", "sds-test", "third pasted\nfourth pasted\n")  # the paste, then keys at once:
    tmux("paste-buffer", "-p", "-d", "-b", "sds-test", "-t", client, ";", "send-keys", "-t", client, "o", "typed after")
    shown = wait_screen(client, "▊  typed after ")  # in the input, after o answered the prompt
    assert "Send 2 lines" not in shown and "alice │ third pasted" in shown
    assert "│ fourth pasted" in shown and "alice │ fourth pasted" not in shown  # one message of two lines
    tmux("send-keys", "-t", client, "C-u")

    tmux("send-keys", "-t", client, "M-2")  # the sidebar's second channel
    wait_screen(client, "sds-chat · #random")
    wait_gone(client, "alice │ one more")
    tmux("send-keys", "-t", client, "C-PPage")
    wait_screen(client, "sds-chat · #general")
    tmux("send-keys", "-t", client, "C-k")
    wait_screen(client, "Switch to channel")
    tmux("send-keys", "-t", client, "rnd", "Enter")
    wait_screen(client, "sds-chat · #random")
    tmux("send-keys", "-t", client, "C-q")
