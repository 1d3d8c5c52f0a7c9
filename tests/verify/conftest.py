import os
import subprocess
import sys

import pyarrow.parquet as pq
import copy

import pytest

from chat_app.export import rows as export_rows
from chat_app.sim import Scenario, Simulator


@pytest.fixture(scope="session")
def spark():
    """One local Spark for the whole session (starting a JVM takes seconds)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (SparkSession.builder.master("local[2]").appName("sds-chat tests")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def sds_chat(*args, timeout=600, env=None):
    return subprocess.run([sys.executable, "-m", "chat_app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def rewrite(path, change):
    """Apply ``change`` to an export's rows (a list of dicts), renumber the
    positions and write it back."""
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    for pos, row in enumerate(rows):
        row["pos"] = pos
    pq.write_table(table.from_pylist(rows, table.schema), path)


@pytest.fixture(scope="session")
def tampered_exports(tmp_path_factory):
    """A simulated lossy conversation of three peers, then two anomalies
    injected: the second peer holds messages 20 and 21 in the wrong order,
    the third never got message 40. Returns (directory, {what: id})."""
    out = tmp_path_factory.mktemp("tampered")
    run = sds_chat("simulate", "--peers", "3", "--messages", "60", "--loss", "0.2", "--seed", "5", "--out", str(out))
    assert run.returncode == 0, run.stderr
    first, second, third = sorted(out.glob("*.parquet"))
    log = pq.read_table(first).to_pylist()
    injected = {"swapped": (log[20]["message_id"], log[21]["message_id"]), "dropped": log[40]["message_id"],
                "swapped_by": second.stem, "dropped_by": third.stem, "other": first.stem}

    def swap(rows):
        rows[20], rows[21] = rows[21], rows[20]
        return rows

    rewrite(second, swap)
    rewrite(third, lambda rows: [r for r in rows if r["message_id"] != injected["dropped"]])
    return out, injected


@pytest.fixture(scope="session")
def clean_logs():
    """Three peers' logs of one lossless simulated conversation: {peer: [row, ...]}."""
    sim = Simulator(Scenario(peers=3, messages=20, seed=4))
    assert sim.run().identical_logs
    logs = {}
    for peer in sim.peers:
        logs[peer.nick] = list(export_rows(peer.store, peer.nick, [sim.channel_id]))  # named peer000...
        for row in logs[peer.nick]:
            row["received_at_ms"] = row["delivered_at_ms"] = 0
    return logs


@pytest.fixture
def logs(clean_logs):
    return copy.deepcopy(clean_logs)
