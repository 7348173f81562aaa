#include <dbus/dbus.h>

/* The length in bytes, as marshalled, of the array an iterator is inside (made by dbus_message_iter_recurse).
 * libdbus deprecates dbus_message_iter_get_array_len as of little use, but keeps it: Gattway needs exactly that
 * length to find where a message's body ends without copying the body (DBusSignalMessage.withBodyInPlace). */
static inline int gattway_dbus_iter_array_bytes(DBusMessageIter *iter) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return dbus_message_iter_get_array_len(iter);
#pragma GCC diagnostic pop
}
