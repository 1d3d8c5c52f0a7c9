"""Our own messages as they go on the wire.

Every message we send carries our Lamport clock - ``max(now, clock + 1)``,
where the clock is the highest of our sends and of what we delivered - our
causal history (the messages most recently delivered, from ``LocalLog``),
our bloom filter, and the SDS-R repair requests that are due (those with the
lowest T_req first, at most ``repair_max_requests``). A sync message is the
same without content; an ephemeral message has no timestamp, history, bloom
filter or requests. The ``Channel`` decides what to do with the result
(transmit it, keep it until acknowledged, deliver it to our own log).
"""

from __future__ import annotations

from .config import Config
from .errors import LocalProtocolError
from .events import RepairRequested
from .incoming import IncomingBuffer
from .log import LocalLog
from .output import Output
from .wire import SdsMessage, compute_message_id, entry_to_pb


class Composer:
    def __init__(self, channel_id: str, sender_id: str, config: Config, log: LocalLog, incoming: IncomingBuffer,
                 out: Output, now: int) -> None:
        self.channel_id, self.sender_id, self.config = channel_id, sender_id, config
        self._log, self._incoming, self._out = log, incoming, out
        self.sent_lamport = now  # the clock as our own sends raised it

    @property
    def lamport(self) -> int:
        """Raised by every send, and to every timestamp delivered (the newest in the log)."""
        return max(self.sent_lamport, self._log.newest_lamport())

    def message(self, content: bytes, bloom: bytes, now: int) -> tuple[str, SdsMessage, bytes]:
        """A content message: (its id, the message, its bytes)."""
        lamport = max(now, self.lamport + 1)
        message_id = compute_message_id(self.sender_id, self.channel_id, lamport, content)
        msg = self._compose(message_id, lamport, content, bloom)
        wire = msg.SerializeToString()
        if len(wire) > self.config.max_datagram_bytes:
            raise LocalProtocolError(
                f"message of {len(wire)} bytes exceeds one datagram ({self.config.max_datagram_bytes})")
        if self._attach_repair_requests(msg, now):
            wire = msg.SerializeToString()
        self.sent_lamport = lamport
        return message_id, msg, wire

    def sync(self, bloom: bytes, now: int) -> bytes:
        """A sync message: history, filter and repair requests, no content."""
        lamport = max(now, self.lamport + 1)
        msg = self._compose(compute_message_id(self.sender_id, self.channel_id, lamport, b""), lamport, b"", bloom)
        self._attach_repair_requests(msg, now)
        self.sent_lamport = lamport
        return msg.SerializeToString()

    def ephemeral(self, content: bytes) -> tuple[str, bytes]:
        """An ephemeral message: (its id, its bytes)."""
        message_id = compute_message_id(self.sender_id, self.channel_id, None, content)
        msg = SdsMessage(sender_id=self.sender_id, message_id=message_id, channel_id=self.channel_id, content=content)
        wire = msg.SerializeToString()
        if len(wire) > self.config.max_datagram_bytes:
            raise LocalProtocolError(f"ephemeral message of {len(wire)} bytes does not fit one datagram")
        return message_id, wire

    def _compose(self, message_id: str, lamport: int, content: bytes, bloom: bytes) -> SdsMessage:
        msg = SdsMessage(sender_id=self.sender_id, message_id=message_id, channel_id=self.channel_id,
                         lamport_timestamp=lamport, bloom_filter=bloom)
        if content:
            msg.content = content
        msg.causal_history.extend(entry_to_pb(entry) for entry in self._log.history())
        return msg

    def _attach_repair_requests(self, msg: SdsMessage, now: int) -> int:
        due = self._incoming.due_requests(now, self.config.repair_max_requests)
        msg.repair_request.extend(entry_to_pb(entry) for entry in due)
        if due:
            self._out.stats["repair_requested"] += len(due)
            self._out.emit(RepairRequested(tuple(e.message_id for e in due)))
        return len(due)
