"""The sds-chat command, run as a real process."""

import stat
import subprocess
import sys


def sds_chat(*args):
    return subprocess.run([sys.executable, "-m", "chat_app.cli", *args], capture_output=True, text=True, timeout=120)


def test_demo_shows_a_converged_log():
    out = sds_chat("demo", "--peers", "4", "--messages", "6", "--loss", "0.3", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(": hello there") == 6
    assert "Every peer holds this same log" in out.stdout


def test_user_errors_get_a_message_not_a_traceback():
    bad = (("demo", "--loss", "1.5"), ("demo", "--peers", "zero"), ("--peer", "nohost"), ("--port", "70000"),
           ("bogus",))
    for args in bad:
        out = sds_chat(*args)
        assert out.returncode == 2
        assert "Traceback" not in out.stderr and "error:" in out.stderr


def test_peer_addresses_take_ipv4_ipv6_and_names():
    from chat_app.cli import build_parser

    args = build_parser().parse_args(["--peer", "10.0.0.5:4000", "--peer", "[fd00::5]:4001", "--peer",
                                      "localhost:4002", "--peer", "[::ffff:10.0.0.6]:4003"])
    assert args.peers[:2] == [("10.0.0.5", 4000), ("fd00::5", 4001)]
    assert args.peers[2] in (("127.0.0.1", 4002), ("::1", 4002))  # a name, looked up
    assert args.peers[3] == ("10.0.0.6", 4003)
    out = sds_chat("--peer", "no-such-host.invalid:4000")
    assert out.returncode == 2 and "cannot find the address" in out.stderr and "Traceback" not in out.stderr


def test_peer_options_work_before_and_after_serve():
    from chat_app.cli import build_parser

    before = build_parser().parse_args(["--data-dir", "/x", "--nick", "s", "serve", "--channel", "general"])
    after = build_parser().parse_args(["serve", "--channel", "general", "--data-dir", "/x", "--nick", "s"])
    for args in (before, after):
        assert (str(args.data_dir), args.nick, args.channels, args.command) == ("/x", "s", ["general"], "serve")


def test_serve_help_lists_only_what_a_store_peer_takes_and_simulate_explains_its_options():
    serve = sds_chat("serve", "--help")
    assert serve.returncode == 0 and "--data-dir" in serve.stdout and "--live" in serve.stdout
    for client_only in ("--no-bell", "--headless", "--no-typing"):
        assert client_only not in serve.stdout
    simulate = sds_chat("simulate", "--help").stdout
    for option in ("--peers", "--messages", "--loss", "--seed"):
        line = next(line for line in simulate.splitlines() if line.strip().startswith(option))
        assert len(line.split(maxsplit=2)) == 3, line  # option, metavar, then its help


def test_serve_forget_stops_keeping_a_blind_channel(tmp_path):
    from chat_app.store import Store, database_path

    tag, other = bytes(16), bytes([1] * 16)
    store = Store(database_path(tmp_path))
    for t in (tag, other):
        store.blind.remember(t)
        store.blind.keep(t, t.hex(), b"ciphertext", now=1, limit=10)
    store.close()
    bad = sds_chat("serve", "--forget", "~nothex", "--data-dir", str(tmp_path))
    assert bad.returncode == 2 and "32-digit hex tag" in bad.stderr and "Traceback" not in bad.stderr
    serve = subprocess.Popen([sys.executable, "-m", "chat_app.cli", "serve", "--json", "--forget", f"~{tag.hex()}",
                              "--data-dir", str(tmp_path), "--no-discovery", "--bind", "127.0.0.1", "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = serve.stderr.readline()
        ready = serve.stdout.readline()  # serving: the forgetting is done and committed
    finally:
        serve.terminate()
        serve.wait(timeout=10)
    assert said.strip() == f"sds-chat: no longer keeping ~{tag.hex()} (1 datagram deleted)"
    assert '"event":"ready"' in ready
    store = Store(database_path(tmp_path))
    assert store.blind.tags() == [other] and store.blind.held(tag) == [] and store.blind.held(other) == [b"ciphertext"]


def test_a_nick_that_cannot_be_used_is_refused_in_one_line(tmp_path):
    for nick in ("x" * 40, "", "bad nick", "tab\there", "esc\x1b[31m"):
        out = sds_chat("--headless", "--no-discovery", "--data-dir", str(tmp_path), "--nick", nick)
        assert out.returncode == 2, (nick, out.stderr)
        assert out.stderr.count("\n") == 1 and out.stderr.startswith("sds-chat: --nick "), out.stderr
        assert "Traceback" not in out.stderr and "usage:" not in out.stderr


def test_a_saved_nick_that_is_no_longer_valid_is_repaired_at_start(tmp_path):
    from chat_app.store import Store, database_path

    store = Store(database_path(tmp_path))
    store.set_nick("y" * 40)  # saved before the rule
    store.close()
    out = subprocess.run([sys.executable, "-m", "chat_app.cli", "--headless", "--no-discovery", "--data-dir",
                          str(tmp_path), "--port", "0"], input="/quit\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f'"nick":"{"y" * 32}"' in out.stdout and "cannot be used" in out.stdout
    store = Store(database_path(tmp_path))
    assert store.nick() == "y" * 32  # the next start is clean
    store.close()


def test_what_a_peer_writes_is_readable_by_its_user_alone(tmp_path):
    """Direct messages and private channels are stored as plain text: a
    history readable by the machine's other users would undo their
    encryption. A new data directory is 0700 and every file in it 0600,
    whatever the umask; one written by an older version (0644 files in a
    0755 directory) is made private at the next start."""
    fresh, old = tmp_path / "fresh", tmp_path / "old"
    old.mkdir(mode=0o755)
    old.chmod(0o755)
    for name in ("sds-chat.sqlite3", "sds-chat.sqlite3-wal", "sds-chat.log"):
        (old / name).touch()
        (old / name).chmod(0o644)
    for data_dir in (fresh, old):
        out = subprocess.run(["sh", "-c", 'umask 000 && exec "$@"', "sh", sys.executable, "-m", "chat_app.cli",
                              "--headless", "--no-discovery", "--data-dir", str(data_dir), "--port", "0"],
                             input="hello\n/quit\n", capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700, data_dir
        modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in data_dir.iterdir() if p.is_file()}
        assert "sds-chat.sqlite3" in modes and set(modes.values()) == {"0o600"}, modes
