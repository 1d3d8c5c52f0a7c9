"""The ``sds-chat`` command.

``sds-chat`` opens the terminal client; ``sds-chat --headless`` runs the same
peer reading commands on stdin and writing JSON events on stdout;
``sds-chat export`` writes a peer's history; ``sds-chat demo`` runs a
conversation between simulated peers over a lossy network.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import logging
import os
import re
import socket
import sys
from pathlib import Path
from typing import NoReturn

from chat_app.channel_names import SVS_MARK, BadChannelName, channel_name, channel_spec
from chat_app.data_dir import default_data_dir, keep_private, not_a_directory, unusable
from chat_app.inert_text import inert
from chat_app.net.addresses import normalize
from chat_app.wire_rule import chosen_nick_problem


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a probability in [0, 1)")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 60:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 60 seconds")
    return value


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # [IPv6]:port
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (or [IPv6]:PORT)")
    try:  # a name is looked up once, here: peers are told apart by address
        found = socket.getaddrinfo(host, int(port), type=socket.SOCK_DGRAM)
    except (socket.gaierror, UnicodeError):
        raise argparse.ArgumentTypeError(f"cannot find the address of {host!r}") from None
    return normalize(found[0][4][0]), int(port)


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 picks a free one)")
    return int(text)


def _channel(text: str) -> str:
    try:
        return channel_name(text)
    except BadChannelName as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _channel_to_join(text: str) -> str:
    """NAME or NAME:PASSPHRASE (a private channel; the passphrase may hold
    spaces and colons), NAME possibly marked ``+svs`` (a State Vector Sync
    channel): the name checked and without its ``#``."""
    name, colon, passphrase = text.partition(":")
    if name.startswith("~") and not colon:  # serve: a private channel kept blind, by its tag
        return _blind_channel(name)
    try:
        name, protocol = channel_spec(name)
    except BadChannelName as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name + (SVS_MARK if protocol == "svs" else "") + colon + passphrase


def _blind_channel(text: str) -> str:
    if re.fullmatch(r"~[0-9a-f]{32}", text) is None:
        raise argparse.ArgumentTypeError("a blind channel is ~ and its 32-digit hex tag")
    return text


def _peer_options(parser: argparse.ArgumentParser, defaults: bool = True, client: bool = True) -> None:
    """The options of a running peer. On a subcommand (``defaults=False``)
    an option not given leaves the value from before the subcommand alone.
    ``client``: also those that only a peer with a user takes."""

    def option(*names, **kwargs):
        if not defaults:
            kwargs["default"] = argparse.SUPPRESS
        peer.add_argument(*names, **kwargs)

    peer = parser.add_argument_group("peer")
    if client:
        option("--headless", action="store_true",
               help="no UI: read messages and /commands on stdin, write one JSON event per line on stdout")
    option("--nick", help="your name in the channels (default: the last one used, else your login)")
    option("--channel", action="append", type=_channel_to_join, dest="channels", metavar="NAME[+svs][:PASSPHRASE]",
           help="join this channel (repeatable; default: the channels joined last time, else general); "
                "NAME:PASSPHRASE joins a private channel; NAME+svs creates it as a State Vector Sync channel")
    option("--data-dir", type=Path, default=None,
           help="where history and identity live (default: $XDG_DATA_HOME/sds-chat)")
    option("--port", type=_port, default=0, help="UDP port to listen on (default: any free port)")
    option("--bind", default="", metavar="HOST",
           help="address to listen on (default: every interface, IPv4 and IPv6; 0.0.0.0: every IPv4 one); "
                "a specific one is the only one announced, and limits discovery to it (e.g. 127.0.0.1)")
    option("--peer", action="append", type=_address, default=[], dest="peers", metavar="HOST:PORT",
           help="a peer to talk to directly, for networks that block multicast (repeatable)")
    option("--no-discovery", action="store_true", help="do not use mDNS; talk only to --peer addresses")
    if client:  # a store peer has no user: nobody types, nobody to ring for
        option("--no-typing", action="store_true", help="do not tell others when you are typing")
        option("--no-bell", action="store_true", help="no terminal bell when someone mentions you")
        option("--highlight", action="append", default=[], metavar="WORD",
               help="a word that counts as a mention, besides your nick (repeatable; also in settings.toml)")
    option("--live", action="store_true",
           help="keep replication streams open and push new messages over them too (both sides must "
                           "set it; carries a channel where datagrams are dropped)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sds-chat",
        description="Serverless group chat for the terminal.",
    )
    _peer_options(parser)
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="simulate a lossy group conversation with the real peer runtime")
    serve = sub.add_parser("serve", help="an always-on store peer: keeps full history and answers catch-up "
                                         "for everyone (peer options as for chat)")
    _peer_options(serve, defaults=False, client=False)
    serve.add_argument("--forget", action="append", type=_blind_channel, default=[], metavar="~TAG",
                       help="stop keeping this private channel blind: delete what it holds of it, and no longer "
                            "announce or serve it (repeatable)")
    serve.add_argument("--json", action="store_true",
                       help="write one JSON event per line on stdout, for scripts (default: lines for people: "
                            "what it keeps at start, then peers coming and going and a summary every minute)")
    serve.add_argument("--mailbox", action="store_true",
                       help="also hold sealed direct messages for peers who are away, and hand them over when "
                            "they return (it can read none of them)")
    sub.add_parser("verify", add_help=False,
                   help="check exports from many peers for ordering consistency (Spark); verify --help for more")
    doc = sub.add_parser("doctor", help="why can't I see anyone? interfaces, addresses, the port, what mDNS hears")
    doc.add_argument("--seconds", type=_seconds, default=4.0, help="how long to listen for peers (default 4)")
    doc.add_argument("--port", type=_port, default=0, dest="doctor_port",
                     help="check that this port is free for UDP and TCP")
    sim = sub.add_parser("simulate", help="simulate a lossy conversation and write one export per peer")
    sim.add_argument("--peers", type=_positive, default=10, help="simulated peers, one export each (default 10)")
    sim.add_argument("--messages", type=_positive, default=1000, help="messages they exchange (default 1000)")
    sim.add_argument("--loss", type=_probability, default=0.2, help="datagram loss rate, 0 to <1 (default 0.2)")
    sim.add_argument("--seed", type=int, default=0, help="random seed: the same seed writes the same exports")
    sim.add_argument("--out", type=Path, required=True, help="directory to write one <peer id>.parquet per peer into")
    exp = sub.add_parser("export", help="write this peer's history: one row per delivered message per channel")
    exp.add_argument("--data-dir", type=Path, default=None, help="the peer's data directory (default: as for chat)")
    exp.add_argument("--out", type=Path, required=True, help="file to write")
    exp.add_argument("--format", choices=("parquet", "jsonl"), default=None,
                     help="default: from the file name (.jsonl/.json: jsonl; .parquet/.pq or none: parquet; "
                          "any other name is refused)")
    exp.add_argument("--channel", action="append", type=_channel, dest="export_channels", metavar="NAME",
                     help="only this channel (repeatable; default: every channel with history)")
    for p in (demo,):
        p.add_argument("--peers", type=_positive, default=5, help="simulated participants (default 5)")
        p.add_argument("--messages", type=_positive, default=12, help="messages to exchange (default 12)")
        p.add_argument("--loss", type=_probability, default=0.3, help="datagram loss rate, 0 to <1 (default 0.3)")
        p.add_argument("--seed", type=int, default=1, help="random seed: the same seed replays the same run")
    return parser


def run_demo(peers: int, messages: int, loss: float, seed: int) -> int:
    print(f"{peers} simulated peers exchange {messages} messages over links that drop {loss:.0%} of datagrams.\n")
    from chat_app.sim import Link, Scenario, Simulator

    sim = Simulator(Scenario(peers=peers, messages=messages, send_window_ms=30_000, link=Link(loss=loss), seed=seed))
    report = sim.run()
    first = sim.peers[0]
    print(f"{first.nick} ({first.id})'s log:")
    for position, message in enumerate(first.store.iter_messages(sim.channel_id)):
        print(f"  {position:>3}  lamport {message.lamport}  {message.text}")
    print()
    print(report.summary())
    converged = report.identical_logs and report.converged
    print("Every peer holds this same log, in the same order." if converged
          else "The peers did NOT converge within the time limit.")
    return 0 if converged else 1


def run_peer(args: argparse.Namespace) -> int:
    """The chat itself: the Textual client, or the headless JSON mode."""
    from chat_app.crypto import KeyFileError
    from chat_app.identity import load_identity
    from chat_app.node import Node
    from chat_app.store import DataDirBusy, DataDirLock, Store, database_path

    if args.nick is not None and (problem := chosen_nick_problem(args.nick)) is not None:
        print(f"sds-chat: --nick {args.nick!r}: {problem}", file=sys.stderr)  # one line, as /nick says it
        return 2
    data_dir = args.data_dir or default_data_dir()
    lock = DataDirLock(data_dir)
    try:
        keep_private(data_dir)
        lock.acquire()
        store = Store(database_path(data_dir))
    except DataDirBusy as exc:
        print(f"sds-chat: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file, not a directory; not writable
        lock.release()
        print(f"sds-chat: {unusable(data_dir, exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a corrupt database
        lock.release()
        print(f"sds-chat: cannot open the data directory {data_dir}: {exc}", file=sys.stderr)
        return 2
    try:
        identity = load_identity(store, data_dir)
    except KeyFileError as exc:
        print(f"sds-chat: {exc}", file=sys.stderr)
        store.close()
        lock.release()
        return 2
    from chat_app.tui.settings import nick_setting

    # one saved before the rule, or a login name, is repaired by the runtime, which says so
    nick = (args.nick or nick_setting(data_dir) or store.nick()
            or ("store" if args.command == "serve" else getpass.getuser()))
    for link in getattr(args, "forget", []):
        dropped = store.blind.forget(bytes.fromhex(link[1:]))
        print(f"sds-chat: no longer keeping {link} ({dropped} datagram{'' if dropped == 1 else 's'} deleted)",
              file=sys.stderr)
    given = [c.partition(":") for c in args.channels or []]
    passphrases = {name: passphrase for name, colon, passphrase in given if colon}
    channels = [name for name, _, _ in given] or (store.joined_channels() or ["general"])
    if getattr(args, "mailbox", False):
        from chat_app.runtime.mailbox import MAILBOX_LINK

        channels.append(MAILBOX_LINK)
    interface = args.bind if args.bind not in ("0.0.0.0", "", "::") else None

    def node(emit):
        return Node(store, nick=nick, channels=channels, emit=emit, host=args.bind, port=args.port,
                    static_peers=args.peers, discovery=not args.no_discovery, discovery_interface=interface,
                    send_typing=not args.no_typing, live=args.live, identity=identity,
                    passphrases=passphrases, keep_files=args.command == "serve")

    try:
        if args.headless or args.command == "serve":
            from chat_app.headless import Headless

            readable = None
            if args.command == "serve" and not (args.headless or args.json):
                from chat_app.serve_lines import ServeLines

                readable = ServeLines(blind=_kept_blind(store, channels), mailbox=args.mailbox)
            return asyncio.run(Headless(node, read_stdin=args.command != "serve", readable=readable).run())
        from chat_app.tui.app import ChatApp

        # the client draws on the terminal: warnings go to a file, not over the screen
        log_file = logging.FileHandler(data_dir / "sds-chat.log")
        log_file.setFormatter(InertLines())
        logging.getLogger().handlers[:] = [log_file]
        ChatApp(node, data_dir, bell=not args.no_bell, highlight=args.highlight).run()
        return 0
    except OSError as exc:
        where = args.bind or "every interface"
        print(f"sds-chat: {exc.strerror or exc} (port {args.port} on {where})", file=sys.stderr)
        return 2
    finally:
        store.close()
        lock.release()


def _kept_blind(store, channels: list[str]) -> list[str]:
    """The private channels a store peer keeps without their key: named now, or kept from before."""
    from chat_app.runtime.mailbox import MAILBOX_LINK

    kept = {c for c in channels if c.startswith("~")} | {f"~{tag.hex()}" for tag in store.blind.tags()}
    return sorted(kept - {MAILBOX_LINK})


def run_export(args: argparse.Namespace) -> int:
    from chat_app.crypto import KeyFileError
    from chat_app.export import ExportError, export, format_for
    from chat_app.identity import stored_sender_id
    from chat_app.store import Store, StoreUnreadable, database_path

    data_dir = args.data_dir or default_data_dir()
    database = database_path(data_dir)
    if (problem := not_a_directory(data_dir)) is not None:
        print(f"sds-chat: {problem}", file=sys.stderr)
        return 2
    if not database.is_file():
        print(f"sds-chat: no history in {data_dir} (expected {database.name})", file=sys.stderr)
        return 2
    fmt = format_for(args.out, args.format)
    try:  # only read: a directory the user may not write is exported as it is
        store = Store(database, read_only=True)
    except StoreUnreadable as exc:
        print(f"sds-chat: {exc}", file=sys.stderr)
        return 2
    try:
        count = export(store, stored_sender_id(store, data_dir), args.out, fmt, args.export_channels)
    except (ExportError, KeyFileError) as exc:
        print(f"sds-chat: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"wrote {count} rows to {args.out} ({fmt})")
    return 0


VERIFY_NEEDS_SPARK = ("sds-chat: verify needs PySpark, an optional extra: pip install 'sds-chat[verify]' "
                      "(and a Java runtime)")


class InertLines(logging.Formatter):
    """Log lines can quote what peers sent (a nick, a reason): they are
    written inert, as everything from the network is shown."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record), lines=True)


def main(argv: list[str] | None = None) -> int:
    stderr = logging.StreamHandler()
    stderr.setFormatter(InertLines("sds-chat: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[stderr])
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["verify"]:  # its own parser: paths, --report, --master
        try:
            import pyspark  # noqa: F401  (the job imports it later, where a failure reads as bad input)
        except ImportError:
            print(VERIFY_NEEDS_SPARK, file=sys.stderr)
            return 2
        from chat_app.verify.job import main as verify

        return verify(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "export":
        return run_export(args)
    if args.command == "simulate":
        from chat_app.simulate import simulate_exports

        files = simulate_exports(args.peers, args.messages, args.loss, args.seed, args.out)
        print(f"wrote {len(files)} exports to {args.out}")
        return 0
    if args.command == "doctor":
        from chat_app.doctor import doctor
        from chat_app.link_names import LinkNames

        return doctor(args.seconds, args.doctor_port, LinkNames.of_data_dir(args.data_dir or default_data_dir()))
    if args.command == "demo":
        return run_demo(args.peers, args.messages, args.loss, args.seed)
    leave(run_peer(args))  # the chat itself does not return: see ``leave``


def leave(code: int) -> NoReturn:
    """Exit at once after the chat. Everything that needs closing is closed
    by now (the store, the lock, the sockets, discovery, the output thread);
    what the interpreter would do next is free every object one by one: under
    load that was 1-2 s of a 5 s quit (20 peers flooding 2 cores), 0.15 s when
    idle. Only for the chat: ``verify`` leaves its Spark JVM to atexit."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # nobody reads any more, or it was closed
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
