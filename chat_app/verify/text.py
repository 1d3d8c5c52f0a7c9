"""The report as text for the terminal: verdict, peers, anomalies. Peer
ids and explanations (which quote ids and channel names) come from the
exports, written by anyone: they are printed inert (``chat_app.inert_text``)."""

from __future__ import annotations

from chat_app.inert_text import inert

SHOWN = 5  # examples per kind on the terminal; the JSON report has more
ID_SHOWN = 8
"""Hex digits of a peer id shown beside its nick: enough to tell peers of one nick apart."""


def peer_label(peer: dict) -> str:
    """A peer (of the report) as people read it: ``alice (f940e1a2…)``; its id
    alone if its export names no nick. Inert: both come from the export."""
    peer_id = peer["peer_id"] or "?"
    if not peer.get("nick"):
        return inert(peer_id[:2 * ID_SHOWN])
    return inert(f"{peer['nick']} ({peer_id[:ID_SHOWN]}…)")


def _ms(stats: dict | None, key: str) -> str:
    return "-" if not stats or stats.get(key) is None else f"{stats[key]:,}"


def render(report: dict, examples_in_report: int) -> str:
    lines = [f"verdict: {report['verdict'].upper()} - {report['rows']:,} rows, {len(report['peers'])} peers, "
             f"{report['channels']} channel(s)", "",
             f"{'peer':<32} {'rows':>7} {'channels':>9} {'anomalies':>10}"
             f"  {'delay p50/p90/p99 ms':>22}  {'waited p99 ms':>13}"]
    for p in report["peers"]:
        delay = "/".join(_ms(p.get("delay_ms"), k) for k in ("p50", "p90", "p99"))
        lines.append(f"{peer_label(p)[:32]:<32} {p['rows']:>7,} {p['channels']:>9} {p['anomalies']:>10,}"
                     f"  {delay:>22}  {_ms(p.get('wait_ms'), 'p99'):>13}")
    if report["anomalies"]:
        lines.append("")
        for kind, found in report["anomalies"].items():
            lines.append(f"{kind}: {found['count']:,}")
            for example in found["examples"][:SHOWN]:
                lines.append(f"  - {inert(example['explanation'])}")
            if found["count"] > SHOWN:
                note = f" ({examples_in_report} in the report)" if found["count"] > examples_in_report else ""
                lines.append(f"  … {found['count'] - SHOWN:,} more{note}")
    else:
        lines += ["", "no anomalies: every peer holds the same messages in the same order"]
    lines += ["", "delay: from send (the Lamport timestamp) to delivery; waited: from arrival to delivery, "
                  "for earlier history"]
    return "\n".join(lines)
