"""Replication state as plain data, for ``Connection.export_state``.

A session's set reconciliation is a ``Reconciler`` holding tuples, sets,
dicts keyed by tuples and queued messages. CBOR would turn tuples into lists
(and lists do not compare with tuples), so containers are tagged: a tagged
value is a one-key dict - ``{"t": [...]}`` tuple, ``{"l": [...]}`` list,
``{"s": [...]}`` set, ``{"d": [[k, v], ...]}`` dict, ``{"m": bytes}`` a
replication message in its own CBOR encoding, ``{"o": [name, attributes]}``
one of the reconciler's own parts (a class named in ``_parts``), ``{"k":
name}`` a message type itself. Objects are
rebuilt attribute by attribute, so whatever plain data a reconciler keeps
round-trips.
"""

from __future__ import annotations

from typing import Any

from .messages import Message, decode, encode

_MESSAGES = tuple(Message.__args__)
_SCALARS = (type(None), bool, int, float, str, bytes)


def to_plain(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, tuple):
        return {"t": [to_plain(v) for v in value]}
    if isinstance(value, list):
        return {"l": [to_plain(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"s": sorted((to_plain(v) for v in value), key=repr)}
    if isinstance(value, dict):
        return {"d": [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if isinstance(value, _MESSAGES):
        return {"m": encode(value)}
    if value in _MESSAGES:
        return {"k": value.__name__}
    if type(value).__name__ in _parts():
        return {"o": [type(value).__name__, export_object(value)]}
    raise TypeError(f"cannot export {type(value).__name__} as replication state")


def from_plain(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "t":
        return tuple(from_plain(v) for v in body)
    if tag == "l":
        return [from_plain(v) for v in body]
    if tag == "s":
        return {from_plain(v) for v in body}
    if tag == "d":
        return {from_plain(k): from_plain(v) for k, v in body}
    if tag == "m":
        return decode(body)
    if tag == "k":
        return next(kind for kind in _MESSAGES if kind.__name__ == body)
    if tag == "o":
        name, attributes = body
        return restore_object(_parts()[name], attributes)
    raise ValueError(f"unknown state tag {tag!r}")


def _parts() -> dict[str, type]:
    """The reconciler's parts, which a state may hold (imported late: they
    import this module's neighbours)."""
    from .ranges import ItemSet
    from .rounds import Range, RoundReader, RoundWriter

    return {cls.__name__: cls for cls in (ItemSet, Range, RoundReader, RoundWriter)}


def export_object(obj: object) -> dict[str, Any]:
    """Every attribute of ``obj`` (``__dict__`` and ``__slots__``), tagged."""
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if hasattr(obj, n) and n not in names]
    return {name: to_plain(getattr(obj, name)) for name in names}


def restore_object(cls: type, state: dict[str, Any]) -> Any:
    obj = cls.__new__(cls)
    for name, value in state.items():
        object.__setattr__(obj, name, from_plain(value))
    return obj
