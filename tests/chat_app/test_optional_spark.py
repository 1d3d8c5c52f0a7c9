"""PySpark is an optional extra: chatting never imports it, and `verify`
without it says how to install it instead of failing with a traceback."""

import subprocess
import sys

from chat_app import cli


def test_the_chat_never_imports_spark():
    code = ("import sys, chat_app.cli, chat_app.node, chat_app.headless, chat_app.tui.app, chat_app.export; "
            "sys.exit('pyspark' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_verify_without_spark_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "chat_app.verify.job", raising=False)
    assert cli.main(["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'sds-chat[verify]'" in err and "Traceback" not in err and err.count("\n") == 1
