"""A remote central pairs with the local adapter: bluetoothd asks the default agent (device.c new_auth())."""
from __future__ import annotations

import asyncio
import json

import pytest
from dbus_fast import Message, MessageType, Variant

from gatt_app import GattApp
from sim_process import CallFailed, bluez, call, central, connect, register_app, simulator, wait_for

PHONE = "C0:FF:EE:00:00:02"
AM = bluez("/org/bluez", "org.bluez.AgentManager1")
READ_NOT_AUTHENTICATED = 0x05  # ATT Insufficient Authentication


class Agent:
    """An org.bluez.Agent1 that records calls and answers as told: `refuse` rejects, `passkey` is entered."""

    def __init__(self, bus, refuse: bool = False, passkey: int = 0) -> None:
        self.calls: list[tuple[str, list]] = []
        self.refuse = refuse
        self.passkey = passkey
        bus.add_message_handler(self._handle)

    def _handle(self, msg: Message):
        if msg.message_type is not MessageType.METHOD_CALL or msg.path != "/agent":
            return False
        self.calls.append((msg.member, list(msg.body)))
        if self.refuse:
            return Message.new_error(msg, "org.bluez.Error.Rejected", "no")
        if msg.member == "RequestPasskey":
            return Message.new_method_return(msg, "u", [self.passkey])
        return Message.new_method_return(msg)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


async def setup(address: str):
    app_bus, ctl = await connect(address), await connect(address)
    app = GattApp(app_bus)
    svc = app.service("s", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    app.char(svc, "secure", "2A26", ["encrypt-read"], value=b"secret")
    await register_app(app_bus, "/app")
    await central(ctl, "Connect", "sa{sv}", [PHONE, {}])
    return app_bus, ctl


async def default_agent(bus, capability: str = "KeyboardDisplay", **answers) -> Agent:
    agent = Agent(bus, **answers)
    await call(bus, AM, "RegisterAgent", "os", ["/agent", capability])
    await call(bus, AM, "RequestDefaultAgent", "o", ["/agent"])
    return agent


@pytest.mark.parametrize("method, asked", [
    ("just-works", "RequestAuthorization"), ("confirm", "RequestConfirmation"), ("display", "DisplayPasskey"),
])
def test_an_approved_pairing_encrypts_the_link(method, asked):
    async def scenario():
        async with simulator() as address:
            app_bus, ctl = await setup(address)
            status, _ = await central(ctl, "ReadValue", "ssq", [PHONE, "2A26", 0])
            assert status == READ_NOT_AUTHENTICATED
            agent = await default_agent(app_bus)
            (listed,) = await central(ctl, "GetAgents")
            assert json.loads(listed) == [{"owner": app_bus.unique_name, "path": "/agent",
                                           "capability": "KeyboardDisplay", "default": True}]
            await central(ctl, "PairCentral", "ssa{sv}", [PHONE, method, {"passkey": Variant("u", 4242)}])
            device = "/org/bluez/hci0/dev_" + PHONE.replace(":", "_")
            await wait_for(lambda: agent.calls, what=asked)  # DisplayPasskey expects no reply
            assert agent.calls[0][0] == asked
            assert agent.calls[0][1][0] == device
            if method != "just-works":
                assert agent.calls[0][1][1] == 4242
            assert await central(ctl, "ReadValue", "ssq", [PHONE, "2A26", 0]) == [0, b"secret"]
            (paired,) = await call(ctl, bluez(device, "org.freedesktop.DBus.Properties"), "Get", "ss",
                                   ["org.bluez.Device1", "Paired"])
            assert paired.value is True
    run(scenario())


def test_passkey_entry_must_give_the_number_the_remote_shows():
    async def scenario():
        async with simulator() as address:
            app_bus, ctl = await setup(address)
            await default_agent(app_bus, passkey=111)
            with pytest.raises(CallFailed) as err:
                await central(ctl, "PairCentral", "ssa{sv}", [PHONE, "passkey", {"passkey": Variant("u", 222)}])
            assert err.value.name == "org.bluez.Error.AuthenticationFailed"
            await central(ctl, "PairCentral", "ssa{sv}", [PHONE, "passkey", {"passkey": Variant("u", 111)}])
            assert (await central(ctl, "ReadValue", "ssq", [PHONE, "2A26", 0]))[0] == 0
    run(scenario())


@pytest.mark.parametrize("agent, error", [
    (None, "AuthenticationFailed"),  # no agent: new_auth() fails
    ({"refuse": True}, "AuthenticationRejected"),
    ({"capability": "NoInputNoOutput"}, "AuthenticationFailed"),  # cannot compare numbers
])
def test_a_refused_pairing_leaves_the_link_unencrypted(agent, error):
    async def scenario():
        async with simulator() as address:
            app_bus, ctl = await setup(address)
            if agent is not None:
                await default_agent(app_bus, **agent)
            method = "just-works" if agent is None or "refuse" in agent else "confirm"
            with pytest.raises(CallFailed) as err:
                await central(ctl, "PairCentral", "ssa{sv}", [PHONE, method, {}])
            assert err.value.name == "org.bluez.Error." + error
            status, _ = await central(ctl, "ReadValue", "ssq", [PHONE, "2A26", 0])
            assert status == READ_NOT_AUTHENTICATED
    run(scenario())


def test_a_registered_agent_that_is_not_the_default_is_not_asked():
    async def scenario():
        async with simulator() as address:
            app_bus, ctl = await setup(address)
            agent = Agent(app_bus)
            await call(app_bus, AM, "RegisterAgent", "os", ["/agent", "KeyboardDisplay"])
            with pytest.raises(CallFailed) as err:
                await central(ctl, "PairCentral", "ssa{sv}", [PHONE, "just-works", {}])
            assert err.value.name == "org.bluez.Error.AuthenticationFailed"
            assert agent.calls == []
    run(scenario())


def test_unknown_method_and_unconnected_central_are_refused():
    async def scenario():
        async with simulator() as address:
            _, ctl = await setup(address)
            with pytest.raises(CallFailed) as err:
                await central(ctl, "PairCentral", "ssa{sv}", [PHONE, "telepathy", {}])
            assert err.value.name == "org.bluez.Error.InvalidArguments"
            with pytest.raises(CallFailed):
                await central(ctl, "PairCentral", "ssa{sv}", ["C0:FF:EE:00:00:99", "just-works", {}])
    run(scenario())
