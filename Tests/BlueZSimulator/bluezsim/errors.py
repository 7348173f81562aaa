"""BlueZ's D-Bus error names and the ATT error mapping of src/gatt-client.c / src/error.c."""
from __future__ import annotations

from dbus_fast import DBusError

PREFIX = "org.bluez.Error."


def bluez_error(name: str, message: str) -> DBusError:
    """An org.bluez.Error.<name> reply with BlueZ's message text."""
    return DBusError(PREFIX + name, message)


def failed(message: str) -> DBusError:
    return bluez_error("Failed", message)


def in_progress(message: str = "In Progress") -> DBusError:
    return bluez_error("InProgress", message)


def not_ready() -> DBusError:
    return bluez_error("NotReady", "Resource Not Ready")


def invalid_args(message: str = "Invalid arguments in method call") -> DBusError:
    return bluez_error("InvalidArguments", message)


def does_not_exist(message: str = "Does Not Exist") -> DBusError:
    return bluez_error("DoesNotExist", message)


def not_supported(message: str = "Operation is not supported") -> DBusError:
    return bluez_error("NotSupported", message)


def not_permitted(message: str = "Operation is not permitted") -> DBusError:
    return bluez_error("NotPermitted", message)


def not_authorized(message: str = "Operation Not Authorized") -> DBusError:
    return bluez_error("NotAuthorized", message)


def not_connected(message: str = "Not Connected") -> DBusError:
    return bluez_error("NotConnected", message)


class AttError(Exception):
    """An ATT protocol error returned by a (virtual) remote GATT server."""

    def __init__(self, code: int, message: str = "") -> None:
        if not 0 <= code <= 0xFF:
            raise ValueError(f"ATT error code out of range: {code}")
        super().__init__(message or f"ATT error 0x{code:02x}")
        self.code = code


# ATT error codes (Core spec Vol 3 Part F 3.4.1.1).
ATT_READ_NOT_PERMITTED = 0x02
ATT_WRITE_NOT_PERMITTED = 0x03
ATT_INSUFFICIENT_AUTHENTICATION = 0x05
ATT_REQUEST_NOT_SUPPORTED = 0x06
ATT_INVALID_OFFSET = 0x07
ATT_INSUFFICIENT_AUTHORIZATION = 0x08
ATT_INSUFFICIENT_ENCRYPTION_KEY_SIZE = 0x0C
ATT_INVALID_ATTRIBUTE_VALUE_LENGTH = 0x0D
ATT_UNLIKELY_ERROR = 0x0E
ATT_INSUFFICIENT_ENCRYPTION = 0x0F


def att_error_to_dbus(code: int) -> DBusError:
    """Client-side mapping, as gatt-client.c's create_gatt_dbus_error()."""
    if code == 0:  # an error response carrying code 0 (a request cut by the link is 0x0E instead)
        return failed("Operation failed")
    if code == ATT_READ_NOT_PERMITTED:
        return not_permitted("Read not permitted")
    if code == ATT_WRITE_NOT_PERMITTED:
        return not_permitted("Write not permitted")
    if code in (ATT_INSUFFICIENT_AUTHENTICATION, ATT_INSUFFICIENT_ENCRYPTION,
                ATT_INSUFFICIENT_ENCRYPTION_KEY_SIZE):
        return not_permitted("Not paired")
    if code == ATT_INVALID_OFFSET:
        return invalid_args("Invalid offset")
    if code == ATT_INVALID_ATTRIBUTE_VALUE_LENGTH:
        return invalid_args("Invalid Length")
    if code == ATT_INSUFFICIENT_AUTHORIZATION:
        return not_authorized()
    if code == ATT_REQUEST_NOT_SUPPORTED:
        return not_supported()
    return failed(f"Operation failed with ATT error: 0x{code:02x}")
