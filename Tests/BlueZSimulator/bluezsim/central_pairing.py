"""A remote central pairing with the local adapter, answered by the default agent as bluetoothd does.

bluetoothd 5.66 learns of an incoming pairing from the kernel (mgmt User Confirmation / Passkey
events, src/adapter.c user_confirm_request_callback()) and asks an agent through src/device.c:
new_auth() takes the bonding's own agent, and for a pairing the remote started (no bonding) the
default agent (src/agent.c agent_get(NULL)); with no agent at all new_auth() fails and the pairing
is refused. device_confirm_passkey() asks RequestAuthorization for Just Works (confirm_hint) and
RequestConfirmation for numeric comparison; device_request_passkey() asks RequestPasskey;
device_notify_passkey() sends DisplayPasskey, which gets no answer.

Methods (what the remote asks for):
    just-works  RequestAuthorization(device)
    confirm     RequestConfirmation(device, passkey)
    display     DisplayPasskey(device, passkey, 0); the remote user types `entered` (default: the passkey)
    passkey     RequestPasskey(device); the remote shows `passkey`, the agent's answer must equal it
Approved: the link is encrypted (encrypt-* characteristics answer) and its Device1 is Paired.
Refused: org.bluez.Error.AuthenticationRejected (the agent said no), AuthenticationFailed (no agent,
an agent whose capability cannot do the method, or a wrong passkey), AuthenticationTimeout.
"""
from __future__ import annotations

import logging
from typing import Any

from dbus_fast import Message, Variant

from . import errors
from .agent import AGENT, CAN_CONFIRM, CAN_DISPLAY, CAN_ENTER, _auth_error
from .server_app import AppCallError, call_app

log = logging.getLogger("bluezsim.central_pairing")

METHODS = ("just-works", "confirm", "display", "passkey")
NEEDS = {"confirm": CAN_CONFIRM, "display": CAN_DISPLAY, "passkey": CAN_ENTER}


def _failed() -> Exception:
    return errors.bluez_error("AuthenticationFailed", "Authentication Failed")


async def pair_central(sim: Any, link: Any, method: str, passkey: int, entered: int) -> None:
    """Runs the pairing; marks the link encrypted and paired when the default agent approves it."""
    if method not in METHODS:
        raise errors.invalid_args(f"unknown pairing method {method!r} ({', '.join(METHODS)})")
    if not 0 <= passkey <= 999999 or not 0 <= entered <= 999999:
        raise errors.invalid_args("a passkey is within 0..999999")
    sim.counters["central.pairing.attempts"] += 1
    manager = getattr(getattr(sim, "server_side", None), "agents", None)
    agent = manager.agent_for(None) if manager is not None else None
    if agent is None:
        log.info("no agent available for the pairing of %s", link.address)  # new_auth(): -EPERM
        sim.counters["central.pairing.refused"] += 1
        raise _failed()
    if method in NEEDS and agent.capability not in NEEDS[method]:
        sim.counters["central.pairing.refused"] += 1
        raise _failed()
    try:
        if method == "just-works":
            await call_app(sim.bus, agent.owner, agent.path, AGENT, "RequestAuthorization", "o",
                           [link.device_path])
        elif method == "confirm":
            await call_app(sim.bus, agent.owner, agent.path, AGENT, "RequestConfirmation", "ou",
                           [link.device_path, passkey])
        elif method == "display":
            sim.bus.send(Message(destination=agent.owner, path=agent.path, interface=AGENT,
                                 member="DisplayPasskey", signature="ouq", body=[link.device_path, passkey, 0]))
            if entered != passkey:
                sim.counters["central.pairing.refused"] += 1
                raise _failed()
        else:
            reply = await call_app(sim.bus, agent.owner, agent.path, AGENT, "RequestPasskey", "o",
                                   [link.device_path])
            if reply.signature != "u" or reply.body[0] != passkey:
                sim.counters["central.pairing.refused"] += 1
                raise _failed()
    except AppCallError as e:
        log.info("agent refused the pairing of %s: %s", link.address, e)
        sim.counters["central.pairing.refused"] += 1
        raise _auth_error(e) from None
    link.encrypted = True
    link.paired = True
    sim.counters["central.pairing.approved"] += 1
    if link.device_iface is not None:
        link.device_iface.properties_changed({"Paired": Variant("b", True)})
