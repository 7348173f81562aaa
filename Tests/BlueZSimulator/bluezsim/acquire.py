"""AcquireNotify / AcquireWrite sockets, created the way bluetoothd does (gatt-client.c):
socketpair(AF_LOCAL, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC), one datagram per value.

Notifications are written with a non-blocking send; when the application does not drain its end
and the socket buffer is full, the value is dropped (bluetoothd only logs "sendmsg: ..."). We count
each drop so tests can observe it.
"""
from __future__ import annotations

import asyncio
import os
import socket
from typing import Callable

READ_CHUNK = 1024  # larger than any ATT value plus header


class AcquiredSocket:
    def __init__(self, kind: str, counters, on_released: Callable[[], None],
                 on_datagram: Callable[[bytes], None] | None = None) -> None:
        self.kind = kind  # "notify" | "write"
        self.counters = counters
        self.ours, self.theirs = socket.socketpair(
            socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
        self._on_released = on_released
        self._on_datagram = on_datagram
        self.closed = False
        self._loop = asyncio.get_running_loop()
        # Reading our end tells us when the application closed its end (EOF) and, for AcquireWrite,
        # brings the datagrams it writes.
        self._loop.add_reader(self.ours.fileno(), self._readable)

    def their_fd(self) -> int:
        return self.theirs.fileno()

    def hand_over_done(self) -> None:
        """Our copy of the application's end is closed once the reply carrying it was sent."""
        if self.theirs is not None:
            self.theirs.close()
            self.theirs = None

    def send(self, value: bytes) -> bool:
        try:
            self.ours.send(value, socket.MSG_NOSIGNAL)
            return True
        except BlockingIOError:
            self.counters["notify_dropped_eagain"] += 1
            return False
        except OSError:
            self.counters["notify_dropped_socket_error"] += 1
            self.close()
            return False

    def _readable(self) -> None:
        try:
            data = self.ours.recv(READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        if self._on_datagram is not None:
            self._on_datagram(data)

    def close(self) -> None:
        """Releases the acquisition; shutting down our end gives the application HUP."""
        if self.closed:
            return
        self.closed = True
        try:
            self._loop.remove_reader(self.ours.fileno())
        except (ValueError, OSError):
            pass
        try:
            self.ours.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.ours.close()
        self.hand_over_done()
        self._on_released()


def fd_is_valid(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
