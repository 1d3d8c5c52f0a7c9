"""Three real peers chat, each exports its history, Spark verifies them."""

import json
import subprocess
import sys

import pytest

from .harness import ROOT
from .test_headless import _introduced

pytestmark = pytest.mark.slow


def test_three_peers_chat_export_and_verify_consistent(spawn, tmp_path):
    peers = [spawn(nick) for nick in ("alice", "bob", "carol")]
    _introduced(*peers)
    for round_ in range(5):
        for peer in peers:
            peer.send(f"{peer.nick} message {round_}")
    for peer in peers:
        peer.wait_delivered(15)
        peer.stop()
    exports = []
    for peer, fmt in zip(peers, ("parquet", "jsonl", "parquet"), strict=True):
        out = tmp_path / f"{peer.nick}.{fmt}"
        run = subprocess.run([sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(peer.data_dir),
                              "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0 and "wrote 15 rows" in run.stdout, run.stderr
        exports.append(str(out))
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "verify", *exports, "--report", str(report)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(report.read_text())
    assert result["verdict"] == "consistent" and result["rows"] == 45
    assert sorted(p["peer_id"] for p in result["peers"]) == sorted(p.peer_id for p in peers)
