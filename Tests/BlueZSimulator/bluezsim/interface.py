"""A light D-Bus interface base used for every simulated object.

Subclasses set `name`, decorate handlers with `@method(in_sig, out_sig)` and implement
`get_properties()` returning only the properties that are present right now (BlueZ omits unknown
optional properties instead of sending zero). Handlers receive `(self, msg, *args)` so they can see
the sender; they may be plain functions or coroutines, return the body (a value, a tuple, or a
`Reply` when file descriptors are passed) and raise `dbus_fast.DBusError` for error replies.
"""
from __future__ import annotations

from typing import Any, Callable

from dbus_fast import DBusError, Message, Variant


class Reply:
    """An explicit method return, needed when the reply carries unix fds."""

    __slots__ = ("signature", "body", "unix_fds", "on_sent")

    def __init__(self, signature: str, body: list, unix_fds: list[int] | None = None,
                 on_sent: Callable[[], None] | None = None) -> None:
        self.signature = signature
        self.body = body
        self.unix_fds = unix_fds or []
        # Runs once the reply left (e.g. to close our copy of a passed fd only after it was sent).
        self.on_sent = on_sent


def method(in_sig: str = "", out_sig: str = "", name: str | None = None) -> Callable:
    def wrap(fn: Callable) -> Callable:
        fn.__dbus_method__ = (name or fn.__name__, in_sig, out_sig)
        return fn

    return wrap


class Interface:
    name = ""
    # Signals listed for introspection only: (member, signature).
    signals: tuple[tuple[str, str], ...] = ()
    _method_table: dict[str, tuple[str, str, Callable]] = {}

    path = ""
    sim: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, tuple[str, str, Callable]] = {}
        for base in reversed(cls.__mro__):
            for attr in vars(base).values():
                spec = getattr(attr, "__dbus_method__", None)
                if spec is not None:
                    table[spec[0]] = (spec[1], spec[2], attr)
        cls._method_table = table

    def methods(self) -> dict[str, tuple[str, str, Callable]]:
        return self._method_table

    def get_properties(self) -> dict[str, Variant]:
        return {}

    # Names of properties clients may Set, mapped to their signature.
    writable: dict[str, str] = {}

    def set_property(self, msg: Message, prop: str, value: Variant) -> Any:
        if prop not in self.get_properties():
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such property '{prop}'")
        sig = self.writable.get(prop)
        if sig is None:
            raise DBusError("org.freedesktop.DBus.Error.PropertyReadOnly", f"Property '{prop}' is not writable")
        if value.signature != sig:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"Invalid type for '{prop}'")
        return self.write_property(msg, prop, value.value)

    def write_property(self, msg: Message, prop: str, value: Any) -> Any:
        raise DBusError("org.freedesktop.DBus.Error.PropertyReadOnly", f"Property '{prop}' is not writable")

    def properties_changed(self, changed: dict[str, Variant], invalidated: list[str] | None = None) -> None:
        if self.sim is not None and self.path:
            self.sim.emit_properties_changed(self.path, self.name, changed, invalidated or [])

    def introspect_xml(self) -> str:
        out = [f'<interface name="{self.name}">']
        for member, (in_sig, out_sig, _fn) in self.methods().items():
            out.append(f'<method name="{member}">')
            out.extend(f'<arg type="{t}" direction="in"/>' for t in _split(in_sig))
            out.extend(f'<arg type="{t}" direction="out"/>' for t in _split(out_sig))
            out.append("</method>")
        for member, sig in self.signals:
            out.append(f'<signal name="{member}">' + "".join(f'<arg type="{t}"/>' for t in _split(sig)) + "</signal>")
        for prop, value in self.get_properties().items():
            access = "readwrite" if prop in self.writable else "read"
            out.append(f'<property name="{prop}" type="{value.signature}" access="{access}"/>')
        out.append("</interface>")
        return "".join(out)


def _split(sig: str) -> list[str]:
    """Splits a signature into single complete types."""
    out, i = [], 0
    while i < len(sig):
        j = _end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _end(sig: str, i: int) -> int:
    c = sig[i]
    if c == "a":
        return _end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        i += 1
        while sig[i] != close:
            i = _end(sig, i)
        return i + 1
    return i + 1
