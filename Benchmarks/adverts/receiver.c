/*
 * The floor `gattway-bench adverts` measures Gattway against: the least a program must do to receive BlueZ's
 * advertisement reports. It starts LE discovery with duplicates on (as Gattway is configured), then only receives
 * the signals that carry advertised data and counts them: PropertiesChanged of org.bluez.Device1 with ServiceData
 * or ManufacturerData, and InterfacesAdded of a device that has them. It decodes and publishes nothing.
 *
 *   receiver ADAPTER        e.g. receiver hci0
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (the simulator's). Prints "receiver: ready" once discovering; on SIGUSR1
 * prints "receiver: adverts N" (advertisement signals so far); exits on SIGTERM. One thread, one blocking loop.
 * Compiled by the benchmark at run time; it is not part of Gattway.
 */
#include <dbus/dbus.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stopping = 0;
static volatile sig_atomic_t report_requested = 0;
static unsigned long long adverts = 0;

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

/* Whether a{sv} at `properties` names ServiceData or ManufacturerData. */
static int carries_advertised_data(DBusMessageIter *properties) {
    DBusMessageIter entries;
    if (dbus_message_iter_get_arg_type(properties) != DBUS_TYPE_ARRAY) return 0;
    for (dbus_message_iter_recurse(properties, &entries); dbus_message_iter_get_arg_type(&entries) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&entries)) {
        DBusMessageIter entry;
        const char *name;
        dbus_message_iter_recurse(&entries, &entry);
        if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_STRING) continue;
        dbus_message_iter_get_basic(&entry, &name);
        if (strcmp(name, "ServiceData") == 0 || strcmp(name, "ManufacturerData") == 0) return 1;
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
    return carries_advertised_data(&args);
}

/* InterfacesAdded(o, {"org.bluez.Device1": {...}, ...}) */
static int is_advert_interfaces_added(DBusMessage *message) {
    DBusMessageIter args, interfaces;
    if (!dbus_message_iter_init(message, &args) || !dbus_message_iter_next(&args)) return 0;
    if (dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return 0;
    for (dbus_message_iter_recurse(&args, &interfaces); dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&interfaces)) {
        DBusMessageIter entry;
        const char *interface;
        dbus_message_iter_recurse(&interfaces, &entry);
        dbus_message_iter_get_basic(&entry, &interface);
        if (strcmp(interface, "org.bluez.Device1") != 0 || !dbus_message_iter_next(&entry)) continue;
        return carries_advertised_data(&entry);
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

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: receiver ADAPTER\n");
        return 2;
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

    while (!stopping) {
        if (!dbus_connection_read_write(bus, 100)) fail("the bus", "disconnected");
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(bus)) != NULL) {
            if (dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")) {
                adverts += (unsigned long long)is_advert_properties_changed(message);
            } else if (dbus_message_is_signal(message, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
                adverts += (unsigned long long)is_advert_interfaces_added(message);
            }
            dbus_message_unref(message);
        }
        if (report_requested) {
            report_requested = 0;
            printf("receiver: adverts %llu\n", adverts);
            fflush(stdout);
        }
    }
    dbus_connection_close(bus);
    dbus_connection_unref(bus);
    return 0;
}
