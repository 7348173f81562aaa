"""The remote central against a dbus-fast GATT app: reads, writes, CCC, notifications and the link."""
from __future__ import annotations

import asyncio
import time

import pytest

from gatt_app import GattApp
from sim_process import CallFailed, central, connect, counters, register_app, simulator, wait_for

PHONE = "C0:FF:EE:00:00:01"
NUS_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def setup(address: str, mtu: int = 23, **chars):
    """A registered app with the characteristics the tests use, and a connected remote central."""
    app_bus, ctl = await connect(address), await connect(address)
    app = GattApp(app_bus)
    svc = app.service("s", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    made = {
        "value": app.char(svc, "value", "2A19", ["read", "write"], value=b"0123456789"),
        "long": app.char(svc, "long", "2A24", ["read", "write", "reliable-write"], value=bytes(range(256)) + bytes(44)),
        "cmd": app.char(svc, "cmd", "2A25", ["write-without-response"]),
        "notify": app.char(svc, "notify", "2A37", ["read", "notify"]),
        "acquired": app.char(svc, "acquired", NUS_TX, ["notify"], notify_acquired=True),
        "indicate": app.char(svc, "indicate", "2A05", ["indicate"]),
        "secure": app.char(svc, "secure", "2A26", ["encrypt-read"], value=b"secret"),
    }
    await register_app(app_bus, "/app")
    await central(ctl, "Connect", "sa{sv}", [PHONE, {"mtu": _q(mtu)}])
    return app, app_bus, ctl, made


def _q(value: int):
    from dbus_fast import Variant
    return Variant("q", value)


def test_read_with_offset_options_and_errors():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            assert await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0]) == [0, b"0123456789"]
            assert await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 4]) == [0, b"456789"]
            handle = dict(app.handle_writes)["/app/s/value"]
            assert await central(ctl, "ReadValue", "ssq", [PHONE, f"handle:{handle:#06x}", 8]) == [0, b"89"]
            first, second = c["value"].reads[:2]
            assert c["value"].reads[2]["offset"] == 8
            assert first == {"device": f"/org/bluez/hci0/dev_{PHONE.replace(':', '_')}", "link": "LE", "mtu": 23}
            assert second["offset"] == 4 and "type" not in second
            code, _ = await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 11])
            assert code == 0x07  # the app's InvalidOffset
            assert (await central(ctl, "ReadValue", "ssq", [PHONE, "2a25", 0]))[0] == 0x02  # not readable
            assert (await central(ctl, "ReadValue", "ssq", [PHONE, "2a26", 0]))[0] == 0x05  # needs encryption
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


@pytest.mark.parametrize("name,text,code", [
    ("org.bluez.Error.Failed", "0x85", 0x85),
    ("org.bluez.Error.Failed", "something broke", 0x80),
    ("org.bluez.Error.Failed", "0x20", 0x0E),
    ("org.bluez.Error.Failed", "", 0x0E),
    ("org.bluez.Error.Failed", "0x85 ", 0x80),
    ("org.bluez.Error.Failed", "0206", 0x86),
    ("org.bluez.Error.NotSupported", "", 0x06),
    ("org.bluez.Error.NotAuthorized", "", 0x08),
    ("org.bluez.Error.InvalidValueLength", "", 0x0D),
    ("org.bluez.Error.InvalidOffset", "", 0x07),
    ("org.bluez.Error.InProgress", "", 0xFE),
    ("org.bluez.Error.NotPermitted", "", None),
    ("com.example.Whatever", "", 0x0E),
])
def test_app_errors_become_att_errors(name, text, code):
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            c["value"].read_error = (name, text)
            c["value"].write_error = (name, text)
            read_code, _ = await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0])
            (write_code,) = await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a19", b"x", "request", 0])
            assert (read_code, write_code) == ((0x02, 0x03) if code is None else (code, code))
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_long_read_of_300_bytes():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            code, value = await central(ctl, "ReadLongValue", "ss", [PHONE, "2a24"])
            assert code == 0 and value == bytes(range(256)) + bytes(44)
            # MTU 23: responses carry 22 bytes, so offsets 0, 22, 44 ... up to the short last one.
            assert [r.get("offset", 0) for r in c["long"].reads] == list(range(0, 300, 22))
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_write_request_command_and_prepared():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a19", b"abc", "request", 0]) == [0]
            assert c["value"].writes[-1] == (b"abc", {"device": f"/org/bluez/hci0/dev_{PHONE.replace(':', '_')}",
                                                      "link": "LE", "mtu": 23})
            c["cmd"].write_error = ("org.bluez.Error.Failed", "0x99")  # lost: bluetoothd does not wait
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a25", b"go", "command", 0]) == [0]
            await wait_for(lambda: c["cmd"].writes, what="the write command")
            assert c["cmd"].writes[0][0] == b"go"
            data = bytes(range(50))
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a24", data, "prepared", 0]) == [0]
            # bluetoothd joins the contiguous Prepare Write pieces (18, 18, 14 bytes at MTU 23) and executes them
            # as one WriteValue at the run's first offset.
            assert [(v, o.get("offset", 0)) for v, o in c["long"].writes] == [(data, 0)]
            c["long"].writes.clear()
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a24", data[:30], "prepared", 10]) == [0]
            assert [(v, o.get("offset", 0)) for v, o in c["long"].writes] == [(data[:30], 10)]
            # a request longer than MTU-3 turns into a long write by itself
            c["long"].writes.clear()
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a24", bytes(30), "request", 0]) == [0]
            assert len(c["long"].writes) == 1
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a37", b"x", "request", 0]) == [0x03]
            with pytest.raises(CallFailed):
                await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a25", bytes(21), "command", 0])
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_notify_via_start_notify_and_stop_on_disable():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 2]) == [0xFD]  # no indicate flag
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 3]) == [0xFD]
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 1]) == [0]
            await wait_for(lambda: c["notify"].start_notify_calls == 1, what="StartNotify")
            for i in range(5):
                c["notify"].notify(bytes([i]))
            c["notify"].notify(bytes([4]))  # identical values are each delivered
            got: list[bytes] = []

            async def all_received():
                got.extend((await central(ctl, "GetReceived", "ssu", [PHONE, "2a37", 0]))[0])
                return len(got) == 6
            await wait_for(all_received, what="notifications")
            assert got == [b"\x00", b"\x01", b"\x02", b"\x03", b"\x04", b"\x04"]
            assert await central(ctl, "ReadDescriptor", "sssq", [PHONE, "2a37", "2902", 0]) == [0, b"\x01\x00"]
            assert await central(ctl, "WriteDescriptor", "sssay", [PHONE, "2a37", "2902", b"\x00\x00"]) == [0]
            await wait_for(lambda: c["notify"].stop_notify_calls == 1, what="StopNotify")
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_indication_is_confirmed_to_the_app():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a05", 1]) == [0xFD]
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a05", 2]) == [0]
            await wait_for(lambda: c["indicate"].start_notify_calls == 1, what="StartNotify")
            c["indicate"].notify(b"\x01\x02")
            await wait_for(lambda: c["indicate"].confirms == 1, what="Confirm")
            (values,) = await central(ctl, "GetReceived", "ssu", [PHONE, "2a05", 0])
            assert values == [b"\x01\x02"]
            await central(ctl, "Disconnect", "s", [PHONE])  # a disconnect clears the CCC: StopNotify
            await wait_for(lambda: c["indicate"].stop_notify_calls == 1, what="StopNotify on disconnect")
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_acquire_notify_with_link_drain_rate_and_eagain():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address, mtu=185)
            chrc = c["acquired"]
            await central(ctl, "SetLinkDrainRate", "sdu", [PHONE, 200.0, 8])
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 1]) == [0]
            await wait_for(lambda: chrc.notify_sock is not None, what="AcquireNotify")
            assert chrc.acquire_notify_calls[0]["mtu"] == 185 and chrc.start_notify_calls == 0
            # A fast app: writes until the socket refuses. The link holds 8, the socket buffer some more.
            sent = 0
            while chrc.send_fd(sent.to_bytes(4, "little")):
                sent += 1
                if sent > 100_000:
                    raise AssertionError("the notify socket never pushed back")
            assert chrc.eagain == 1
            # Everything the socket accepted arrives, in order, at the drain rate.
            got: list[bytes] = []

            async def drained():
                got.extend((await central(ctl, "GetReceived", "ssu", [PHONE, NUS_TX, 0]))[0])
                return len(got) >= sent
            await wait_for(drained, timeout=60, what="the link to drain")
            assert [int.from_bytes(v, "little") for v in got] == list(range(sent))
            stats = await central(ctl, "GetLinkStats", "s", [PHONE])
            assert stats[0]["notifications"].value == sent
            assert (await counters(ctl))["server.notify_reader_paused"] >= 1
            # Disabling the CCC closes bluetoothd's end: the app sees the hang-up.
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 0]) == [0]
            chrc.notify_sock.setblocking(True)
            chrc.notify_sock.settimeout(10)
            assert chrc.notify_sock.recv(16) == b""
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_restart_requires_registering_again():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            await central(ctl, "Disconnect", "s", [PHONE])
            from sim_process import CONTROL, call
            await call(ctl, CONTROL, "RestartBluetoothd", "d", [0.05])

            async def back():
                try:
                    await central(ctl, "GetApplications")
                    reply = await call(ctl, ("org.bluez", "/", "org.freedesktop.DBus.ObjectManager"),
                                       "GetManagedObjects")
                    return "/org/bluez/hci0" in reply[0]
                except (CallFailed, asyncio.TimeoutError):
                    return False
            await wait_for(back, what="bluetoothd to come back")
            assert await central(ctl, "GetApplications") == ["[]"]
            await register_app(bus, "/app")
            await central(ctl, "Connect", "sa{sv}", [PHONE, {}])
            assert await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0]) == [0, b"0123456789"]
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_write_acquired_descriptors_and_prepare_authorize():
    async def scenario():
        async with simulator() as address:
            app_bus, ctl = await connect(address), await connect(address)
            app = GattApp(app_bus)
            svc = app.service("s", "180F")
            stream = app.char(svc, "stream", "2A3D", ["write-without-response"], write_acquired=True)
            guarded = app.char(svc, "guarded", "2A3E", ["write", "authorize"])
            desc = app.desc(guarded, "d", "2901", ["read", "write"], b"label")
            await register_app(app_bus, "/app")
            await central(ctl, "Connect", "sa{sv}", [PHONE, {}])
            # WriteAcquired: bluetoothd acquires the socket once and pushes each write into it.
            for chunk in (b"one", b"two"):
                assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a3d", chunk, "command", 0]) == [0]
            await wait_for(lambda: stream.write_sock is not None, what="AcquireWrite")
            stream.write_sock.setblocking(True)
            stream.write_sock.settimeout(10)
            assert [stream.write_sock.recv(64), stream.write_sock.recv(64)] == [b"one", b"two"]
            assert stream.writes == []
            # Prepared writes of an `authorize` characteristic go first with prepare-authorize for untrusted links.
            assert await central(ctl, "WriteValue", "ssaysq", [PHONE, "2a3e", b"ab", "prepared", 0]) == [0]
            assert [o.get("prepare-authorize", False) for _, o in guarded.writes] == [True, False]
            assert await central(ctl, "ReadDescriptor", "sssq", [PHONE, "2a3e", "2901", 0]) == [0, b"label"]
            assert await central(ctl, "WriteDescriptor", "sssay", [PHONE, "2a3e", "2901", b"new"]) == [0]
            assert desc.writes[0][0] == b"new"
            app_bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_received_signal_and_unknown_targets():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            with pytest.raises(CallFailed) as err:
                await central(ctl, "ReadValue", "ssq", ["00:00:00:00:00:09", "2a19", 0])
            assert "not connected" in err.value.text
            with pytest.raises(CallFailed):
                await central(ctl, "ReadValue", "ssq", [PHONE, "2a99", 0])
            seen: list[list] = []
            from dbus_fast import Message, MessageType

            def on_signal(msg: Message):
                if msg.message_type is MessageType.SIGNAL and msg.member == "Received":
                    seen.append(msg.body)
                return False
            ctl.add_message_handler(on_signal)
            await ctl.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                   interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                                   body=["type='signal',interface='org.gattway.Simulator1.Central'"]))
            await central(ctl, "SetReceivedSignal", "b", [True])
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 1]) == [0]
            await wait_for(lambda: c["notify"].start_notify_calls == 1, what="StartNotify")
            c["notify"].notify(b"\x2a")
            await wait_for(lambda: seen, what="the Received signal")
            assert seen[0] == [PHONE, "00002a37-0000-1000-8000-00805f9b34fb", b"\x2a"]
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_connected_central_has_a_device_object_and_power_off_drops_it():
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            from sim_process import CONTROL, bluez, call
            path = f"/org/bluez/hci0/dev_{PHONE.replace(':', '_')}"
            (objs,) = await call(ctl, bluez("/", "org.freedesktop.DBus.ObjectManager"), "GetManagedObjects")
            assert objs[path]["org.bluez.Device1"]["Connected"].value is True
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 1]) == [0]
            await wait_for(lambda: c["notify"].start_notify_calls == 1, what="StartNotify")
            await call(bus, bluez(path, "org.bluez.Device1"), "Disconnect")  # the app drops the central
            await wait_for(lambda: c["notify"].stop_notify_calls == 1, what="StopNotify after Device1.Disconnect")
            (objs,) = await call(ctl, bluez("/", "org.freedesktop.DBus.ObjectManager"), "GetManagedObjects")
            assert path not in objs
            await central(ctl, "Connect", "sa{sv}", [PHONE, {}])
            await call(ctl, CONTROL, "SetPowered", "sb", ["hci0", False])
            with pytest.raises(CallFailed):
                await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0])
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


@pytest.mark.parametrize("error,falls_back", [("org.bluez.Error.NotSupported", True),
                                              ("org.bluez.Error.Failed", False)])
def test_acquire_notify_failure_falls_back_to_start_notify_except_for_failed(error, falls_back):
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            chrc = c["acquired"]
            chrc.acquire_notify_error = (error, "no socket today")
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 1]) == [0]
            await wait_for(lambda: chrc.acquire_notify_calls, what="AcquireNotify")
            if falls_back:
                await wait_for(lambda: chrc.start_notify_calls == 1, what="the StartNotify fallback")
            else:
                async def gave_up():
                    return (await counters(ctl)).get("server.acquire_notify_failed") == 1
                await wait_for(gave_up, what="bluetoothd to give up on AcquireNotify")
                assert chrc.start_notify_calls == 0
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


@pytest.mark.parametrize("version,sockets,own_device_only", [("5.66", 1, False), ("5.70", 2, False),
                                                              ("5.76", 2, True)])
def test_acquire_notify_socket_per_characteristic_or_per_device(version, sockets, own_device_only):
    """5.66 acquires one socket for all centrals; 5.69+ one per device. What the app writes to a socket
    goes to every subscribed central up to 5.75, from 5.76 only to that socket's central
    (sock_io_read())."""
    async def scenario():
        async with simulator("--bluez-version", version) as address:
            app, bus, ctl, c = await setup(address)
            other = "C0:FF:EE:00:00:02"
            await central(ctl, "Connect", "sa{sv}", [other, {}])
            chrc = c["acquired"]
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 1]) == [0]
            # Wait for the first socket: 5.66 calls AcquireNotify again for an enable racing its reply.
            async def acquired():
                import json
                (text,) = await central(ctl, "GetApplications")
                chars = json.loads(text)[0]["services"][0]["characteristics"]
                return next(ch for ch in chars if ch["uuid"] == NUS_TX)["notifying"]
            await wait_for(acquired, what="the first AcquireNotify to complete")
            assert await central(ctl, "WriteCCC", "ssq", [other, NUS_TX, 1]) == [0]
            await wait_for(lambda: len(chrc.notify_socks) == sockets, what="AcquireNotify calls")
            # A read is a marker: bluetoothd's calls to the app travel in order, so a late duplicate AcquireNotify
            # would have reached the app before this read does.
            assert await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0]) == [0, b"0123456789"]
            assert len(chrc.acquire_notify_calls) == sockets
            devices = [call_options["device"] for call_options in chrc.acquire_notify_calls]
            assert devices == [f"/org/bluez/hci0/dev_{p.replace(':', '_')}" for p in (PHONE, other)][:sockets]
            assert chrc.send_fd(b"\x07")  # on the newest socket: the other central's from 5.69 on
            if own_device_only:
                await wait_for(lambda: received_is(ctl, other, [b"\x07"]), what="the value at its own device")
                # A second value on PHONE's own socket arrives alone: the first never reached PHONE.
                chrc.notify_socks[0].send(b"\x08")
                await wait_for(lambda: received_is(ctl, PHONE, [b"\x08"]), what="PHONE's own value")
            else:
                for phone in (PHONE, other):
                    await wait_for(lambda phone=phone: received_is(ctl, phone, [b"\x07"]),
                                   what=f"the value at {phone}")
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 0]) == [0]
            first = chrc.notify_socks[0]
            first.setblocking(True)
            first.settimeout(0.5 if sockets == 1 else 10)
            if sockets == 2:
                assert first.recv(16) == b""  # that device's socket is closed
            else:
                with pytest.raises(TimeoutError):  # still in use for the other central
                    first.recv(16)
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


async def received_is(ctl, phone: str, values: list[bytes]) -> bool:
    """Drains what `phone` received on NUS_TX so far; True when it is exactly `values`. Once a
    value has arrived, a wrong one would already be queued with it, so this also proves absence."""
    (got,) = await central(ctl, "GetReceived", "ssu", [phone, NUS_TX, 0])
    got = [bytes(v) for v in got]
    assert not got or got == values, f"{phone} received {got}, expected {values}"
    return got == values


def test_start_notify_way_for_an_app_that_exposes_notify_acquired_and_stamped_receipts():
    """SetAcquireNotify(false) makes a CCC enable use StartNotify although the app offers AcquireNotify (as
    bluetoothd before 5.48 does), so one simulator serves both ways; GetReceivedStamped drains values with their
    CLOCK_MONOTONIC receipt time."""
    async def scenario():
        async with simulator() as address:
            app, bus, ctl, c = await setup(address)
            chrc = c["acquired"]
            await central(ctl, "SetAcquireNotify", "b", [False])
            before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 1]) == [0]
            await wait_for(lambda: chrc.start_notify_calls == 1, what="StartNotify")
            assert chrc.acquire_notify_calls == []
            chrc.notify(b"\x01")
            chrc.notify(b"\x02")
            got: list[list] = []

            async def received():
                got.extend((await central(ctl, "GetReceivedStamped", "ssu", [PHONE, NUS_TX, 0]))[0])
                return len(got) == 2
            await wait_for(received, what="the StartNotify values")
            after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            assert [value for _, value in got] == [b"\x01", b"\x02"]
            assert before <= got[0][0] <= got[1][0] <= after
            # Back to the version's rule: the next enable acquires a socket.
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 0]) == [0]
            await wait_for(lambda: chrc.stop_notify_calls == 1, what="StopNotify")
            await central(ctl, "SetAcquireNotify", "b", [True])
            assert await central(ctl, "WriteCCC", "ssq", [PHONE, NUS_TX, 1]) == [0]
            await wait_for(lambda: chrc.notify_sock is not None, what="AcquireNotify")
            assert chrc.start_notify_calls == 1
            assert chrc.send_fd(b"\x03")

            async def socket_value():
                got.extend((await central(ctl, "GetReceivedStamped", "ssu", [PHONE, NUS_TX, 0]))[0])
                return len(got) == 3
            await wait_for(socket_value, what="the socket value")
            assert got[2][1] == b"\x03" and got[1][0] <= got[2][0]
            bus.disconnect()
            ctl.disconnect()
    run(scenario())
