"""The job on a real Spark standalone cluster: a master and two workers
started from the pyspark installation, on loopback, give the same verdict
and witnesses as local mode - and leave no process behind."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from chat_app.verify.job import check, find_inputs, read
from tests.verify.conftest import sds_chat

pytestmark = pytest.mark.slow  # three JVMs, two executors

WORKERS = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """spark-class Master / Worker processes, each in a process group of its
    own so that stopping one also stops the executors it launched."""

    def __init__(self, work: Path):
        import pyspark

        self.home = Path(pyspark.__file__).parent
        self.work = work
        self.env = {**os.environ, "SPARK_HOME": str(self.home), "SPARK_LOCAL_IP": "127.0.0.1",
                    "SPARK_DAEMON_MEMORY": "256m", "SPARK_NO_DAEMONIZE": "1"}
        self.port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []

    def _start(self, name: str, *args: str) -> None:
        log = (self.work / f"{name}.log").open("w")
        self.processes.append(subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *args], env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True))

    def start(self, timeout=180.0) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        for n in range(WORKERS):
            self._start(f"worker{n}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                        "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
                        "--work-dir", str(self.work / f"worker{n}"), self.url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert all(p.poll() is None for p in self.processes), self.logs()
            if self.alive_workers() == WORKERS:
                return
            time.sleep(1)
        raise AssertionError(f"workers did not register within {timeout} s\n{self.logs()}")

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as response:
                return int(json.load(response).get("aliveworkers", 0))
        except OSError:
            return 0

    def logs(self) -> str:
        return "\n".join(f"--- {f.name}\n{f.read_text()[-1500:]}" for f in sorted(self.work.glob("*.log")))

    def stop(self) -> None:
        for p in reversed(self.processes):  # workers first: they stop their executors
            _signal_group(p.pid, signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal_group(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(_group_alive(p.pid) for p in self.processes) and time.monotonic() < deadline:
            time.sleep(0.5)  # executors exit after their worker
        for p in self.processes:
            _signal_group(p.pid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def comparable(report: dict) -> dict:
    """What must not depend on where the job ran."""
    return {"verdict": report["verdict"], "rows": report["rows"], "anomalies": report["anomalies"],
            "peers": [(p["peer_id"], p["rows"], p["anomalies"], p["timed"]) for p in report["peers"]]}


def test_standalone_cluster_gives_the_local_verdict_and_witnesses(spark, tampered_exports, tmp_path):
    out, injected = tampered_exports
    local = check(spark, read(spark, find_inputs([str(out)])))
    assert local["verdict"] == "inconsistent"
    witness = local["anomalies"]["order_disagreement"]["examples"][0]
    assert witness["peer_id"] == injected["swapped_by"]
    assert {witness["message_id"], witness["other_message_id"]} == set(injected["swapped"])
    assert any(e["message_id"] == injected["dropped"] and e["peer_id"] == injected["dropped_by"]
               for e in local["anomalies"]["missing_message"]["examples"])

    cluster = Cluster(tmp_path)
    try:
        cluster.start()
        run = sds_chat("verify", "--master", cluster.url, str(out), "--report", str(tmp_path / "report.json"),
                       env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
        assert run.returncode == 1, run.stderr[-3000:] + cluster.logs()
        executor_logs = [f.read_text() for f in tmp_path.glob("worker*/app-*/*/stderr")]
        assert executor_logs, "no executor ran on the workers"
        # every check runs in the JVM: the workers need no Python (docs/verify.md promises it)
        assert not any("PythonRunner" in log for log in executor_logs)
    finally:
        cluster.stop()
    assert not any(_group_alive(p.pid) for p in cluster.processes), "a Spark process outlived the test"
    assert comparable(json.loads((tmp_path / "report.json").read_text())) == comparable(local)
