"""Keeps a dbus-fast connection alive when its socket to dbus-daemon is momentarily full.

dbus-fast 5.2.0's asyncio writer treats EAGAIN from send()/sendmsg() on its non-blocking socket as a
fatal error and closes the connection. A simulator flooding notifications (or an app doing so)
meets exactly that when dbus-daemon falls behind for a moment. `install()` makes the writer see
EAGAIN as "nothing written yet", so it waits for the socket to become writable as it does after a
partial write; file descriptors of a refused sendmsg() are kept for the retry.
"""
from __future__ import annotations

import socket
from typing import Any

from dbus_fast.aio import message_bus as _aio

_installed = False


class _EagainTolerantSocket:
    """Wraps the writer's socket: EAGAIN becomes a zero-byte write."""

    __slots__ = ("sock", "refused_fds")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.refused_fds: list[int] | None = None

    def send(self, data: Any) -> int:
        try:
            return self.sock.send(data)
        except BlockingIOError:
            return 0

    def sendmsg(self, buffers: Any, ancdata: Any) -> int:
        try:
            return self.sock.sendmsg(buffers, ancdata)
        except BlockingIOError:
            # The writer forgets the fds after the call; hand them back for the retry.
            self.refused_fds = [fd for _level, _type, arr in ancdata for fd in arr]
            return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def install() -> None:
    global _installed
    if _installed:
        return
    writer_cls = _aio._MessageWriter
    original = writer_cls.write_callback

    def write_callback(self: Any, remove_writer: bool = True) -> None:
        wrapped = self.sock
        if not isinstance(wrapped, _EagainTolerantSocket):
            wrapped = self.sock = _EagainTolerantSocket(wrapped)
        original(self, remove_writer)
        if wrapped.refused_fds is not None:
            self.unix_fds = wrapped.refused_fds
            wrapped.refused_fds = None

    writer_cls.write_callback = write_callback
    _installed = True
