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
 *   receiver -r [-b MS] ADAPTER ...  reads the signals without libdbus: a second connection of its own (SASL
 *                                    EXTERNAL, Hello, AddMatch) read straight into one buffer and walked in place,
 *                                    with no validation, no message objects and no locks: the floor under any
 *                                    program that receives these signals through libdbus (libdbus still starts
 *                                    discovery, on the first connection, and is read no more)
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (the simulator's). Prints "receiver: ready" once discovering; on SIGUSR1
 * prints "receiver: adverts N" (advertisement signals so far); exits on SIGTERM. One thread, one blocking loop.
 * Compiled by the benchmark at run time; it is not part of Gattway.
 */
#include <dbus/dbus.h>
#include <mosquitto.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
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

/* The broker sends a QoS 0 publisher nothing but PINGRESP: its socket is served ten times a second (keepalive, a
 * partial write), not polled per advertisement. */
static void serve_broker(struct timespec *last_service) {
    if (!broker) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - last_service->tv_sec) * 1000000000L + (now.tv_nsec - last_service->tv_nsec) >= 100000000L) {
        *last_service = now;
        int rc = mosquitto_loop(broker, 0, 1);
        if (rc != MOSQ_ERR_SUCCESS) fail("the broker", mosquitto_strerror(rc));
    }
}

static void report_if_requested(void) {
    if (!report_requested) return;
    report_requested = 0;
    printf("receiver: adverts %llu\n", adverts);
    fflush(stdout);
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

/* ---- -r: the signals read without libdbus ---------------------------------------------------------------------- */

/* A bounded cursor over one whole message; offsets count from the message's start, as D-Bus alignment does. `ok`
 * turns 0 at the first read out of bounds or malformed value, and every read after it yields nothing. Only
 * little-endian messages reach it (the loop refuses others). */
struct cursor {
    const unsigned char *data;
    size_t size, at;
    int ok;
};

static void align_to(struct cursor *c, size_t n) {
    size_t aligned = (c->at + n - 1) & ~(n - 1);
    if (aligned > c->size) c->ok = 0;
    else c->at = aligned;
}

static const unsigned char *take(struct cursor *c, size_t n) {
    if (!c->ok || n > c->size - c->at) {
        c->ok = 0;
        return NULL;
    }
    const unsigned char *bytes = c->data + c->at;
    c->at += n;
    return bytes;
}

static uint32_t read_u32(struct cursor *c) {
    align_to(c, 4);
    const unsigned char *bytes = take(c, 4);
    uint32_t value = 0;
    if (bytes) memcpy(&value, bytes, 4);
    return value;
}

/* A string or object path, NUL-terminated in place. */
static const char *read_string(struct cursor *c) {
    uint32_t length = read_u32(c);
    const unsigned char *bytes = take(c, (size_t)length + 1);
    if (!bytes || bytes[length] != 0) {
        c->ok = 0;
        return NULL;
    }
    return (const char *)bytes;
}

static const char *read_signature(struct cursor *c) {
    const unsigned char *length = take(c, 1);
    if (!length) return NULL;
    const unsigned char *bytes = take(c, (size_t)*length + 1);
    if (!bytes || bytes[*length] != 0) {
        c->ok = 0;
        return NULL;
    }
    return (const char *)bytes;
}

/* Where the single complete type starting at `signature` ends; NULL when it is not one. */
static const char *type_end(const char *signature, int depth) {
    if (depth > 32) return NULL;
    switch (*signature) {
    case 'a': return type_end(signature + 1, depth + 1);
    case '(':
    case '{': {
        char close = *signature == '(' ? ')' : '}';
        const char *at = signature + 1;
        while (*at && *at != close) {
            at = type_end(at, depth + 1);
            if (!at) return NULL;
        }
        return *at ? at + 1 : NULL;
    }
    case 'y': case 'b': case 'n': case 'q': case 'i': case 'u': case 'x': case 't': case 'd': case 'h':
    case 's': case 'o': case 'g': case 'v':
        return signature + 1;
    default: return NULL;
    }
}

static size_t alignment_of(char type) {
    switch (type) {
    case 'n': case 'q': return 2;
    case 'b': case 'i': case 'u': case 'h': case 's': case 'o': case 'a': return 4;
    case 'x': case 't': case 'd': case '(': case '{': return 8;
    default: return 1;
    }
}

static size_t fixed_size_of(char type) {
    switch (type) {
    case 'y': return 1;
    case 'n': case 'q': return 2;
    case 'b': case 'i': case 'u': case 'h': return 4;
    case 'x': case 't': case 'd': return 8;
    default: return 0;
    }
}

/* Steps over one value of the single complete type at `signature`. */
static void skip_value(struct cursor *c, const char *signature, int depth) {
    if (!c->ok || depth > 32) {
        c->ok = 0;
        return;
    }
    switch (*signature) {
    case 's': case 'o': read_string(c); return;
    case 'g': read_signature(c); return;
    case 'v': {
        const char *inner = read_signature(c);
        const char *end = inner ? type_end(inner, depth + 1) : NULL;
        if (!end || *end) {
            c->ok = 0;
            return;
        }
        skip_value(c, inner, depth + 1);
        return;
    }
    case 'a': {
        uint32_t length = read_u32(c);
        align_to(c, alignment_of(signature[1]));
        take(c, length);
        return;
    }
    case '(':
    case '{': {
        align_to(c, 8);
        const char *member = signature + 1;
        while (c->ok && *member != ')' && *member != '}') {
            skip_value(c, member, depth + 1);
            member = type_end(member, depth + 1);
            if (!member) c->ok = 0;
        }
        return;
    }
    default: {
        size_t size = fixed_size_of(*signature);
        if (!size) {
            c->ok = 0;
            return;
        }
        align_to(c, size);
        take(c, size);
    }
    }
}

/* Whether the a{sv} at the cursor names ServiceData or ManufacturerData; publishes the first one's first entry's
 * bytes when publishing, as carries_advertised_data does. */
static int raw_carries_advertised_data(struct cursor *c, const char *path) {
    uint32_t length = read_u32(c);
    align_to(c, 8);
    size_t end = c->at + length;
    while (c->ok && c->at < end) {
        align_to(c, 8);
        const char *name = read_string(c);
        const char *signature = read_signature(c);
        const char *signature_end = signature ? type_end(signature, 0) : NULL;
        if (!name || !signature_end || *signature_end) return 0;
        if (strcmp(name, "ServiceData") == 0 || strcmp(name, "ManufacturerData") == 0) {
            if (broker) {
                const unsigned char *value = NULL;
                uint32_t value_length = 0;
                if (strcmp(signature, "a{sv}") == 0 || strcmp(signature, "a{qv}") == 0) {
                    if (read_u32(c) > 0) {
                        align_to(c, 8);
                        skip_value(c, signature + 2, 0);
                        const char *inner = read_signature(c);
                        if (inner && strcmp(inner, "ay") == 0) {
                            value_length = read_u32(c);
                            value = take(c, value_length);
                        }
                    }
                }
                publish_advert(path, value, value ? (int)value_length : 0);
            }
            return 1;
        }
        skip_value(c, signature, 0);
    }
    return 0;
}

static unsigned raw_replies = 0; /* method returns so far: the start-up's Hello and AddMatch calls */

/* One whole message: counts it (and publishes) when it is an advertisement signal. */
static void take_raw_message(const unsigned char *data, size_t size) {
    if (data[1] == 3) fail("the bus", "an error reply to the raw connection's start-up");
    if (data[1] == 2) raw_replies++;
    if (data[1] != 4) return;
    struct cursor c = {data, size, 12, 1};
    size_t fields_end = 16 + (size_t)read_u32(&c);
    const char *path = NULL, *member = NULL, *body_signature = "";
    while (c.ok && c.at < fields_end) {
        align_to(&c, 8);
        const unsigned char *code = take(&c, 1);
        const char *signature = read_signature(&c);
        if (!code || !signature) return;
        if (*code == 1 && strcmp(signature, "o") == 0) path = read_string(&c);
        else if (*code == 3 && strcmp(signature, "s") == 0) member = read_string(&c);
        else if (*code == 8 && strcmp(signature, "g") == 0) body_signature = read_signature(&c);
        else {
            const char *end = type_end(signature, 0);
            if (!end || *end) return;
            skip_value(&c, signature, 0);
        }
    }
    if (!c.ok || !member || !path) return;
    c.at = fields_end;
    align_to(&c, 8);
    if (strcmp(member, "PropertiesChanged") == 0 && strcmp(body_signature, "sa{sv}as") == 0) {
        const char *interface = read_string(&c);
        if (interface && strcmp(interface, "org.bluez.Device1") == 0)
            adverts += (unsigned long long)raw_carries_advertised_data(&c, path);
    } else if (strcmp(member, "InterfacesAdded") == 0 && strcmp(body_signature, "oa{sa{sv}}") == 0) {
        const char *device = read_string(&c);
        size_t length = read_u32(&c);
        align_to(&c, 8);
        size_t end = c.at + length;
        while (device && c.ok && c.at < end) {
            align_to(&c, 8);
            const char *interface = read_string(&c);
            if (interface && strcmp(interface, "org.bluez.Device1") == 0) {
                adverts += (unsigned long long)raw_carries_advertised_data(&c, device);
                return;
            }
            skip_value(&c, "a{sv}", 0);
        }
    }
}

static unsigned char raw_buffer[1 << 20];
static size_t raw_filled = 0;

/* Reads what the socket holds (all of it when `drain`, else one read) and takes every whole message in it. */
static void read_raw(int fd, int drain) {
    for (;;) {
        if (raw_filled == sizeof raw_buffer) fail("the bus", "a message larger than the raw buffer");
        ssize_t got = read(fd, raw_buffer + raw_filled, sizeof raw_buffer - raw_filled);
        if (got == 0) fail("the bus", "disconnected");
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            fail("reading the bus", strerror(errno));
        }
        raw_filled += (size_t)got;
        size_t at = 0;
        while (raw_filled - at >= 16) {
            const unsigned char *message = raw_buffer + at;
            if (message[0] != 'l' || message[3] != 1) fail("the bus", "a message that is not little-endian D-Bus 1");
            uint32_t body, fields;
            memcpy(&body, message + 4, 4);
            memcpy(&fields, message + 12, 4);
            size_t total = ((16 + (size_t)fields + 7) & ~(size_t)7) + body;
            if (total > sizeof raw_buffer) fail("the bus", "a message larger than the raw buffer");
            if (raw_filled - at < total) break;
            take_raw_message(message, total);
            at += total;
        }
        memmove(raw_buffer, raw_buffer + at, raw_filled - at);
        raw_filled -= at;
        if (!drain) return;
    }
}

/* Appends a method call to org.freedesktop.DBus with no argument or one string argument. */
static size_t marshal_bus_call(unsigned char *out, uint32_t serial, const char *member, const char *argument) {
    struct field {
        unsigned char code;
        char type;
        const char *value;
    } fields[] = {
        {1, 'o', "/org/freedesktop/DBus"},
        {2, 's', "org.freedesktop.DBus"},
        {3, 's', member},
        {6, 's', "org.freedesktop.DBus"},
        {8, 'g', argument ? "s" : NULL},
    };
    size_t at = 16;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!fields[i].value) continue;
        while (at % 8) out[at++] = 0;
        out[at++] = fields[i].code;
        out[at++] = 1;
        out[at++] = (unsigned char)fields[i].type;
        out[at++] = 0;
        uint32_t length = (uint32_t)strlen(fields[i].value);
        if (fields[i].type == 'g') {
            out[at++] = (unsigned char)length;
        } else {
            memcpy(out + at, &length, 4);
            at += 4;
        }
        memcpy(out + at, fields[i].value, length + 1);
        at += length + 1;
    }
    uint32_t fields_length = (uint32_t)(at - 16);
    while (at % 8) out[at++] = 0;
    uint32_t body_length = 0;
    if (argument) {
        uint32_t length = (uint32_t)strlen(argument);
        memcpy(out + at, &length, 4);
        memcpy(out + at + 4, argument, length + 1);
        body_length = length + 5;
        at += body_length;
    }
    out[0] = 'l';
    out[1] = 1;
    out[2] = 0;
    out[3] = 1;
    memcpy(out + 4, &body_length, 4);
    memcpy(out + 8, &serial, 4);
    memcpy(out + 12, &fields_length, 4);
    return at;
}

static void write_all(int fd, const void *bytes, size_t length) {
    const unsigned char *at = bytes;
    while (length > 0) {
        ssize_t put = write(fd, at, length);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) fail("writing to the bus", strerror(errno));
        at += put;
        length -= (size_t)put;
    }
}

/* Opens the raw connection: authenticates, says Hello, adds `rules`, and waits for the three replies. */
static int open_raw_connection(const char *const *rules, size_t rule_count) {
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    const char *path = address ? strstr(address, "unix:path=") : NULL;
    if (!path) fail("the raw connection", "DBUS_SYSTEM_BUS_ADDRESS is not a unix:path= address");
    path += strlen("unix:path=");
    struct sockaddr_un socket_address = {.sun_family = AF_UNIX};
    size_t path_length = strcspn(path, ",;");
    if (path_length >= sizeof socket_address.sun_path) fail("the raw connection", "the socket path is too long");
    memcpy(socket_address.sun_path, path, path_length);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&socket_address, sizeof socket_address) != 0)
        fail("connecting the raw connection", strerror(errno));

    char line[256];
    char uid[16];
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    int used = snprintf(line, sizeof line, "%cAUTH EXTERNAL ", 0);
    for (const char *digit = uid; *digit; digit++) used += snprintf(line + used, sizeof line - used, "%02x", *digit);
    used += snprintf(line + used, sizeof line - used, "\r\n");
    write_all(fd, line, (size_t)used);
    size_t got = 0;
    while (got < 2 || line[got - 1] != '\n') {
        ssize_t n = read(fd, line + got, sizeof line - 1 - got);
        if (n <= 0) fail("authenticating the raw connection", n == 0 ? "closed" : strerror(errno));
        got += (size_t)n;
        if (got == sizeof line - 1) break;
    }
    if (strncmp(line, "OK ", 3) != 0) fail("authenticating the raw connection", "refused");
    write_all(fd, "BEGIN\r\n", 7);

    static unsigned char call[1024];
    uint32_t serial = 1;
    write_all(fd, call, marshal_bus_call(call, serial++, "Hello", NULL));
    for (size_t i = 0; i < rule_count; i++) write_all(fd, call, marshal_bus_call(call, serial++, "AddMatch", rules[i]));
    while (raw_replies < 1 + rule_count) read_raw(fd, 0);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) fail("the raw connection", strerror(errno));
    return fd;
}

/* The loop of -r: waits for the raw connection (100 ms at most, so that a report or a stop is not held up), reads
 * what it holds, and with batches drains it and sleeps. */
static void receive_raw(int fd, long batch_ms) {
    struct timespec last_service = {0};
    while (!stopping) {
        struct pollfd readable = {.fd = fd, .events = POLLIN};
        int ready = poll(&readable, 1, 100);
        if (ready < 0 && errno != EINTR) fail("poll", strerror(errno));
        serve_broker(&last_service);
        if (ready > 0) {
            read_raw(fd, batch_ms > 0);
            if (batch_ms > 0) usleep((useconds_t)(batch_ms * 1000));
        }
        report_if_requested();
    }
}

int main(int argc, char **argv) {
    long batch_ms = 0;
    int raw = 0;
    if (argc > 1 && strcmp(argv[1], "-r") == 0) {
        raw = 1;
        argc -= 1;
        argv += 1;
    }
    if (argc > 2 && strcmp(argv[1], "-b") == 0) {
        batch_ms = strtol(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    }
    if ((argc != 2 && argc != 4) || batch_ms < 0 || batch_ms > 1000) {
        fprintf(stderr, "usage: receiver [-r] [-b MS] ADAPTER [HOST PORT] (PORT 0: HOST is a unix socket's path)\n");
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
    size_t rule_count = sizeof rules / sizeof rules[0];
    int raw_fd = -1;
    if (raw) {
        raw_fd = open_raw_connection(rules, rule_count);
    } else {
        for (size_t i = 0; i < rule_count; i++) {
            dbus_bus_add_match(bus, rules[i], &error);
            if (dbus_error_is_set(&error)) fail("AddMatch", error.message);
        }
    }
    start_discovery(bus, adapter_path);
    printf("receiver: ready\n");
    fflush(stdout);
    if (raw) {
        receive_raw(raw_fd, batch_ms);
        close(raw_fd);
    }

    struct timespec last_service = {0};
    while (!stopping && !raw) {
        if (!dbus_connection_read_write(bus, 100)) fail("the bus", "disconnected");
        serve_broker(&last_service);
        take_messages(bus);
        if (batch_ms > 0) {
            /* libdbus reads about 2 KiB a turn: read on until a turn brings nothing, then sleep. */
            do {
                dbus_connection_read_write(bus, 0);
            } while (take_messages(bus) > 0);
            usleep((useconds_t)(batch_ms * 1000));
        }
        report_if_requested();
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
