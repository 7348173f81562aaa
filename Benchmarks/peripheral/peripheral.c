/*
 * The floor `gattway-bench compare` measures Gattway's local peripheral against: the least a program must do to
 * serve one MQTT topic as a GATT characteristic's notifications. One thread, one poll loop over the D-Bus
 * connection, the broker socket and the AcquireNotify sockets.
 *
 *   peripheral ADAPTER_PATH HOST PORT TOPIC
 *
 * It registers (GattManager1.RegisterApplication on ADAPTER_PATH) one primary service with one characteristic
 * flagged read + notify, with the UUIDs of `gattway-bench peripheral`, answering only the owner of org.bluez. Each
 * message on TOPIC (at most 512 bytes, else refused and counted) becomes the characteristic's Value (ReadValue
 * answers it) and is notified: written to every socket handed out by AcquireNotify (a bounded queue of 64 per
 * socket while it is full, the oldest dropped and counted beyond), and as PropertiesChanged(Value) while a
 * StartNotify session is open.
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (the simulator's). Prints "peripheral: ready" once registered; exits on
 * SIGTERM. Compiled by the benchmark at run time; it is not part of Gattway.
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <mosquitto.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SERVICE_UUID "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
#define CHARACTERISTIC_UUID "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
#define ROOT_PATH "/org/gattway/bench"
#define SERVICE_PATH ROOT_PATH "/service0"
#define CHARACTERISTIC_PATH SERVICE_PATH "/char0"
#define GATT_CHARACTERISTIC "org.bluez.GattCharacteristic1"
#define MAX_VALUE 512   /* BT_ATT_MAX_VALUE_LEN, Gattway's default max_length */
#define MAX_SOCKETS 8   /* centrals holding an AcquireNotify socket */
#define QUEUE_DEPTH 64  /* values waiting for room in one socket, as Gattway's default queue */

static volatile sig_atomic_t stopping = 0;

static void on_signal(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "peripheral: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

struct value {
    int length;
    unsigned char bytes[MAX_VALUE];
};

/* One AcquireNotify socket: our end, and the values waiting for room in it (a ring). */
struct notify_socket {
    int fd;
    int head, count;
    struct value queue[QUEUE_DEPTH];
};

static DBusConnection *bus;
static char *bluez_owner;                   /* unique name of org.bluez: the only caller answered */
static struct value current;                /* the characteristic's Value */
static int notifying;                       /* a StartNotify session is open */
static struct notify_socket sockets[MAX_SOCKETS];
static int socket_count;
static unsigned long received, refused, queue_drops, notified;

/* ----- notification out ------------------------------------------------------------------------------------- */

static void emit_properties_changed(const char *name, int type, const void *value, int length) {
    DBusMessage *signal = dbus_message_new_signal(CHARACTERISTIC_PATH, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
    if (!signal) fail("out of memory", "PropertiesChanged");
    const char *interface = GATT_CHARACTERISTIC;
    DBusMessageIter args, changed, entry, variant, bytes, invalidated;
    dbus_message_iter_init_append(signal, &args);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &changed);
    dbus_message_iter_open_container(&changed, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    if (type == DBUS_TYPE_BYTE) {
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant);
        dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &bytes);
        dbus_message_iter_append_fixed_array(&bytes, DBUS_TYPE_BYTE, &value, length);
        dbus_message_iter_close_container(&variant, &bytes);
    } else {
        dbus_bool_t flag = *(const int *)value ? TRUE : FALSE;
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "b", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_BOOLEAN, &flag);
    }
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&changed, &entry);
    dbus_message_iter_close_container(&args, &changed);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&args, &invalidated);
    if (!dbus_connection_send(bus, signal, NULL)) fail("out of memory", "send");
    dbus_message_unref(signal);
}

static void close_socket(int index) {
    close(sockets[index].fd);
    sockets[index] = sockets[--socket_count];
}

/* Sends what waits in the socket's queue; returns 0 when the socket hung up or failed (then it is closed). */
static int flush_socket(int index) {
    struct notify_socket *s = &sockets[index];
    while (s->count > 0) {
        struct value *v = &s->queue[s->head];
        if (send(s->fd, v->bytes, (size_t)v->length, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
            close_socket(index);
            return 0;
        }
        notified++;
        s->head = (s->head + 1) % QUEUE_DEPTH;
        s->count--;
    }
    return 1;
}

static void enqueue(struct notify_socket *s, const struct value *v) {
    if (s->count == QUEUE_DEPTH) {  /* full: the oldest goes */
        s->head = (s->head + 1) % QUEUE_DEPTH;
        s->count--;
        queue_drops++;
    }
    s->queue[(s->head + s->count) % QUEUE_DEPTH] = *v;
    s->count++;
}

/* ----- MQTT in ---------------------------------------------------------------------------------------------- */

static void on_message(struct mosquitto *broker, void *context, const struct mosquitto_message *message) {
    (void)broker;
    (void)context;
    received++;
    if (message->payloadlen < 0 || message->payloadlen > MAX_VALUE) {
        refused++;
        return;
    }
    current.length = message->payloadlen;
    memcpy(current.bytes, message->payload, (size_t)message->payloadlen);
    for (int index = socket_count - 1; index >= 0; index--) {
        struct notify_socket *s = &sockets[index];
        if (s->count == 0) {
            if (send(s->fd, current.bytes, (size_t)current.length, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) {
                notified++;
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                close_socket(index);
                continue;
            }
        }
        enqueue(s, &current);
    }
    if (notifying) {
        emit_properties_changed("Value", DBUS_TYPE_BYTE, current.bytes, current.length);
        notified++;
    }
}

/* ----- D-Bus calls from bluetoothd -------------------------------------------------------------------------- */

static void append_variant_string(DBusMessageIter *dict, const char *name, int type, const char *value) {
    DBusMessageIter entry, variant;
    char signature[2] = {(char)type, 0};
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, &value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

static void append_variant_bool(DBusMessageIter *dict, const char *name, int value) {
    DBusMessageIter entry, variant;
    dbus_bool_t flag = value ? TRUE : FALSE;
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "b", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_BOOLEAN, &flag);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

/* Opens `path → {interface → {…}}` in the GetManagedObjects reply; close with close_object. */
static void open_object(DBusMessageIter *objects, DBusMessageIter *object, DBusMessageIter *interfaces,
    DBusMessageIter *interface, DBusMessageIter *properties, const char *path, const char *name) {
    dbus_message_iter_open_container(objects, DBUS_TYPE_DICT_ENTRY, NULL, object);
    dbus_message_iter_append_basic(object, DBUS_TYPE_OBJECT_PATH, &path);
    dbus_message_iter_open_container(object, DBUS_TYPE_ARRAY, "{sa{sv}}", interfaces);
    dbus_message_iter_open_container(interfaces, DBUS_TYPE_DICT_ENTRY, NULL, interface);
    dbus_message_iter_append_basic(interface, DBUS_TYPE_STRING, &name);
    dbus_message_iter_open_container(interface, DBUS_TYPE_ARRAY, "{sv}", properties);
}

static void close_object(DBusMessageIter *objects, DBusMessageIter *object, DBusMessageIter *interfaces,
    DBusMessageIter *interface, DBusMessageIter *properties) {
    dbus_message_iter_close_container(interface, properties);
    dbus_message_iter_close_container(interfaces, interface);
    dbus_message_iter_close_container(object, interfaces);
    dbus_message_iter_close_container(objects, object);
}

static DBusMessage *managed_objects(DBusMessage *call) {
    DBusMessage *reply = dbus_message_new_method_return(call);
    DBusMessageIter args, objects, object, interfaces, interface, properties, entry, variant, array;
    dbus_message_iter_init_append(reply, &args);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{oa{sa{sv}}}", &objects);

    open_object(&objects, &object, &interfaces, &interface, &properties, SERVICE_PATH, "org.bluez.GattService1");
    append_variant_string(&properties, "UUID", DBUS_TYPE_STRING, SERVICE_UUID);
    append_variant_bool(&properties, "Primary", 1);
    close_object(&objects, &object, &interfaces, &interface, &properties);

    open_object(&objects, &object, &interfaces, &interface, &properties, CHARACTERISTIC_PATH, GATT_CHARACTERISTIC);
    append_variant_string(&properties, "UUID", DBUS_TYPE_STRING, CHARACTERISTIC_UUID);
    append_variant_string(&properties, "Service", DBUS_TYPE_OBJECT_PATH, SERVICE_PATH);
    const char *flags[] = {"read", "notify"};
    const char *name = "Flags";
    dbus_message_iter_open_container(&properties, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "as", &variant);
    dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "s", &array);
    for (int i = 0; i < 2; i++) dbus_message_iter_append_basic(&array, DBUS_TYPE_STRING, &flags[i]);
    dbus_message_iter_close_container(&variant, &array);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&properties, &entry);
    name = "Value";
    const unsigned char *bytes = current.bytes;
    dbus_message_iter_open_container(&properties, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant);
    dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &array);
    dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, current.length);
    dbus_message_iter_close_container(&variant, &array);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&properties, &entry);
    /* Exposing NotifyAcquired makes bluetoothd (5.48+) subscribe with AcquireNotify rather than StartNotify. */
    append_variant_bool(&properties, "NotifyAcquired", 0);
    append_variant_bool(&properties, "Notifying", notifying);
    close_object(&objects, &object, &interfaces, &interface, &properties);

    dbus_message_iter_close_container(&args, &objects);
    return reply;
}

/* The options dictionary's `name` entry of type `type` into `out`; 0 when absent or of another type. */
static int option(DBusMessage *call, const char *name, int type, void *out) {
    DBusMessageIter args, options;
    if (!dbus_message_iter_init(call, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY ||
        dbus_message_iter_get_element_type(&args) != DBUS_TYPE_DICT_ENTRY)
        return 0;
    for (dbus_message_iter_recurse(&args, &options); dbus_message_iter_get_arg_type(&options) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&options)) {
        DBusMessageIter entry, variant;
        const char *key;
        dbus_message_iter_recurse(&options, &entry);
        if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_STRING) return 0;
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, name) != 0 || !dbus_message_iter_next(&entry)) continue;
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != type) return 0;
        dbus_message_iter_get_basic(&variant, out);
        return 1;
    }
    return 0;
}

static DBusMessage *read_value(DBusMessage *call) {
    dbus_uint16_t offset = 0;
    option(call, "offset", DBUS_TYPE_UINT16, &offset);
    if (offset > current.length)
        return dbus_message_new_error(call, "org.bluez.Error.InvalidOffset", "offset beyond the value");
    DBusMessage *reply = dbus_message_new_method_return(call);
    const unsigned char *bytes = current.bytes + offset;
    DBusMessageIter args, array;
    dbus_message_iter_init_append(reply, &args);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "y", &array);
    dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, current.length - offset);
    dbus_message_iter_close_container(&args, &array);
    return reply;
}

static DBusMessage *acquire_notify(DBusMessage *call) {
    if (socket_count == MAX_SOCKETS) return dbus_message_new_error(call, "org.bluez.Error.Failed", "too many centrals");
    dbus_uint16_t mtu = 23;
    option(call, "mtu", DBUS_TYPE_UINT16, &mtu);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) < 0)
        return dbus_message_new_error(call, "org.bluez.Error.Failed", strerror(errno));
    DBusMessage *reply = dbus_message_new_method_return(call);
    /* libdbus duplicates the descriptor into the message: our copy of bluetoothd's end closes here. */
    dbus_message_append_args(reply, DBUS_TYPE_UNIX_FD, &pair[1], DBUS_TYPE_UINT16, &mtu, DBUS_TYPE_INVALID);
    close(pair[1]);
    sockets[socket_count].fd = pair[0];
    sockets[socket_count].head = sockets[socket_count].count = 0;
    socket_count++;
    return reply;
}

static DBusMessage *set_notifying(DBusMessage *call, int on) {
    if (notifying != on) {
        notifying = on;
        emit_properties_changed("Notifying", DBUS_TYPE_BOOLEAN, &notifying, 0);
    }
    return dbus_message_new_method_return(call);
}

static DBusMessage *answer(DBusMessage *call) {
    const char *path = dbus_message_get_path(call);
    const char *sender = dbus_message_get_sender(call);
    if (!sender || !bluez_owner || strcmp(sender, bluez_owner) != 0)
        return dbus_message_new_error(call, DBUS_ERROR_ACCESS_DENIED, "only bluetoothd may call");
    if (path && strcmp(path, ROOT_PATH) == 0 &&
        dbus_message_is_method_call(call, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
        return managed_objects(call);
    if (dbus_message_is_method_call(call, DBUS_INTERFACE_PROPERTIES, "Set"))
        return dbus_message_new_method_return(call);  /* the Handle bluetoothd writes back; not kept */
    if (path && strcmp(path, CHARACTERISTIC_PATH) == 0) {
        if (dbus_message_is_method_call(call, GATT_CHARACTERISTIC, "ReadValue")) return read_value(call);
        if (dbus_message_is_method_call(call, GATT_CHARACTERISTIC, "AcquireNotify")) return acquire_notify(call);
        if (dbus_message_is_method_call(call, GATT_CHARACTERISTIC, "StartNotify")) return set_notifying(call, 1);
        if (dbus_message_is_method_call(call, GATT_CHARACTERISTIC, "StopNotify")) return set_notifying(call, 0);
        if (dbus_message_is_method_call(call, GATT_CHARACTERISTIC, "WriteValue"))
            return dbus_message_new_error(call, "org.bluez.Error.NotPermitted", "not writable");
    }
    return dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, "unknown method");
}

/* Handles what libdbus has read; returns the reply to `awaited` (caller unrefs) when it arrived, else NULL. */
static DBusMessage *dispatch(dbus_uint32_t awaited) {
    DBusMessage *message, *awaited_reply = NULL;
    while ((message = dbus_connection_pop_message(bus)) != NULL) {
        int type = dbus_message_get_type(message);
        if (type == DBUS_MESSAGE_TYPE_METHOD_CALL) {
            DBusMessage *reply = answer(message);
            if (!reply) fail("out of memory", "reply");
            if (!dbus_message_get_no_reply(message)) dbus_connection_send(bus, reply, NULL);
            dbus_message_unref(reply);
        } else if (awaited && (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) &&
                   dbus_message_get_reply_serial(message) == awaited) {
            awaited_reply = message;
            continue;
        }
        dbus_message_unref(message);
    }
    return awaited_reply;
}

static char *name_owner(const char *name) {
    DBusMessage *call = dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "GetNameOwner");
    dbus_message_append_args(call, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID);
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, call, 30000, &error);
    dbus_message_unref(call);
    if (!reply) fail("GetNameOwner org.bluez", error.message);
    const char *owner;
    if (!dbus_message_get_args(reply, &error, DBUS_TYPE_STRING, &owner, DBUS_TYPE_INVALID))
        fail("GetNameOwner reply", error.message);
    char *copy = strdup(owner);
    dbus_message_unref(reply);
    return copy;
}

/* ----- the loop --------------------------------------------------------------------------------------------- */

static void pump(struct mosquitto *broker, int timeout_ms) {
    struct pollfd fds[2 + MAX_SOCKETS];
    int bus_fd = -1;
    if (!dbus_connection_get_unix_fd(bus, &bus_fd)) fail("the bus has no socket", NULL);
    fds[0] = (struct pollfd){.fd = bus_fd, .events = POLLIN | (dbus_connection_has_messages_to_send(bus) ? POLLOUT : 0)};
    fds[1] = (struct pollfd){.fd = mosquitto_socket(broker), .events = POLLIN | (mosquitto_want_write(broker) ? POLLOUT : 0)};
    int count = socket_count;
    for (int i = 0; i < count; i++)  /* hang-ups are always reported; room only matters while values wait */
        fds[2 + i] = (struct pollfd){.fd = sockets[i].fd, .events = sockets[i].count ? POLLOUT : 0};
    if (poll(fds, (nfds_t)(2 + count), timeout_ms) < 0) {
        if (errno == EINTR) return;
        fail("poll", strerror(errno));
    }
    if (fds[0].revents && (!dbus_connection_read_write(bus, 0) || !dbus_connection_get_is_connected(bus)))
        fail("the bus connection closed", NULL);
    if (fds[1].revents & POLLIN) {
        int rc = mosquitto_loop_read(broker, 1);
        if (rc != MOSQ_ERR_SUCCESS) fail("broker read", mosquitto_strerror(rc));
    }
    if (fds[1].revents & POLLOUT) {
        int rc = mosquitto_loop_write(broker, 1);
        if (rc != MOSQ_ERR_SUCCESS) fail("broker write", mosquitto_strerror(rc));
    }
    mosquitto_loop_misc(broker);  /* keepalive */
    /* Sockets from the last to the first, so that closing one (the last moves into its slot) skips none. */
    for (int i = count - 1; i >= 0; i--) {
        if (fds[2 + i].revents & (POLLHUP | POLLERR)) close_socket(i);
        else if (fds[2 + i].revents & POLLOUT) flush_socket(i);
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: peripheral ADAPTER_PATH HOST PORT TOPIC\n");
        return 2;
    }
    struct sigaction action = {0};
    action.sa_handler = on_signal;  /* no SA_RESTART: poll returns EINTR */
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    mosquitto_lib_init();
    struct mosquitto *broker = mosquitto_new("c-peripheral", true, NULL);
    if (!broker) fail("mosquitto_new", strerror(errno));
    mosquitto_message_callback_set(broker, on_message);
    int rc = mosquitto_connect(broker, argv[2], atoi(argv[3]), 60);
    if (rc != MOSQ_ERR_SUCCESS) fail("connect to the broker", mosquitto_strerror(rc));
    rc = mosquitto_subscribe(broker, NULL, argv[4], 1);
    if (rc != MOSQ_ERR_SUCCESS) fail("subscribe", mosquitto_strerror(rc));

    DBusError error;
    dbus_error_init(&error);
    bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error);
    if (!bus) fail("connect to the bus", error.message);
    dbus_connection_set_exit_on_disconnect(bus, FALSE);
    bluez_owner = name_owner("org.bluez");

    /* bluetoothd reads our objects before it answers: serve calls while waiting for the reply. */
    DBusMessage *call = dbus_message_new_method_call("org.bluez", argv[1], "org.bluez.GattManager1", "RegisterApplication");
    const char *root = ROOT_PATH;
    DBusMessageIter args, options;
    dbus_message_iter_init_append(call, &args);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_OBJECT_PATH, &root);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options);
    dbus_message_iter_close_container(&args, &options);
    dbus_uint32_t serial = 0;
    if (!dbus_connection_send(bus, call, &serial)) fail("out of memory", "RegisterApplication");
    dbus_message_unref(call);
    DBusMessage *registered = NULL;
    while (!registered && !stopping) {
        pump(broker, 1000);
        registered = dispatch(serial);
    }
    if (!registered) return 0;
    if (dbus_message_get_type(registered) == DBUS_MESSAGE_TYPE_ERROR)
        fail("RegisterApplication", dbus_message_get_error_name(registered));
    dbus_message_unref(registered);
    printf("peripheral: ready\n");
    fflush(stdout);

    while (!stopping) {
        dispatch(0);  /* libdbus may have read more than one message already: handle them before sleeping */
        pump(broker, 1000);
    }
    fprintf(stderr, "peripheral: %lu messages, %lu refused, %lu notifications, %lu dropped from full queues\n",
        received, refused, notified, queue_drops);
    mosquitto_disconnect(broker);
    mosquitto_destroy(broker);
    mosquitto_lib_cleanup();
    dbus_connection_close(bus);
    dbus_connection_unref(bus);
    return 0;
}
