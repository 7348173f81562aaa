"""org.freedesktop.DBus.Properties and Introspectable for the simulator's own object tables."""
from __future__ import annotations

from typing import Any

from dbus_fast import DBusError, Message


def properties_call(objects: dict, msg: Message) -> Any:
    """Get / GetAll / Set. Returns the reply, or a coroutine when a Set completes asynchronously."""
    ifaces = objects.get(msg.path, {})
    if msg.member == "GetAll" and msg.signature == "s":
        iface = ifaces.get(msg.body[0])
        return Message.new_method_return(msg, "a{sv}", [iface.get_properties() if iface else {}])
    if msg.member == "Get" and msg.signature == "ss":
        iface = ifaces.get(msg.body[0])
        props = iface.get_properties() if iface else {}
        if msg.body[1] not in props:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such property '{msg.body[1]}'")
        return Message.new_method_return(msg, "v", [props[msg.body[1]]])
    if msg.member == "Set" and msg.signature == "ssv":
        iface = ifaces.get(msg.body[0])
        if iface is None:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such interface '{msg.body[0]}'")
        result = iface.set_property(msg, msg.body[1], msg.body[2])
        if hasattr(result, "__await__"):
            return result
        return Message.new_method_return(msg)
    raise DBusError("org.freedesktop.DBus.Error.UnknownMethod",
                    f"Properties.{msg.member} with signature '{msg.signature}' does not exist")


def introspect(objects: dict, path: str) -> str:
    parts = ['<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
             ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n<node>',
             '<interface name="org.freedesktop.DBus.Introspectable">'
             '<method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>',
             '<interface name="org.freedesktop.DBus.Properties">'
             '<method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/>'
             '<arg type="v" direction="out"/></method>'
             '<method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>'
             '<method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/>'
             '<arg type="v" direction="in"/></method>'
             '<signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>'
             '</interface>']
    for iface in objects.get(path, {}).values():
        parts.append(iface.introspect_xml())
    prefix = path.rstrip("/") + "/"
    children = sorted({p[len(prefix):].split("/")[0] for p in objects if p.startswith(prefix) and p != path})
    parts.extend(f'<node name="{c}"/>' for c in children)
    parts.append("</node>")
    return "".join(parts)
