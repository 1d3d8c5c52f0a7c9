"""Two real sds-chat clients in a real terminal (tmux), on two hosts of the
test LAN: what one types, the other sees - and sees it being typed."""

import shutil
import subprocess
import sys
import time
import uuid

import pytest

from .harness import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_screen(session: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = screen(session)
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in {session}:\n{screen(session)}")


@pytest.fixture
def clients(tmp_path, lan):
    tag = uuid.uuid4().hex[:6]
    sessions = []

    def start(nick: str) -> str:
        session = f"sds-{nick}-{tag}"
        host = " ".join(lan.host(nick).prefix())
        cmd = (f"cd {ROOT} && {host} {sys.executable} -m chat_app.cli --nick {nick} --data-dir {tmp_path / nick} "
               f"--no-bell")
        tmux("new-session", "-d", "-s", session, "-x", "110", "-y", "30", cmd)
        sessions.append(session)
        wait_screen(session, "Message, or /help")
        return session

    yield start
    for session in sessions:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_a_message_typed_in_one_client_appears_in_the_other(clients):
    alice, bob = clients("alice"), clients("bob")
    wait_screen(alice, "● bob")  # discovered by mDNS, listed as a member
    wait_screen(bob, "● alice")
    tmux("send-keys", "-t", alice, "hello from the terminal")
    wait_screen(bob, "alice is typing…")
    tmux("send-keys", "-t", alice, "Enter")
    shown = wait_screen(bob, "alice │ hello from the terminal")
    assert "alice is typing…" not in shown  # the message clears the indicator
    tmux("send-keys", "-t", bob, "got it", "Enter")
    wait_screen(alice, "bob │ got it")
    wait_screen(alice, "hello from the terminal  ● 1")  # acknowledged by bob
    tmux("send-keys", "-t", alice, "C-q")
    wait_screen(bob, "○ alice")  # bob sees alice leave
