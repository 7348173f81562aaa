"""Control CloseNotifySocket: bluetoothd closing an AcquireNotify socket while the link stays up, and empty
notifications, which arrive as 0-byte datagrams on a socket that stays open."""
from __future__ import annotations

import select

from sim_process import CONTROL, call, simulator
from test_acquire import ADDR, acquire, run, setup


def hung_up(sock, timeout_ms: int) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLHUP)
    events = poller.poll(timeout_ms)
    return bool(events and events[0][1] & select.POLLHUP)


def test_an_empty_notification_is_a_datagram_and_close_notify_socket_hangs_up():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            sock, _ = await acquire(bus, chars["bb01"], "AcquireNotify")
            sock.settimeout(5)
            reply = await call(bus, CONTROL, "Notify", "ssay", [ADDR, "bb01", b""])
            assert reply == [True]
            assert sock.recv(512) == b""
            assert not hung_up(sock, 0), "an empty notification is not the end of the socket"
            await call(bus, CONTROL, "Notify", "ssay", [ADDR, "bb01", b"\x07"])
            assert sock.recv(512) == b"\x07"

            reply = await call(bus, CONTROL, "CloseNotifySocket", "ss", [ADDR, "bb01"])
            assert reply == [True]
            assert hung_up(sock, 5000)
            await rec.wait(lambda m, p, b: p == chars["bb01"] and b[1].get("NotifyAcquired") is not None
                           and b[1]["NotifyAcquired"].value is False, what="NotifyAcquired false")
            reply = await call(bus, CONTROL, "CloseNotifySocket", "ss", [ADDR, "bb01"])
            assert reply == [False]
            # The link is still up: the characteristic can be acquired again.
            again, _ = await acquire(bus, chars["bb01"], "AcquireNotify")
            again.settimeout(5)
            await call(bus, CONTROL, "Notify", "ssay", [ADDR, "bb01", b"\x08"])
            assert again.recv(512) == b"\x08"
    run(body())
