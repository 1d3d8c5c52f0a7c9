"""Another peer's text is data, in a real terminal: a reader's client in tmux
on a host of the test LAN, and an attacker on a host of its own that builds
and signs its datagrams itself (past any sender's check) and announces a
nick full of escape sequences over mDNS; the reader's SQLite also holds
hostile rows stored before the wire rule existed. Title sequences (OSC 0/2),
hyperlinks (OSC 8), clipboard writes (OSC 52), colours, erasing, cursor
movement, carriage returns, backspaces and right-to-left overrides: the
window title stays, no colour or clipboard buffer appears, and the text
after each hostile sequence is still on screen. A second user pastes such
text into a client of her own; nothing on the reader's screen moves."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid

import cbor2
import pytest

from chat_app.crypto import Identity, Kind, seal
from chat_app.store import Store, StoredMessage
from sync.sds import Channel

from .harness import ROOT
from .test_tmux import screen, tmux, wait_screen

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]

READER_PORT, MALLORY_PORT = 4000, 5000
TITLE = "reader-title"
CLIPBOARD = "cm0gLXJmIH4="  # base64 of "rm -rf ~", for OSC 52
MDNS_NICK = "\x1b]0;mdns-title\x07\x1b[41mmal\u202elory"
STORED = [  # (nick, kind, text): rows that reached the store before the wire rule
    ("\x1b]0;nick-title\x07mal\u202elory", "text", "before-1 \x1b[31mRED-1\x1b[0m \x1b]2;row-title\x07after-1"),
    ("carol", "text", "\x1b]8;;http://evil.example/\x1b\\link-2\x1b]8;;\x1b\\ after-2"),
    ("heidi", "text", f"\x1b]52;c;{CLIPBOARD}\x1b\\after-6"),  # ST, not BEL: Rich drops a BEL
    ("dave\x1b[2J", "text", "wipe-3\x1b[2K\x1b[2J\x1b[H\x1b[5A\x1b[10Cmoved after-3"),
    ("erin", "me", "typed\rover\b\b\bbs after-4"),
    ("frank", "text", "\u202eevil-5\u202c\u2066iso\u2069 after-5"),
    ("\x1b[31mgrace", "topic", "topic \x1b]0;topic-title\x07after-topic"),
]
SHOWN = ["before-1 ␛[31mRED-1␛[0m ␛]2;row-title␇after-1", "␛]8;;http://evil.example/␛\\link-2␛]8;;␛\\ after-2",
         "␛]52;c;cm0gLXJmIH4=␛\\after-6", "wipe-3␛[2K␛[2J␛[H␛[5A␛[10Cmoved after-3", "typed␍over␈␈␈bs after-4",
         "evil-5iso after-5", "topic ␛]0;topic-title␇after-topic"]  # each sequence drawn, and what follows it
ANNOUNCER = """
import asyncio, sys
from chat_app.crypto import Identity
from chat_app.net.discovery import Discovery, PeerInfo

async def main():
    identity = Identity.from_bytes(bytes.fromhex(sys.argv[1]))
    me = PeerInfo(identity.sender_id, sys.argv[2], (sys.argv[3],), int(sys.argv[4]), ("general",), identity.public_key)
    await Discovery(me, lambda peer: None, lambda peer_id: None).start()
    print("announced", flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def now_ms() -> int:
    return int(time.time() * 1000)


def stored_before_the_rule(data_dir) -> None:
    store = Store(data_dir / "sds-chat.sqlite3")
    start = now_ms() - 60_000
    rows = [StoredMessage("general", f"{i:032x}", start + i, f"{i:x}" * 32, nick, kind, text, 1, start + i, b"-",
                          start + i, start + i, False) for i, (nick, kind, text) in enumerate(STORED, 1)]
    store.commit_step("general", None, rows, start)
    store.join("general", start)
    store.close()


class Mallory:
    """An attacker on a host of its own: a key of its own, payloads written as
    CBOR by hand, each datagram signed with ``chat_app.crypto``."""

    def __init__(self, lan, reader: tuple[str, int]) -> None:
        self.identity = Identity.generate()
        self.host = lan.host("mallory")
        self.reader = reader
        self.sock = self.host.socket()
        self.sock.bind(("0.0.0.0", MALLORY_PORT))
        self.channel = Channel("general", self.identity.sender_id, now_ms())
        self.seq = 0
        self.announcer: subprocess.Popen | None = None

    def announce(self, nick: str) -> None:
        self.announcer = subprocess.Popen(
            [*self.host.prefix(), sys.executable, "-c", ANNOUNCER, self.identity.to_bytes().hex(), nick,
             self.host.address, str(MALLORY_PORT)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.announcer.stdout.readline().strip() == "announced"

    def say(self, text: str, nick: str = "mallory", kind: str = "text") -> None:
        self.seq += 1
        payload = {"kind": kind, "nick": nick, "text": text, "seq": self.seq, "sent_at": now_ms()}
        self.channel.send(cbor2.dumps(payload, canonical=True), now_ms())
        self._send()

    def typing(self, nick: str) -> None:
        self.channel.send_ephemeral(cbor2.dumps({"kind": "typing", "nick": nick, "sent_at": now_ms()}), now_ms())
        self._send()

    def _send(self) -> None:
        for out in self.channel.datagrams_to_send(now_ms()):
            self.sock.sendto(seal(self.identity, Kind.SDS, out.data), self.reader)

    def close(self) -> None:
        self.sock.close()
        if self.announcer is not None:
            self.announcer.terminate()
            self.announcer.wait(10)


@pytest.fixture
def terminals(tmp_path, lan):
    tag = uuid.uuid4().hex[:6]
    sessions = []

    def start(nick: str, *options: str) -> str:
        session = f"sds-{nick}-{tag}"
        host = " ".join((lan.hosts.get(nick) or lan.host(nick)).prefix())
        # tmux's environment can hold COLUMNS and LINES from where its server started: the pane's size is the truth
        cmd = (f"cd {ROOT} && env -u COLUMNS -u LINES {host} {sys.executable} -m chat_app.cli --nick {nick} "
               f"--data-dir {tmp_path / nick} --no-bell {' '.join(options)}")
        tmux("new-session", "-d", "-s", session, "-x", "110", "-y", "40", cmd)
        sessions.append(session)
        tmux("set-option", "-t", session, "set-clipboard", "on")  # an OSC 52 would make a tmux buffer
        tmux("select-pane", "-t", session, "-T", TITLE)
        wait_screen(session, "Message, or /help")
        return session

    yield start
    for session in sessions:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def title(session: str) -> str:
    return tmux("display", "-p", "-t", session, "#{pane_title}").strip()


def buffers() -> str:
    return tmux("list-buffers", "-F", "#{buffer_sample}") if tmux("list-buffers") else ""


def coloured(session: str, start: str, end: str) -> str:
    """The escape sequences tmux holds between ``start`` and ``end`` on one line
    (``capture-pane -e``): what styles that stretch of the text."""
    for line in tmux("capture-pane", "-e", "-p", "-t", session).splitlines():
        if start in line and end in line:
            return "".join(re.findall(r"\x1b\[[0-9;]*m", line[line.index(start):line.index(end)]))
    raise AssertionError(f"{start!r}…{end!r} not on one line:\n{screen(session)}")


def test_hostile_text_nicks_and_rows_move_nothing_on_the_readers_screen(terminals, lan, tmp_path):
    stored_before_the_rule(tmp_path / "reader")
    reader = terminals("reader", "--port", str(READER_PORT))
    wait_screen(reader, "after-5")
    shown = wait_screen(reader, "after-topic")  # the topic line, read from the store
    for text in SHOWN:
        assert text in shown, f"{text!r} not in\n{shown}"

    mallory = Mallory(lan, (lan.hosts["reader"].address, READER_PORT))
    try:
        mallory.announce(MDNS_NICK)
        wait_screen(reader, "● ?")  # found, its nick dropped
        mallory.say("rtl \u202eevil-L1\u202c after-L1")  # what the wire lets through, drawn without its override
        mallory.say("L2 \x1b]0;live-title\x07\x1b[31mRED-L2 \x1b[2J after-L2")
        mallory.say("L3 hi", nick="\x1b]2;nick-title\x07\x1b[31mmallory")
        mallory.say("L4 \x1b]0;topic-title\x07 after-L4", kind="topic")
        mallory.say("L5 \x1b]52;c;" + CLIPBOARD + "\x07 \rover\b\b after-L5", kind="me")
        mallory.typing("\x1b]0;typing-title\x07mallory")
        wait_screen(reader, "rtl evil-L1 after-L1")
        doctor = lan.host("doctor").run(sys.executable, "-m", "chat_app.cli", "doctor", "--seconds", "3")
        assert "␛]0;mdns-title␇␛[41mmallory" in doctor.stdout and "\x1b" not in doctor.stdout
    finally:
        mallory.close()

    alice = terminals("alice")  # a user on a host of her own pastes hostile text
    wait_screen(alice, "● reader")
    for pasted in ("bell\x07 and back\b\bspace", "paste \x1b]0;paste-title\x07\x1b[31mRED-P\x1b[2J after-P"):
        tmux("set-buffer", "-b", "hostile", pasted)
        tmux("paste-buffer", "-p", "-d", "-b", "hostile", "-t", alice)
        time.sleep(0.5)
    assert "U+0007" in wait_screen(alice, "not pasted")
    tmux("send-keys", "-t", alice, "C-u", "alice-after", "Enter")
    wait_screen(reader, "alice-after")
    time.sleep(1)

    shown = screen(reader)
    assert title(reader) == TITLE and title(alice) == TITLE
    assert CLIPBOARD not in buffers() and "rm -rf" not in buffers()
    for text in ("RED-L2", "L3 hi", "after-L4", "after-L5", "live-title", "nick-title", "typing-title"):
        assert text not in shown, text  # refused by the wire rule
    for text in SHOWN:
        assert text in shown, text  # and nothing after a hostile sequence was wiped or drawn over
    assert "\u202e" not in shown and "\u2066" not in shown
    assert coloured(reader, "␛[31m", "after-1") == ""  # RED-1 is drawn as the text around it is
    assert coloured(reader, "wipe-3", "after-3") == ""
