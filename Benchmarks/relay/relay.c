/*
 * The floor `gattway-bench compare` measures Gattway against: the least a program must do to relay one GATT
 * characteristic's notifications from BlueZ to MQTT. One thread, one poll loop over the D-Bus connection (or the
 * AcquireNotify socket) and the broker socket; each value is published at QoS 0 as it arrives, unchanged.
 *
 *   relay start   CHAR_PATH HOST PORT TOPIC   PropertiesChanged of the characteristic's Value (StartNotify)
 *   relay acquire CHAR_PATH HOST PORT TOPIC   one datagram per value from AcquireNotify's socket
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (the simulator's). Prints "relay: ready" once subscribed; exits on SIGTERM.
 * Compiled by the benchmark at run time; it is not part of Gattway.
 */
#include <dbus/dbus.h>
#include <mosquitto.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;

static void on_signal(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "relay: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

static struct mosquitto *broker;
static const char *topic;
static unsigned long published;

static void publish(const void *value, int length) {
    int rc = mosquitto_publish(broker, NULL, topic, length, value, 0, false);
    if (rc != MOSQ_ERR_SUCCESS) fail("publish", mosquitto_strerror(rc));
    published++;
}

/* Calls a no-argument-or-a{sv} method of the characteristic and returns the reply (caller unrefs). */
static DBusMessage *call_characteristic(DBusConnection *bus, const char *path, const char *method, int with_options) {
    DBusMessage *call = dbus_message_new_method_call("org.bluez", path, "org.bluez.GattCharacteristic1", method);
    if (!call) fail("out of memory", method);
    if (with_options) {
        DBusMessageIter args, options;
        dbus_message_iter_init_append(call, &args);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options);
        dbus_message_iter_close_container(&args, &options);
    }
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, call, 30000, &error);
    dbus_message_unref(call);
    if (!reply) fail(method, error.message);
    return reply;
}

/* PropertiesChanged("org.bluez.GattCharacteristic1", {"Value": <ay>, ...}, [...]): publishes the Value. */
static void relay_properties_changed(DBusMessage *message) {
    if (!dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")) return;
    DBusMessageIter args, changed;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return;
    const char *interface;
    dbus_message_iter_get_basic(&args, &interface);
    if (strcmp(interface, "org.bluez.GattCharacteristic1") != 0 || !dbus_message_iter_next(&args)) return;
    if (dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return;
    for (dbus_message_iter_recurse(&args, &changed); dbus_message_iter_get_arg_type(&changed) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&changed)) {
        DBusMessageIter entry, variant, bytes;
        const char *name;
        dbus_message_iter_recurse(&changed, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        if (strcmp(name, "Value") != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY ||
            dbus_message_iter_get_element_type(&variant) != DBUS_TYPE_BYTE)
            return;
        dbus_message_iter_recurse(&variant, &bytes);
        const unsigned char *value = NULL;
        int length = 0;
        dbus_message_iter_get_fixed_array(&bytes, &value, &length);
        publish(value, length);
        return;
    }
}

int main(int argc, char **argv) {
    if (argc != 6 || (strcmp(argv[1], "start") != 0 && strcmp(argv[1], "acquire") != 0)) {
        fprintf(stderr, "usage: relay start|acquire CHAR_PATH HOST PORT TOPIC\n");
        return 2;
    }
    int acquire = strcmp(argv[1], "acquire") == 0;
    const char *path = argv[2];
    topic = argv[5];

    struct sigaction action = {0};
    action.sa_handler = on_signal;  /* no SA_RESTART: poll returns EINTR */
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    mosquitto_lib_init();
    broker = mosquitto_new("c-relay", true, NULL);
    if (!broker) fail("mosquitto_new", strerror(errno));
    int rc = mosquitto_connect(broker, argv[3], atoi(argv[4]), 60);
    if (rc != MOSQ_ERR_SUCCESS) fail("connect to the broker", mosquitto_strerror(rc));

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error);
    if (!bus) fail("connect to the bus", error.message);
    dbus_connection_set_exit_on_disconnect(bus, FALSE);

    int notify_fd = -1;
    int mtu = 512;
    if (acquire) {
        DBusMessage *reply = call_characteristic(bus, path, "AcquireNotify", 1);
        dbus_uint16_t acquired_mtu = 0;
        if (!dbus_message_get_args(reply, &error, DBUS_TYPE_UNIX_FD, &notify_fd, DBUS_TYPE_UINT16, &acquired_mtu,
                DBUS_TYPE_INVALID))
            fail("AcquireNotify reply", error.message);
        if (acquired_mtu > 0) mtu = acquired_mtu;
        dbus_message_unref(reply);
    } else {
        char rule[1024];
        snprintf(rule, sizeof rule,
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='%s',"
            "arg0='org.bluez.GattCharacteristic1'", path);
        dbus_bus_add_match(bus, rule, &error);
        if (dbus_error_is_set(&error)) fail("AddMatch", error.message);
        dbus_message_unref(call_characteristic(bus, path, "StartNotify", 0));
    }
    printf("relay: ready\n");
    fflush(stdout);

    int bus_fd = -1;
    if (!dbus_connection_get_unix_fd(bus, &bus_fd)) fail("the bus has no socket", NULL);
    unsigned char *value = malloc((size_t)mtu);
    if (!value) fail("out of memory", NULL);
    while (!stopping) {
        /* libdbus may have read more than one message already: drain its queue before sleeping. */
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(bus)) != NULL) {
            relay_properties_changed(message);
            dbus_message_unref(message);
        }
        struct pollfd fds[2] = {
            {.fd = acquire ? notify_fd : bus_fd, .events = POLLIN},
            {.fd = mosquitto_socket(broker), .events = POLLIN | (mosquitto_want_write(broker) ? POLLOUT : 0)},
        };
        int ready = poll(fds, 2, 1000);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("poll", strerror(errno));
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (acquire) {
                ssize_t length = read(notify_fd, value, (size_t)mtu);
                if (length <= 0) fail("the notification socket closed", length < 0 ? strerror(errno) : "end of file");
                publish(value, (int)length);
            } else if (!dbus_connection_read_write(bus, 0) || !dbus_connection_get_is_connected(bus)) {
                fail("the bus connection closed", NULL);
            }
        }
        if (fds[1].revents & POLLIN) {
            rc = mosquitto_loop_read(broker, 1);
            if (rc != MOSQ_ERR_SUCCESS) fail("broker read", mosquitto_strerror(rc));
        }
        if (fds[1].revents & POLLOUT) {
            rc = mosquitto_loop_write(broker, 1);
            if (rc != MOSQ_ERR_SUCCESS) fail("broker write", mosquitto_strerror(rc));
        }
        mosquitto_loop_misc(broker);  /* keepalive */
    }
    fprintf(stderr, "relay: published %lu values\n", published);
    free(value);
    mosquitto_disconnect(broker);
    mosquitto_destroy(broker);
    mosquitto_lib_cleanup();
    dbus_connection_close(bus);
    dbus_connection_unref(bus);
    return 0;
}
