"""org.bluez.AgentManager1 at /org/bluez (src/agent.c) and the pairing decision of Device1.Pair().

For Device1.Pair (device.py): call `await agent.pair(sim, device, msg.sender)` after the checks
Device1 owns (InProgress while bonding, AlreadyExists when bonded); it returns when pairing
succeeded and raises the org.bluez.Error BlueZ replies with otherwise. The device may carry a
`pairing` dict (from its scenario entry) saying what the remote asks for:
    {"method": "just-works" | "passkey" | "confirm" | "display", "passkey": 123456,
     "fail": "AuthenticationFailed" (the remote refuses whatever happens)}
As in device.c pair_device(), the agent is the caller's own one, else the default agent; without
any agent pairing still runs with NoInputNoOutput capability, which can only do Just Works.
"""
from __future__ import annotations

import logging
from typing import Any

from dbus_fast import Message

from . import errors
from .interface import Interface, method
from .server_app import AppCallError, call_app, send_app_noreply

log = logging.getLogger("bluezsim.agent")

AGENT = "org.bluez.Agent1"
CAPABILITIES = {"": "KeyboardDisplay", "DisplayOnly": "DisplayOnly", "DisplayYesNo": "DisplayYesNo",
                "KeyboardOnly": "KeyboardOnly", "NoInputNoOutput": "NoInputNoOutput",
                "KeyboardDisplay": "KeyboardDisplay"}
CAN_ENTER = {"KeyboardOnly", "KeyboardDisplay"}
CAN_CONFIRM = {"DisplayYesNo", "KeyboardDisplay"}
CAN_DISPLAY = {"DisplayOnly", "DisplayYesNo", "KeyboardDisplay"}


class RegisteredAgent:
    def __init__(self, owner: str, path: str, capability: str) -> None:
        self.owner = owner
        self.path = path
        self.capability = capability


class AgentManager1(Interface):
    name = "org.bluez.AgentManager1"

    def __init__(self, manager: "AgentManager") -> None:
        self.manager = manager

    @method("os", "")
    def RegisterAgent(self, msg: Message, path: str, capability: str) -> None:
        m = self.manager
        if msg.sender in m.agents:
            raise errors.bluez_error("AlreadyExists", "Already Exists")
        if capability not in CAPABILITIES:
            raise errors.invalid_args()
        m.agents[msg.sender] = RegisteredAgent(msg.sender, path, CAPABILITIES[capability])
        m.sim.counters["agents.registered"] += 1

    @method("o", "")
    def UnregisterAgent(self, msg: Message, path: str) -> None:
        m = self.manager
        agent = m.agents.get(msg.sender)
        if agent is None or agent.path != path:
            raise errors.does_not_exist()
        m.remove(agent)

    @method("o", "")
    def RequestDefaultAgent(self, msg: Message, path: str) -> None:
        m = self.manager
        agent = m.agents.get(msg.sender)
        if agent is None or agent.path != path:
            raise errors.does_not_exist()
        if agent in m.defaults:
            m.defaults.remove(agent)
        m.defaults.insert(0, agent)
        m.sim.counters["agents.default_requested"] += 1


class AgentManager:
    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.agents: dict[str, RegisteredAgent] = {}
        self.defaults: list[RegisteredAgent] = []  # head is the default agent

    def install(self) -> None:
        self.sim.export("/org/bluez", AgentManager1(self))

    def remove(self, agent: RegisteredAgent) -> None:
        self.agents.pop(agent.owner, None)
        if agent in self.defaults:
            self.defaults.remove(agent)

    def client_left(self, owner: str) -> None:
        agent = self.agents.get(owner)
        if agent is not None:
            self.remove(agent)

    def reset(self) -> None:
        """bluetoothd stops: each agent is told Release()."""
        for agent in list(self.agents.values()):
            if self.sim.bus is not None:
                send_app_noreply(self.sim.bus, agent.owner, agent.path, AGENT, "Release")
            self.remove(agent)

    def agent_for(self, sender: str | None) -> RegisteredAgent | None:
        """agent_get(): the caller's own agent, else the default one."""
        if sender and sender in self.agents:
            return self.agents[sender]
        return self.defaults[0] if self.defaults else None


def _auth_error(app_error: AppCallError) -> Exception:
    if app_error.name == "org.bluez.Error.Canceled":
        return errors.bluez_error("AuthenticationCanceled", "Authentication Canceled")
    if app_error.name == "org.freedesktop.DBus.Error.NoReply":
        return errors.bluez_error("AuthenticationTimeout", "Authentication Timeout")
    return errors.bluez_error("AuthenticationRejected", "Authentication Rejected")


async def pair(sim: Any, device: Any, sender: str | None) -> None:
    """Runs the SMP exchange the device's `pairing` spec asks for, with the agent BlueZ would use."""
    spec = getattr(device, "pairing", None) or {}
    manager: AgentManager | None = getattr(getattr(sim, "server_side", None), "agents", None)
    agent = manager.agent_for(sender) if manager is not None else None
    capability = agent.capability if agent is not None else "NoInputNoOutput"
    kind = spec.get("method", "just-works")
    expected = int(spec.get("passkey", 123456))
    sim.counters["pairing.attempts"] += 1
    if spec.get("fail"):
        raise errors.bluez_error(spec["fail"], spec["fail"].replace("Authentication", "Authentication "))
    if kind == "just-works":
        return
    if agent is None or (kind == "passkey" and capability not in CAN_ENTER) \
            or (kind == "confirm" and capability not in CAN_CONFIRM) \
            or (kind == "display" and capability not in CAN_DISPLAY):
        # The remote needs MITM protection the local IO capability cannot give.
        raise errors.bluez_error("AuthenticationFailed", "Authentication Failed")
    try:
        if kind == "passkey":
            reply = await call_app(sim.bus, agent.owner, agent.path, AGENT, "RequestPasskey", "o", [device.path])
            if reply.signature != "u" or reply.body[0] != expected:
                raise errors.bluez_error("AuthenticationFailed", "Authentication Failed")
        elif kind == "confirm":
            await call_app(sim.bus, agent.owner, agent.path, AGENT, "RequestConfirmation", "ou",
                           [device.path, expected])
        elif kind == "display":
            sim.bus.send(Message(destination=agent.owner, path=agent.path, interface=AGENT,
                                 member="DisplayPasskey", signature="ouq", body=[device.path, expected, 0]))
        else:
            raise errors.invalid_args(f"unknown pairing method {kind!r}")
    except AppCallError as e:
        log.info("agent refused pairing of %s: %s", device.path, e)
        raise _auth_error(e) from None
