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
