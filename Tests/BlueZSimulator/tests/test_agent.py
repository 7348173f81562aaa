"""AgentManager1 (agent.c): registration rules, default agent, Release when bluetoothd stops."""
from __future__ import annotations

import asyncio

import pytest
from dbus_fast import Message, MessageType

from sim_process import CONTROL, CallFailed, bluez, call, connect, simulator, wait_for

AM = bluez("/org/bluez", "org.bluez.AgentManager1")


class Agent:
    """A minimal org.bluez.Agent1 that records the calls bluetoothd makes."""

    def __init__(self, bus, path: str = "/agent") -> None:
        self.path = path
        self.calls: list[str] = []
        bus.add_message_handler(self._handle)

    def _handle(self, msg: Message):
        if msg.message_type is not MessageType.METHOD_CALL or msg.path != self.path:
            return False
        self.calls.append(msg.member)
        return Message.new_method_return(msg)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


def test_register_unregister_and_default():
    async def scenario():
        async with simulator() as address:
            bus = await connect(address)
            with pytest.raises(CallFailed) as err:
                await call(bus, AM, "RegisterAgent", "os", ["/agent", "Telepathic"])
            assert err.value.name == "org.bluez.Error.InvalidArguments"
            with pytest.raises(CallFailed) as err:
                await call(bus, AM, "UnregisterAgent", "o", ["/agent"])
            assert err.value.name == "org.bluez.Error.DoesNotExist"
            await call(bus, AM, "RegisterAgent", "os", ["/agent", ""])  # "" means KeyboardDisplay
            with pytest.raises(CallFailed) as err:  # one agent per client, whatever the path
                await call(bus, AM, "RegisterAgent", "os", ["/agent2", "NoInputNoOutput"])
            assert err.value.name == "org.bluez.Error.AlreadyExists"
            with pytest.raises(CallFailed) as err:
                await call(bus, AM, "RequestDefaultAgent", "o", ["/elsewhere"])
            assert err.value.name == "org.bluez.Error.DoesNotExist"
            await call(bus, AM, "RequestDefaultAgent", "o", ["/agent"])
            with pytest.raises(CallFailed) as err:
                await call(bus, AM, "UnregisterAgent", "o", ["/elsewhere"])
            assert err.value.name == "org.bluez.Error.DoesNotExist"
            await call(bus, AM, "UnregisterAgent", "o", ["/agent"])
            await call(bus, AM, "RegisterAgent", "os", ["/agent", "DisplayYesNo"])  # free again
            bus.disconnect()
    run(scenario())


def test_agents_are_released_when_bluetoothd_stops():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            agent = Agent(bus)
            await call(bus, AM, "RegisterAgent", "os", ["/agent", "KeyboardDisplay"])
            await call(ctl, CONTROL, "RestartBluetoothd", "d", [0.05])
            await wait_for(lambda: "Release" in agent.calls, what="Agent1.Release")

            async def registered_again():
                try:
                    await call(bus, AM, "RegisterAgent", "os", ["/agent", "KeyboardDisplay"])
                    return True
                except (CallFailed, asyncio.TimeoutError):
                    return False
            await wait_for(registered_again, what="a fresh bluetoothd to accept the agent")
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


class PairingAgent:
    """An Agent1 answering RequestPasskey/RequestConfirmation as told."""

    def __init__(self, bus, passkey: int = 123456, error: str | None = None) -> None:
        self.passkey = passkey
        self.error = error
        self.calls: list[tuple[str, list]] = []
        bus.add_message_handler(self._handle)

    def _handle(self, msg: Message):
        if msg.message_type is not MessageType.METHOD_CALL or msg.path != "/agent":
            return False
        self.calls.append((msg.member, list(msg.body)))
        if self.error:
            return Message.new_error(msg, self.error, "no")
        if msg.member == "RequestPasskey":
            return Message.new_method_return(msg, "u", [self.passkey])
        return Message.new_method_return(msg)


@pytest.mark.parametrize("capability,spec,agent_error,passkey,expected", [
    (None, {}, None, 0, None),  # no agent: Just Works still pairs (NoInputNoOutput)
    (None, {"method": "passkey"}, None, 0, "AuthenticationFailed"),
    ("KeyboardDisplay", {"method": "passkey", "passkey": 4242}, None, 4242, None),
    ("KeyboardDisplay", {"method": "passkey", "passkey": 4242}, None, 1111, "AuthenticationFailed"),
    ("DisplayOnly", {"method": "passkey"}, None, 0, "AuthenticationFailed"),
    ("DisplayYesNo", {"method": "confirm"}, None, 0, None),
    ("DisplayYesNo", {"method": "confirm"}, "org.bluez.Error.Rejected", 0, "AuthenticationRejected"),
    ("DisplayYesNo", {"method": "confirm"}, "org.bluez.Error.Canceled", 0, "AuthenticationCanceled"),
    ("KeyboardDisplay", {"fail": "AuthenticationFailed"}, None, 0, "AuthenticationFailed"),
])
def test_pairing_decision_with_and_without_agent(capability, spec, agent_error, passkey, expected):
    """agent.pair() as Device1.Pair runs it, with a real agent client on a real bus."""
    import collections
    import sys
    from pathlib import Path
    from types import SimpleNamespace
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bluezsim import agent as agent_module

    async def scenario():
        async with simulator() as address:
            bluetoothd, client = await connect(address), await connect(address)
            manager = agent_module.AgentManager(SimpleNamespace(counters=collections.Counter()))
            if capability is not None:
                PairingAgent(client, passkey, agent_error)
                manager.agents[client.unique_name] = agent_module.RegisteredAgent(client.unique_name, "/agent",
                                                                                  capability)
            # bluetoothd's side: just what pair() touches, on its own connection of the real bus.
            sim = SimpleNamespace(bus=bluetoothd, counters=collections.Counter(),
                                  server_side=SimpleNamespace(agents=manager))
            device = SimpleNamespace(path="/org/bluez/hci1/dev_00_AA_01_00_00_00", pairing=spec)
            if expected is None:
                await agent_module.pair(sim, device, client.unique_name)
            else:
                with pytest.raises(Exception) as err:
                    await agent_module.pair(sim, device, client.unique_name)
                assert err.value.type == "org.bluez.Error." + expected
            bluetoothd.disconnect()
            client.disconnect()
    run(scenario())
