"""An export is written by whoever made it: its ids, channel names and
message text reach the verify report - the page and the terminal - inert
and escaped, and cannot break the pictures."""

import re

from chat_app.verify import page, text
from tests.chat_app.test_inert_text import unsafe_characters

HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202eevil\u2066 <script>alert(1)</script> $\\frac{x$ \x9b31m after"
PEER = "a" * 20 + HOSTILE
STATS = {"p50": 10, "p90": 20, "p99": 30}


def report() -> dict:
    example = {"kind": "order_disagreement", "channel_id": HOSTILE, "peer_id": PEER, "message_id": "m1" + HOSTILE,
               "other_message_id": "m2", "other_peer_id": "b" * 32,
               "explanation": f"peer {PEER[:12]} holds {HOSTILE} before m2 in #{HOSTILE}"}
    peers = [{"peer_id": PEER, "rows": 2, "channels": 1, "anomalies": 1, "timed": 2, "delay_ms": STATS,
              "wait_ms": STATS},
             {"peer_id": "b" * 32, "rows": 2, "channels": 1, "anomalies": 1, "timed": 2, "delay_ms": STATS,
              "wait_ms": STATS}]
    return {"verdict": "inconsistent", "rows": 4, "channels": 1, "peers": peers, "seconds": 1.0,
            "anomalies": {"order_disagreement": {"count": 1, "examples": [example]}}}


def pictures(found: dict) -> list:
    (example,) = found["anomalies"]["order_disagreement"]["examples"]
    first = {"pos": 0, "message_id": example["message_id"], "content": HOSTILE}
    second = {"pos": 1, "message_id": "m2", "content": "$\\frac{x$ plain"}  # mathtext would fail on it
    return [(example, {PEER: [first, second], "b" * 32: [dict(second, pos=0), dict(first, pos=1)]})]


def test_the_page_shows_what_an_export_holds_inert_and_escaped():
    found = report()
    html = page.render(found, pictures(found))
    assert unsafe_characters(html, lines=True) == []
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "␛]0;owned␇␛[2J" in html and "after" in html
    drawn = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", html))  # the witness picture's labels
    assert "$\\frac{x$ plain" in drawn and "␛]0;owned␇␛[2Jevil" in drawn  # as text, not mathematics


def test_the_terminal_report_prints_it_inert():
    shown = text.render(report(), examples_in_report=5)
    assert unsafe_characters(shown, lines=True) == []
    assert "␛]0;owned␇" in shown and "after" in shown
