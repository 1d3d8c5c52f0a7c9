"""The engine protocol every sds-chat sync engine follows, sans-I/O.

Theory of operation
-------------------

An engine is one participant's side of one protocol conversation: an SDS
channel (``sync.sds.Channel``), a replication stream with one peer
(``sync.replication.Connection``), and later SVS channels and MVDS sessions.
It never touches a socket, a file, a thread or a clock. Everything it knows
comes in through a handful of calls, and everything it does comes out as
values the runtime drains - the shape of h11, wsproto and aioquic:

    engine.receive(data, now, source)     bytes from the network
    engine.receive_message(parsed, now, source)   the same, already parsed
                                          (``MessageEngine``: SDS, SVS)
    engine.<command>(..., now)            what the user or runtime wants
    engine.handle_timer(now)              time passed: at get_timer(), or later
      then, after any of the above - one *step*:
    for event in engine.events(): ...     what happened (frozen dataclasses)
    engine.datagrams_to_send(now)         [Outgoing(data, to)], in order
    engine.get_timer()                    when to call handle_timer next (ms)

The contract, which ``tests/core/test_conformance.py`` holds every engine to:

* **Time only comes in through ``now``**: integer milliseconds, never
  decreasing between calls. Engines import no clock; any randomness is
  derived from ids and counters, so an engine is a deterministic function
  of its inputs.
* **Parsed once.** A datagram engine whose datagrams are one message each
  (``MessageEngine``) also offers ``parse(data)``, which reads and checks
  the bytes (raising ``RemoteProtocolError``), and
  ``receive_message(parsed, now, source)``, which takes what it made: a
  router that had to read the message hands it on, and the engine checks
  only what depends on its own state. Feeding ``receive_message(parse(d))``
  is observably the same as ``receive(d)``.
* **Bad input never raises.** Malformed or hostile bytes are counted
  (``stats``), reported (``Rejected(kind, reason)``, or ``Closed(reason)``
  for a stream, whose protocol cannot go on after garbage) and dropped;
  ``receive`` returns normally whatever it is given. A
  ``RemoteProtocolError`` is how an engine tells itself; it never escapes.
  A caller that misuses the engine (empty content, an answer to a request
  that was never made) gets a ``LocalProtocolError`` at once.
* **Addresses are opaque.** ``source`` is whatever hashable the runtime uses
  for the sender (an address, a key; ``None`` if unknown). ``Outgoing.to``
  is ``BROADCAST`` - every peer of this engine: the channel's members for
  SDS, the other end of the stream for a stream engine - or a ``source``
  handed back unchanged for a reply to one peer.
* **One step, commit before send.** After each input the runtime drains
  ``events()`` first, commits what they say (a delivered message, the
  engine's state) to its store, and only then transmits
  ``datagrams_to_send(now)``. An engine's datagrams may acknowledge or
  reference what its events just reported, so sending before committing
  could promise peers something a crash then loses.
* **The engine asks, the runtime answers.** An engine that needs the
  runtime's data (replication needs log heights and entries from SQLite)
  says so with an event (``HeightsWanted``, ``EntriesWanted``) and waits;
  the runtime answers with a command (``provide_heights``,
  ``provide_entries``) whenever it has read the data - in the same step or
  several steps later, off the event loop if it likes. Engines never call
  back into the runtime.
* **Timers.** ``get_timer()`` is an absolute deadline in ms or ``None``
  (nothing scheduled). Call ``handle_timer(now)`` at or after it; calling
  it early, late or twice is harmless. Re-read ``get_timer()`` after every
  step: any input may move it.
* **State is data.** ``export_state()`` returns plain data - ``None``,
  ``bool``, ``int``, ``float``, ``str``, ``bytes`` and lists and
  ``str``-keyed dicts of them - that survives CBOR. ``Engine.restore(state,
  ...)`` (a classmethod; configuration and pure helpers such as validators
  are passed again, they are not state) rebuilds an engine that behaves
  exactly as the original would have: restoring after every step changes
  nothing observable. Export after draining a step; events not yet drained
  are not part of the state.
* **Incremental state (optional).** An engine whose state grows with use
  (SDS: unacknowledged messages, buffered ones, participants) also offers
  ``take_changes()``: what changed since the last ``take_changes()`` or
  ``export_state()``, as parts to replace and keyed entries to upsert or
  delete, so a step writes in proportion to what it did. Save the export
  once, then store each step's changes in the step's transaction; read
  back, they are the export ``restore`` takes (``sync/sds/state.py`` has
  the exact contract and ``apply_changes``, its reference).

Errors are ``LocalProtocolError`` (the caller's fault, raised) and
``RemoteProtocolError`` (the network's fault, reported); the deadline
``Schedule`` is the keyed heap engines use so that nothing periodic ever
scans all its state.
"""

from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import Event, Rejected
from .protocol import BROADCAST, Broadcast, Engine, MessageEngine, Outgoing, Peer
from .schedule import Schedule

__all__ = [
    "BROADCAST", "Broadcast", "Engine", "Event", "LocalProtocolError", "MessageEngine", "Outgoing", "Peer",
    "ProtocolError", "Rejected", "RemoteProtocolError", "Schedule",
]
