"""The verify command: exit 0 / 1 / 2, a readable report, JSON, and real
peers end to end."""

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chat_app.export import SCHEMA
from chat_app.verify.job import main as verify_main

pytestmark = pytest.mark.slow


def sds_chat(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "chat_app.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    run = sds_chat("simulate", "--peers", "3", "--messages", "60", "--loss", "0.2", "--seed", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("make, reason", [
    (lambda d: d / "nope.parquet", "no such file or directory"),
    (lambda d: (d / "x.csv").write_text("a,b") and d / "x.csv", "not an export"),
    (lambda d: (d / "x.parquet").write_bytes(b"not parquet at all") and d / "x.parquet", "not a readable Parquet"),
    (lambda d: (d / "x.jsonl").write_text("{oops\n") and d / "x.jsonl", "line 1 is not JSON"),
    (lambda d: (d / "x.jsonl").write_text('{"peer_id": "p"}\n') and d / "x.jsonl", "missing columns"),
    (lambda d: d, "no .parquet or .jsonl exports"),
])
def test_unreadable_input_exits_2_with_one_line(tmp_path, make, reason):
    run = sds_chat("verify", str(make(tmp_path)))
    assert run.returncode == 2
    assert reason in run.stderr and "Traceback" not in run.stderr
    assert len([line for line in run.stderr.splitlines() if line.startswith("sds-chat verify:")]) == 1


def test_malformed_records_and_missing_fields_exit_2(spark, tmp_path, exports, capsys):
    good = json.dumps({"peer_id": "p", "channel_id": "c", "pos": 0, "message_id": "m", "sender_id": "s",
                       "lamport_timestamp": 1, "causal_history": []})
    (tmp_path / "broken.jsonl").write_text(good + "\n{broken\n")
    assert verify_main([str(tmp_path / "broken.jsonl")]) == 2
    assert "malformed" in capsys.readouterr().err
    table = pa.Table.from_pylist([{"peer_id": None, "channel_id": "c", "pos": 0, "message_id": "m"}], SCHEMA)
    pq.write_table(table, tmp_path / "nulls.parquet")
    assert verify_main([str(tmp_path / "nulls.parquet")]) == 2
    assert "1 row lack required fields" in capsys.readouterr().err


def test_simulated_exports_verify_consistent_with_a_json_report(exports, tmp_path):
    report_file = tmp_path / "report.json"
    run = sds_chat("verify", str(exports), "--report", str(report_file))
    assert run.returncode == 0, run.stderr
    assert "verdict: CONSISTENT" in run.stdout and "verify: running 13 checks" in run.stderr
    listed = run.stderr.split("verify: running 13 checks")[1].splitlines()[0]
    assert listed.endswith("replies, reactions, edits, deletions")
    report = json.loads(report_file.read_text())
    assert report["verdict"] == "consistent" and report["rows"] == 180 and len(report["peers"]) == 3


def test_mixed_formats_and_an_inconsistent_peer_exit_1(exports, tmp_path):
    files = sorted(exports.glob("*.parquet"))
    rows = pq.read_table(files[0]).to_pylist()
    rows[3], rows[4] = rows[4], rows[3]
    for pos, row in enumerate(rows):
        row["pos"] = pos
    with (tmp_path / "tampered.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    report_file = tmp_path / "report.json"
    run = sds_chat("verify", str(files[1]), str(files[2]), str(tmp_path / "tampered.jsonl"),
                   "--report", str(report_file))
    assert run.returncode == 1, run.stderr
    assert "verdict: INCONSISTENT" in run.stdout and "order_disagreement" in run.stdout
    report = json.loads(report_file.read_text())
    example = report["anomalies"]["order_disagreement"]["examples"][0]
    assert example["message_id"] == rows[3]["message_id"] and example["other_message_id"] == rows[4]["message_id"]
