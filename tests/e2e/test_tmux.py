"""Two real sds-chat clients in a real terminal (tmux), on two hosts of the
test LAN: what one types, the other sees - and sees it being typed; a message
of several lines typed with Alt+Enter or Ctrl+J arrives as one."""

import shutil
import subprocess
import sys
import time
import uuid

import pytest

from chat_app.store import Store

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


def _lines_under_one_nick(shown: str, nick: str, lines: list[str]) -> bool:
    """``lines`` on consecutive rows of the history, the first after ``nick``,
    the others with a blank nick column under it."""
    rows = shown.splitlines()
    first = next((i for i, row in enumerate(rows) if f"{nick} │ {lines[0]}" in row), None)
    if first is None or first + len(lines) > len(rows):
        return False
    column = rows[first].index(f"{nick} │ ")
    return all(rows[first + i][column:].startswith(" " * len(nick) + f" │ {line}")
               for i, line in enumerate(lines[1:], 1))


def _wait_lines_under_one_nick(session: str, nick: str, lines: list[str]) -> None:
    deadline = time.monotonic() + 20
    while not _lines_under_one_nick(shown := screen(session), nick, lines):
        assert time.monotonic() < deadline, f"not {len(lines)} lines under {nick} in {session}:\n{shown}"
        time.sleep(0.2)


def test_alt_enter_and_ctrl_j_type_one_message_of_several_lines(clients, tmp_path):
    """Alt+Enter reaches the client as ESC CR (tmux, like most terminals,
    speaks no kitty keyboard protocol) and starts a new line, as Ctrl+J (a
    line feed on every terminal) does: Enter sends the lines as one message,
    shown under one nick on both sides and stored as one row. Escape alone
    still closes what it closed."""
    alice, bob = clients("alice"), clients("bob")
    wait_screen(alice, "● bob")
    wait_screen(bob, "● alice")
    typed = [(["first", "second"], "M-Enter"),  # the key as tmux sends it
             (["roses are red", "violets are blue"], "-H 1b 0d"),  # the bytes as a terminal sends them
             (["one message", "  of three", "lines"], "C-j")]
    for lines, new_line in typed:
        for line in lines[:-1]:
            tmux("send-keys", "-t", alice, "-l", line)
            tmux("send-keys", "-t", alice, *new_line.split())
        tmux("send-keys", "-t", alice, "-l", lines[-1])
        wait_screen(alice, "⏎".join(lines))  # in the field, not sent
        assert f"alice │ {lines[0]}" not in screen(bob)
        tmux("send-keys", "-t", alice, "Enter")
        for session in (alice, bob):
            _wait_lines_under_one_nick(session, "alice", lines)
    store = Store(tmp_path / "bob" / "sds-chat.sqlite3")
    try:
        assert [m.text for m in store.messages("general") if m.nick == "alice"] == ["\n".join(lines)
                                                                                    for lines, _ in typed]
    finally:
        store.close()
    tmux("send-keys", "-t", alice, "F1")
    wait_screen(alice, "closes this help")
    tmux("send-keys", "-t", alice, "Escape")
    deadline = time.monotonic() + 10
    while "closes this help" in screen(alice):
        assert time.monotonic() < deadline, f"Escape left the help open:\n{screen(alice)}"
        time.sleep(0.2)
    tmux("send-keys", "-t", alice, "C-q")
    tmux("send-keys", "-t", bob, "C-q")
