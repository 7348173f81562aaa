"""bluetoothd's end of an app's AcquireNotify socket (sock_io_read() of gatt-database.c)."""
from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from .server_app import ServerCharacteristic

log = logging.getLogger("bluezsim.server")
MAX_VALUE_LEN = 512  # one datagram is read into a buffer of BT_ATT_MAX_VALUE_LEN


class NotifyReader:
    """bluetoothd's end of an app's AcquireNotify socket: one datagram is one notification, sent to
    every subscribed device (5.66's one socket per characteristic, and also the per-device sockets of
    5.69 to 5.75), or from 5.76 only to the socket's own device (sock_io_read()).

    Reading stops while a subscribed link's buffer is full, so the app's own non-blocking sends
    meet EAGAIN exactly as they would when the radio cannot keep up.
    """

    def __init__(self, io: Any, chrc: ServerCharacteristic, fd: int, key: Any) -> None:
        self.io = io
        self.chrc = chrc
        self.key = key  # the link (5.69+) or None (5.66: shared by every device)
        self.sock = socket.socket(fileno=fd)
        self.sock.setblocking(False)
        self.loop = asyncio.get_running_loop()
        self.reading = False
        self.closed = False
        self.resume()

    def resume(self) -> None:
        if not self.reading and not self.closed:
            self.loop.add_reader(self.sock.fileno(), self._readable)
            self.reading = True

    def pause(self) -> None:
        if self.reading:
            self.loop.remove_reader(self.sock.fileno())
            self.reading = False

    def _readable(self) -> None:
        io, chrc = self.io, self.chrc
        counters = io.sim.counters
        target = io.socket_target(self.key)
        for _ in range(64):  # bounded batch so one busy socket cannot starve the loop
            if not io.links_have_room(chrc, target):
                counters["server.notify_reader_paused"] += 1
                self.pause()
                return
            try:
                data = self.sock.recv(MAX_VALUE_LEN)
            except BlockingIOError:
                return
            except OSError as e:
                log.info("notify socket of %s failed: %s", chrc.path, e)
                data = b""
            if not data:
                self._hangup()
                return
            counters["server.notify_fd_values"] += 1
            io.notify(chrc, data, target)

    def _hangup(self) -> None:
        """sock_hup(): the app closed its end; bluetoothd forgets the io."""
        self.close()
        if self.chrc.notify_readers.get(self.key) is self:
            del self.chrc.notify_readers[self.key]

    def close(self) -> None:
        if self.closed:
            return
        self.pause()
        self.closed = True
        self.sock.close()
