"""File events as lines in the channel they belong to: an offer with the
number to ``/accept``, a download's progress bar and speed (one line,
redrawn in place), where it was saved, a holder left for another."""

from __future__ import annotations

from chat_app.files.events import FileList, FileOffered, FileProgress, FileReceived, FileSourceLeft
from chat_app.file_offer import megabytes
from chat_app.inert_text import inert
from chat_app.tui import notices
from chat_app.tui.effects import Effect, Follow, Placed
from chat_app.tui.reducer import reduces
from chat_app.tui.state import ClientState

BAR = 20


@reduces(FileOffered)
def offered(state: ClientState, event: FileOffered, now: int) -> list[Effect]:
    name = inert(event.file_name)
    if event.own:
        text = f"offered {name} ({megabytes(event.size)}); it is fetched from you while you are here"
    elif event.auto:
        text = f"{inert(event.nick or '?')} offers {name} ({megabytes(event.size)}): fetching it (under the limit)"
    else:
        text = f"{inert(event.nick or '?')} offers {name} ({megabytes(event.size)}): /accept {event.number} to fetch it"
    return notices.add(state, text, now, channel=event.channel)


@reduces(FileProgress)
def progress(state: ClientState, event: FileProgress, now: int) -> list[Effect]:
    model = state.channels.get(event.channel)
    if model is None:
        return []
    share = event.done / event.size if event.size else 1.0
    filled = round(share * BAR)
    text = (f"[{'#' * filled}{'.' * (BAR - filled)}] {share:4.0%} {inert(event.file_name)}  "
            f"{megabytes(event.done)} of {megabytes(event.size)}  {event.bytes_per_s / 1e6:.1f} MB/s")
    row_id = f"~local-file-{event.number:08d}"  # one line per download, redrawn in place
    old = model.by_id.get(row_id)
    lamport = old.lamport if old is not None else max(model.entries[-1].lamport if len(model) else 0, now)
    row = notices.local_row(state, lamport, "info", "", notices.MARKS["info"], text, now)
    row.message_id = row_id
    model.upsert(row)
    if model.name != state.current:
        return []
    placed = Placed(row, replaced=old is not None)
    return [placed, Follow()] if state.following and old is None else [placed]


@reduces(FileReceived)
def received(state: ClientState, event: FileReceived, now: int) -> list[Effect]:
    return notices.add(state, f"{inert(event.file_name)} saved as {inert(event.path)} (SHA-256 checked)", now,
                       channel=event.channel)


@reduces(FileSourceLeft)
def source_left(state: ClientState, event: FileSourceLeft, now: int) -> list[Effect]:
    return notices.add(state, f"file {event.number}: {event.address} left for another holder: {event.reason}", now)


@reduces(FileList)
def listing(state: ClientState, event: FileList, now: int) -> list[Effect]:
    lines = [f"{f['number']:>3}  {f['state']:<8} {inert(f['name'])} ({megabytes(f['size'])}) in {f['channel']}"
             + (f" from {inert(f['nick'])}" if f["nick"] else "") + (f" -> {inert(f['saved'])}" if f["saved"] else "")
             for f in event.files]
    return notices.add(state, "\n".join(["/files:", *lines] if lines else ["/files: no file offered yet"]), now)
