"""The report's pictures, drawn with matplotlib and returned as inline SVG.

Figures are made with ``matplotlib.figure.Figure`` directly (no pyplot, so no
global state and no display needed). Text stays text in the SVG
(``svg.fonttype = none``): the page is smaller and the browser's fonts draw it.
"""

from __future__ import annotations

import io

from matplotlib import rcParams
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from chat_app.verify.text import peer_label

rcParams["svg.fonttype"] = "none"
rcParams["svg.hashsalt"] = "sds-chat"  # the same report gives the same SVG
rcParams["font.size"] = 9

INK, MUTED = "#222222", "#9a9a9a"
FIRST, SECOND = "#d9480f", "#1c7ed6"  # the two messages of an order witness
MARKS = (("p50", "o"), ("p90", "s"), ("p99", "^"))


def _svg(fig: Figure) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg"):]  # drop the XML prologue: the SVG goes inline


def delivery_delays(peers: list[dict]) -> str | None:
    """Per peer, p50 / p90 / p99 of send-to-delivery delay and of the wait
    for history, as markers on one line per peer. None if nothing was timed."""
    fig = delays_figure(peers)
    return None if fig is None else _svg(fig)


def delays_figure(peers: list[dict]) -> Figure | None:
    timed = [p for p in peers if p.get("delay_ms")]
    if not timed:
        return None
    # constrained: the legend gets a row of its own below the panels, never over a marker
    fig = Figure(figsize=(8.5, 1.3 + 0.32 * len(timed)), layout="constrained")
    panels = fig.subplots(1, 2, sharey=True)
    for ax, key, title in ((panels[0], "delay_ms", "send → delivery (ms)"),
                           (panels[1], "wait_ms", "waited for history (ms)")):
        shown = []
        for y, p in enumerate(timed):
            stats = p[key] or {}
            values = [stats.get(k) for k, _ in MARKS]
            if None in values:
                continue
            shown += values
            ax.plot([values[0], values[2]], [y, y], color=MUTED, linewidth=1.5, zorder=1)
            for (_, marker), value, colour in zip(MARKS, values, (INK, SECOND, FIRST), strict=True):
                ax.scatter([value], [y], marker=marker, color=colour, s=28, zorder=2)
        ax.set_xlim(*_span(shown))
        ax.set_title(title, loc="left")
        ax.grid(axis="x", color="#e5e5e5")
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
    panels[0].set_yticks(range(len(timed)), [peer_label(p) for p in timed], parse_math=False)
    panels[0].invert_yaxis()
    legend = [Line2D([], [], linestyle="", marker=m, color=c, label=k)
              for (k, m), c in zip(MARKS, (INK, SECOND, FIRST), strict=True)]
    fig.legend(handles=legend, loc="outside lower right", frameon=False, ncols=3)
    return fig


def _span(values: list[int]) -> tuple[float, float]:
    """An axis for milliseconds: from 0 (or the lowest value, if a skewed
    clock made one negative) past the highest, at least 1 ms wide - never the
    ±0.04 matplotlib centres on a column of zeros."""
    low, high = min([0, *values]), max([1, *values])
    return low, high + 0.06 * (high - low)


def order_witness(example: dict, logs: dict[str, list[dict]], names: dict[str, str] | None = None) -> str:
    """Two peers' logs side by side around an order witness: each message a
    label at its position, the same message joined by a line, the two
    messages of the witness in colour - where the lines cross, the peers
    disagree. ``names``: how to call the peers (by id; inert)."""
    p, q = example["peer_id"], example["other_peer_id"]
    names = names or {}
    colour = {example["message_id"]: FIRST, example["other_message_id"]: SECOND}
    height = max(len(logs.get(p, [])), len(logs.get(q, [])), 1)
    fig = Figure(figsize=(6.2, 0.5 + 0.26 * height))
    ax = fig.subplots()
    where: dict[str, dict[int, int]] = {}
    for x, peer in ((0, p), (1, q)):
        for y, row in enumerate(logs.get(peer, [])):
            where.setdefault(row["message_id"], {})[x] = y
            text = (row.get("content") or "")[:18]
            label = f"{row['pos']:>5}  {row['message_id'][:8]}  {text}"
            ax.text(x + (-0.04 if x == 0 else 0.04), y, label, ha="right" if x == 0 else "left", va="center",
                    fontfamily="monospace", color=colour.get(row["message_id"], INK),
                    fontweight="bold" if row["message_id"] in colour else "normal", parse_math=False)
    for message_id, at in where.items():
        if len(at) == 2:
            ax.plot([0, 1], [at[0], at[1]], color=colour.get(message_id, MUTED),
                    linewidth=2.2 if message_id in colour else 0.8)
    ax.set_xlim(-1.6, 2.6)
    ax.set_ylim(height - 0.5, -1.3)
    ax.text(-0.04, -1, names.get(p, f"peer {p[:12]}"), ha="right", fontweight="bold", parse_math=False)
    ax.text(0.04 + 1, -1, names.get(q, f"peer {q[:12]}"), ha="left", fontweight="bold", parse_math=False)
    ax.axis("off")
    return _svg(fig)
