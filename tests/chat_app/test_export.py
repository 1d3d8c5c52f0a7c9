import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from chat_app.export import SCHEMA, ExportError, export
from chat_app.identity import load_identity
from chat_app.payload import Payload
from chat_app.store import Store, StoredMessage
from sync.sds import Channel, Delivered

T0 = 1_700_000_000_000


def _history(store: Store, channel: str, n: int) -> list[str]:
    """n real SDS messages between two peers, stored as the node stores them."""
    a, b = Channel(channel, "alice", T0), Channel(channel, "bob", T0)
    ids = []
    for i in range(n):
        speaker, listener = (a, b) if i % 2 == 0 else (b, a)
        speaker.send(Payload("text", speaker.sender_id, f"{channel} {i}", i // 2 + 1, T0).encode(), T0 + i)
        for wire in (out.data for out in speaker.datagrams_to_send(T0 + i)):
            listener.receive(wire, T0 + i)
        listener.datagrams_to_send(T0 + i)
    rows = []
    for e in a.events():
        if isinstance(e, Delivered):
            p = Payload.decode(e.content)
            rows.append(StoredMessage(channel, e.message_id, e.lamport, e.sender_id, p.nick, p.kind, p.text, p.seq,
                                      p.sent_at, e.wire, e.received_at, e.received_at + 1, e.own))
            ids.append(e.message_id)
    store.commit_step(channel, None, rows, T0)
    return ids


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_export_writes_one_row_per_message_in_log_order(tmp_path, fmt):
    store = Store(tmp_path / "db.sqlite3")
    general = _history(store, "general", 6)
    _history(store, "random", 3)
    out = tmp_path / f"export.{fmt}"
    assert export(store, "alice", out, fmt) == 9
    if fmt == "parquet":
        table = pq.read_table(out)
        assert table.schema.equals(SCHEMA)
        rows = table.to_pylist()
    else:
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_channel = {c: [r for r in rows if r["channel_id"] == c] for c in ("general", "random")}
    assert [r["message_id"] for r in by_channel["general"]] == general
    assert [r["pos"] for r in by_channel["general"]] == list(range(6))
    assert [r["pos"] for r in by_channel["random"]] == [0, 1, 2]
    assert by_channel["general"][1]["causal_history"] == [general[0]]
    assert by_channel["general"][0]["content"] == "general 0" and {r["peer_id"] for r in rows} == {"alice"}


def test_export_one_channel_and_refuse_unknown_formats(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    _history(store, "general", 4)
    _history(store, "random", 2)
    assert export(store, "alice", tmp_path / "r.jsonl", "jsonl", ["random"]) == 2
    with pytest.raises(ExportError, match="cannot write 'csv'"):
        export(store, "alice", tmp_path / "x.csv", "csv")
    with pytest.raises(ExportError, match="no history for #nosuch"):
        export(store, "alice", tmp_path / "n.jsonl", "jsonl", ["random", "nosuch"])
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "n.jsonl").exists()


def test_export_command(tmp_path):
    store = Store(tmp_path / "peer" / "sds-chat.sqlite3")
    load_identity(store, tmp_path / "peer")  # as a peer's first start makes it: export only reads it
    _history(store, "general", 3)
    store.close()
    run = [sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(tmp_path / "peer")]
    ok = subprocess.run([*run, "--out", str(tmp_path / "e.jsonl")], capture_output=True, text=True)
    assert ok.returncode == 0 and "wrote 3 rows" in ok.stdout
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 3
    bad = subprocess.run([*run, "--out", "/proc/nope/e.parquet"], capture_output=True, text=True)
    assert bad.returncode == 2 and "cannot write" in bad.stderr and "Traceback" not in bad.stderr
    none = subprocess.run([*run[:-1], str(tmp_path / "empty"), "--out", str(tmp_path / "x.parquet")],
                          capture_output=True, text=True)
    assert none.returncode == 2 and "no history" in none.stderr


def test_export_command_refuses_a_name_it_would_not_honour_and_an_unknown_channel(tmp_path):
    store = Store(tmp_path / "peer" / "sds-chat.sqlite3")
    load_identity(store, tmp_path / "peer")  # as a peer's first start makes it: export only reads it
    _history(store, "general", 3)
    store.close()
    run = [sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(tmp_path / "peer")]
    csv = subprocess.run([*run, "--out", str(tmp_path / "x.csv")], capture_output=True, text=True)
    assert csv.returncode == 2 and ".parquet or .jsonl" in csv.stderr and "Traceback" not in csv.stderr
    assert not (tmp_path / "x.csv").exists()  # never Parquet under a .csv name
    nosuch = subprocess.run([*run, "--out", str(tmp_path / "n.parquet"), "--channel", "nosuch"],
                            capture_output=True, text=True)
    assert nosuch.returncode == 2 and "no history for #nosuch" in nosuch.stderr and "#general" in nosuch.stderr
    forced = subprocess.run([*run, "--out", str(tmp_path / "x.data"), "--format", "jsonl"],
                            capture_output=True, text=True)
    assert forced.returncode == 0 and len((tmp_path / "x.data").read_text().splitlines()) == 3
