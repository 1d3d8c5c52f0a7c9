"""The report as one self-contained HTML page: no scripts, no external
files; styles and SVG pictures are inline, so the file can be mailed or
attached to a bug as it is.

Everything an export holds - ids, channel names, message text - is written
by whoever made the export, so each piece of it is HTML-escaped and made
inert (``chat_app.inert_text``: no control, bidirectional or invisible
format character) before it is put in the page or drawn in a picture."""

from __future__ import annotations

from html import escape

from chat_app.inert_text import inert
from chat_app.verify import plots
from chat_app.verify.text import peer_label

KINDS = {
    "missing_message": "a peer of the channel lacks a message others hold",
    "minority_message": "fewer than half of the channel's peers hold the message",
    "duplicate_delivery": "a peer delivered the same message more than once",
    "position_gap": "a peer's positions skip a number",
    "position_collision": "a peer has two messages at one position",
    "payload_conflict": "one message id with a different sender, Lamport timestamp or causal history",
    "lamport_order_violation": "along a peer's log, (lamport, message id) does not increase",
    "causal_gap": "a peer delivered a message but never one of its dependencies",
    "causal_inversion": "a peer has a message before one of its dependencies",
    "lamport_clock_violation": "a dependency's Lamport timestamp is not below the message's",
    "order_disagreement": "two peers hold two messages in opposite orders",
}

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 2em auto; max-width: 68em; padding: 0 1em; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { font-size: 1.15em; margin: 1.6em 0 .4em; }
.verdict { padding: .8em 1em; border-radius: 6px; color: #fff; }
.consistent { background: #2b8a3e; } .inconsistent { background: #c92a2a; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { padding: .25em .7em; border-bottom: 1px solid #e3e3e3; text-align: right; vertical-align: top; }
th { background: #f4f4f4; } td.text, th.text { text-align: left; }
code { font: 12px ui-monospace, monospace; }
.kind { margin: 1.2em 0; } .kind p { margin: .2em 0; color: #555; }
.witness { display: inline-block; margin: .5em 1.5em .5em 0; vertical-align: top; }
svg { max-width: 100%; height: auto; }
"""


def _html(text: str) -> str:
    return escape(inert(text))


def _inert_fields(record: dict) -> dict:
    """``record`` with its strings made inert, for a picture: they are drawn as SVG text."""
    return {key: inert(value) if isinstance(value, str) else value for key, value in record.items()}


def _cell(value, text=False) -> str:
    shown = "–" if value is None else (f"{value:,}" if isinstance(value, int) else str(value))
    return f'<td class="text">{_html(shown)}</td>' if text else f"<td>{_html(shown)}</td>"


def _stat(stats: dict | None, key: str):
    return None if not stats else stats.get(key)


def _peers_table(peers: list[dict]) -> str:
    head = ("<tr><th class=text>peer</th><th>rows</th><th>channels</th><th>anomalies</th><th>timed</th>"
            "<th>delay p50</th><th>p90</th><th>p99</th><th>waited p50</th><th>p90</th><th>p99</th></tr>")
    body = []
    for p in peers:
        cells = [f'<td class="text" title="{_html(p["peer_id"])}">{_html(peer_label(p))}</td>',
                 _cell(p["rows"]), _cell(p["channels"]), _cell(p["anomalies"]), _cell(p.get("timed"))]
        cells += [_cell(_stat(p.get(key), q)) for key in ("delay_ms", "wait_ms") for q in ("p50", "p90", "p99")]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _examples_table(examples: list[dict], names: dict[str, str]) -> str:
    head = ("<tr><th class=text>peer</th><th class=text>message</th><th class=text>other message</th>"
            "<th class=text>other peer</th><th class=text>explanation</th></tr>")

    def cell(e: dict, key: str) -> str:
        value = e.get(key) or ""
        if key.endswith("peer_id") and value in names:
            return f'<td class="text">{_html(names[value])}</td>'
        return f'<td class="text"><code>{_html(value[:16])}</code></td>'

    body = ["<tr>" + "".join(cell(e, k) for k in ("peer_id", "message_id", "other_message_id", "other_peer_id"))
            + _cell(e["explanation"], text=True) + "</tr>" for e in examples]
    return f"<table>{head}{''.join(body)}</table>"


def _kind(kind: str, found: dict, pictures: list, names: dict[str, str]) -> str:
    shown = len(found["examples"])
    more = f" (the first {shown} shown)" if found["count"] > shown else ""
    parts = [f'<section class="kind" id="{_html(kind)}"><h3><code>{_html(kind)}</code>: '
             f"{found['count']:,}{more}</h3><p>{_html(KINDS.get(kind, ''))}</p>"]
    if kind == "order_disagreement":
        for example, logs in pictures:
            caption = _html(example["explanation"])
            drawn = {peer: [_inert_fields(row) for row in rows] for peer, rows in logs.items()}
            parts.append(f'<figure class="witness">{plots.order_witness(_inert_fields(example), drawn, names)}'
                         f"<figcaption>{caption}</figcaption></figure>")
    parts.append(_examples_table(found["examples"], names))
    parts.append("</section>")
    return "".join(parts)


def render(report: dict, pictures: list | None = None) -> str:
    """``pictures``: ``witness.order_contexts`` for the order disagreements."""
    verdict = report["verdict"]
    total = sum(found["count"] for found in report["anomalies"].values())
    summary = (f"{report['rows']:,} rows from {len(report['peers'])} peers, {report['channels']} channel(s)"
               + (f": {total:,} anomalies of {len(report['anomalies'])} kinds" if total else ": no anomalies"))
    delays = plots.delivery_delays(report["peers"])
    names = {p["peer_id"]: peer_label(p) for p in report["peers"] if p["peer_id"]}  # inert
    sections = [
        f'<div class="verdict {_html(verdict)}"><h1>{_html(verdict.upper())}</h1>{_html(summary)}</div>',
        "<h2>Peers</h2>", _peers_table(report["peers"]),
        "<p>delay: from send (the message's Lamport timestamp, its author's clock) to delivery; "
        "waited: from arrival to delivery, while earlier history was missing. Milliseconds, approximate "
        "percentiles over the messages other peers wrote.</p>",
    ]
    if delays:
        sections += ["<h2>Delivery delay per peer</h2>", f'<figure id="delays">{delays}</figure>']
    sections.append("<h2>Anomalies</h2>")
    if report["anomalies"]:
        sections += [_kind(kind, found, pictures or [], names) for kind, found in report["anomalies"].items()]
    else:
        sections.append("<p>None: every peer holds the same messages in the same order.</p>")
    if report.get("seconds") is not None:
        sections.append(f"<p><small>checked in {report['seconds']} s</small></p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>sds-chat verify: {_html(verdict)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(sections) + "</body></html>\n")
