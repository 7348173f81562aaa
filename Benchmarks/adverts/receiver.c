/*
 * The floor `gattway-bench adverts` measures Gattway against: the least a program must do to receive BlueZ's
 * advertisement reports. It starts LE discovery with duplicates on (as Gattway is configured), then only receives
 * the signals that carry advertised data and counts them: PropertiesChanged of org.bluez.Device1 with ServiceData
 * or ManufacturerData, and InterfacesAdded of a device that has them. It decodes nothing.
 *
 *   receiver ADAPTER                 receives and counts; publishes nothing (the floor)
 *   receiver ADAPTER HOST PORT       also publishes, as Gattway does per advertisement here, two messages at QoS 0,
 *                                    retained: the advertised bytes unchanged, to c-receiver/DEVICE/state and
 *                                    c-receiver/DEVICE/advert (the floor of receiving and publishing, no JSON)
 *   receiver -b MS ADAPTER ...       reads in batches, as Gattway does while only reports arrive
 *                                    (bluetooth.advert_batch): once the socket is drained it sleeps MS ms, so that
 *                                    what arrives meanwhile is read in one wake-up
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (the simulator's). Prints "receiver: ready" once discovering; on SIGUSR1
 * prints "receiver: adverts N" (advertisement signals so far); exits on SIGTERM. One thread, one blocking loop.
 * Compiled by the benchmark at run time; it is not part of Gattway.
 */
#include <dbus/dbus.h>
#include <mosquitto.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;
static volatile sig_atomic_t report_requested = 0;
static unsigned long long adverts = 0;
static struct mosquitto *broker = NULL; /* set: publish each advertisement */

static void on_stop(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

static void on_report(int signal_number) {
    (void)signal_number;
    report_requested = 1;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "receiver: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

/* Publishes `value` of the device at object path `path` to c-receiver/DEVICE/state and c-receiver/DEVICE/advert. */
static void publish_advert(const char *path, const unsigned char *value, int length) {
    const char *device = strrchr(path, '/');
    char topic[160];
    static const char *const leaves[] = {"state", "advert"};
    for (int i = 0; i < 2; i++) {
        snprintf(topic, sizeof topic, "c-receiver/%s/%s", device ? device + 1 : path, leaves[i]);
        int rc = mosquitto_publish(broker, NULL, topic, length, value, 0, true);
        if (rc != MOSQ_ERR_SUCCESS) fail("publish", mosquitto_strerror(rc));
    }
}

/* The bytes of the first entry of a{sv} or a{qv} in the variant at `variant` (ServiceData, ManufacturerData). */
static void first_entry_bytes(DBusMessageIter *variant, const unsigned char **value, int *length) {
    DBusMessageIter inner, entries, entry, bytes, array;
    *value = NULL;
    *length = 0;
    dbus_message_iter_recurse(variant, &inner);
    if (dbus_message_iter_get_arg_type(&inner) != DBUS_TYPE_ARRAY) return;
    dbus_message_iter_recurse(&inner, &entries);
    if (dbus_message_iter_get_arg_type(&entries) != DBUS_TYPE_DICT_ENTRY) return;
    dbus_message_iter_recurse(&entries, &entry);
    if (!dbus_message_iter_next(&entry) || dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_VARIANT) return;
    dbus_message_iter_recurse(&entry, &bytes);
    if (dbus_message_iter_get_arg_type(&bytes) != DBUS_TYPE_ARRAY ||
        dbus_message_iter_get_element_type(&bytes) != DBUS_TYPE_BYTE)
        return;
    dbus_message_iter_recurse(&bytes, &array);
    dbus_message_iter_get_fixed_array(&array, value, length);
}

/* Whether a{sv} at `properties` names ServiceData or ManufacturerData; publishes the first one's bytes when
 * publishing. */
static int carries_advertised_data(DBusMessageIter *properties, const char *path) {
    DBusMessageIter entries;
    if (dbus_message_iter_get_arg_type(properties) != DBUS_TYPE_ARRAY) return 0;
    for (dbus_message_iter_recurse(properties, &entries); dbus_message_iter_get_arg_type(&entries) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&entries)) {
        DBusMessageIter entry;
        const char *name;
        dbus_message_iter_recurse(&entries, &entry);
        if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_STRING) continue;
        dbus_message_iter_get_basic(&entry, &name);
        if (strcmp(name, "ServiceData") == 0 || strcmp(name, "ManufacturerData") == 0) {
            if (broker && dbus_message_iter_next(&entry)) {
                const unsigned char *value;
                int length;
                first_entry_bytes(&entry, &value, &length);
                publish_advert(path, value, length);
            }
            return 1;
        }
    }
    return 0;
}

/* PropertiesChanged("org.bluez.Device1", {...}, [...]) */
static int is_advert_properties_changed(DBusMessage *message) {
    DBusMessageIter args;
    const char *interface;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return 0;
    dbus_message_iter_get_basic(&args, &interface);
    if (strcmp(interface, "org.bluez.Device1") != 0 || !dbus_message_iter_next(&args)) return 0;
    return carries_advertised_data(&args, dbus_message_get_path(message));
}

/* InterfacesAdded(o, {"org.bluez.Device1": {...}, ...}) */
static int is_advert_interfaces_added(DBusMessage *message) {
    DBusMessageIter args, interfaces;
    const char *path;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_OBJECT_PATH)
        return 0;
    dbus_message_iter_get_basic(&args, &path);
    if (!dbus_message_iter_next(&args)) return 0;
    if (dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return 0;
    for (dbus_message_iter_recurse(&args, &interfaces); dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&interfaces)) {
        DBusMessageIter entry;
        const char *interface;
        dbus_message_iter_recurse(&interfaces, &entry);
        dbus_message_iter_get_basic(&entry, &interface);
        if (strcmp(interface, "org.bluez.Device1") != 0 || !dbus_message_iter_next(&entry)) continue;
        return carries_advertised_data(&entry, path);
    }
    return 0;
}

static void call_adapter(DBusConnection *bus, const char *adapter_path, DBusMessage *call) {
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, call, 30000, &error);
    dbus_message_unref(call);
    if (!reply) fail(adapter_path, error.message);
    dbus_message_unref(reply);
}

static void append_entry(DBusMessageIter *dictionary, const char *key, int type, const char *signature, const void *value) {
    DBusMessageIter entry, variant;
    dbus_message_iter_open_container(dictionary, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dictionary, &entry);
}

/* SetDiscoveryFilter({"Transport": "le", "DuplicateData": true}), then StartDiscovery. */
static void start_discovery(DBusConnection *bus, const char *adapter_path) {
    DBusMessage *call = dbus_message_new_method_call("org.bluez", adapter_path, "org.bluez.Adapter1", "SetDiscoveryFilter");
    if (!call) fail("out of memory", "SetDiscoveryFilter");
    DBusMessageIter args, filter;
    const char *transport = "le";
    dbus_bool_t duplicates = TRUE;
    dbus_message_iter_init_append(call, &args);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &filter);
    append_entry(&filter, "Transport", DBUS_TYPE_STRING, "s", &transport);
    append_entry(&filter, "DuplicateData", DBUS_TYPE_BOOLEAN, "b", &duplicates);
    dbus_message_iter_close_container(&args, &filter);
    call_adapter(bus, adapter_path, call);
    call = dbus_message_new_method_call("org.bluez", adapter_path, "org.bluez.Adapter1", "StartDiscovery");
    if (!call) fail("out of memory", "StartDiscovery");
    call_adapter(bus, adapter_path, call);
}

/* Takes every message libdbus has read; how many. */
static int take_messages(DBusConnection *bus) {
    int taken = 0;
    DBusMessage *message;
    while ((message = dbus_connection_pop_message(bus)) != NULL) {
        taken++;
        if (dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")) {
            adverts += (unsigned long long)is_advert_properties_changed(message);
        } else if (dbus_message_is_signal(message, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
            adverts += (unsigned long long)is_advert_interfaces_added(message);
        }
        dbus_message_unref(message);
    }
    return taken;
}

int main(int argc, char **argv) {
    long batch_ms = 0;
    if (argc > 2 && strcmp(argv[1], "-b") == 0) {
        batch_ms = strtol(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    }
    if ((argc != 2 && argc != 4) || batch_ms < 0 || batch_ms > 1000) {
        fprintf(stderr, "usage: receiver [-b MS] ADAPTER [HOST PORT]\n");
        return 2;
    }
    if (argc == 4) {
        mosquitto_lib_init();
        broker = mosquitto_new("c-receiver", true, NULL);
        if (!broker) fail("mosquitto_new", "out of memory");
        int rc = mosquitto_connect(broker, argv[2], atoi(argv[3]), 60);
        if (rc != MOSQ_ERR_SUCCESS) fail("connect to the broker", mosquitto_strerror(rc));
    }
    char adapter_path[64];
    snprintf(adapter_path, sizeof adapter_path, "/org/bluez/%s", argv[1]);

    /* libdbus polls again after EINTR, so a report or a stop waits for the next message or the 100 ms timeout. */
    struct sigaction action = {0};
    action.sa_handler = on_stop;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    action.sa_handler = on_report;
    sigaction(SIGUSR1, &action, NULL);
    /* The launching process may have left these blocked in the mask it passed on. */
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &handled, NULL);

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error);
    if (!bus) fail("connecting to the system bus", error.message);
    dbus_connection_set_exit_on_disconnect(bus, FALSE);
    const char *rules[] = {
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
        "arg0='org.bluez.Device1'",
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'",
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        dbus_bus_add_match(bus, rules[i], &error);
        if (dbus_error_is_set(&error)) fail("AddMatch", error.message);
    }
    start_discovery(bus, adapter_path);
    printf("receiver: ready\n");
    fflush(stdout);

    struct timespec last_service = {0};
    while (!stopping) {
        if (!dbus_connection_read_write(bus, 100)) fail("the bus", "disconnected");
        if (broker) {
            /* The broker sends a QoS 0 publisher nothing but PINGRESP: its socket is served ten times a second
             * (keepalive, a partial write), not polled per advertisement. */
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((now.tv_sec - last_service.tv_sec) * 1000000000L + (now.tv_nsec - last_service.tv_nsec) >= 100000000L) {
                last_service = now;
                int rc = mosquitto_loop(broker, 0, 1);
                if (rc != MOSQ_ERR_SUCCESS) fail("the broker", mosquitto_strerror(rc));
            }
        }
        take_messages(bus);
        if (batch_ms > 0) {
            /* libdbus reads about 2 KiB a turn: read on until a turn brings nothing, then sleep. */
            do {
                dbus_connection_read_write(bus, 0);
            } while (take_messages(bus) > 0);
            usleep((useconds_t)(batch_ms * 1000));
        }
        if (report_requested) {
            report_requested = 0;
            printf("receiver: adverts %llu\n", adverts);
            fflush(stdout);
        }
    }
    if (broker) {
        mosquitto_disconnect(broker);
        mosquitto_destroy(broker);
        mosquitto_lib_cleanup();
    }
    dbus_connection_close(bus);
    dbus_connection_unref(bus);
    return 0;
}
