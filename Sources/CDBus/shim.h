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

/* The socket calls of Gattway's own reader of the bus (DBusWireRelay): unix sockets, their peer's credentials and
 * descriptors passed with SCM_RIGHTS, whose control-message macros Swift cannot import. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Connects a new blocking stream socket (close-on-exec) to the unix socket at `path`, or at `path` in the abstract
 * namespace when `abstract` is set; -1 with errno set on failure. */
static inline int gattway_unix_connect(const char *path, int abstract) {
    struct sockaddr_un address;
    size_t length = strlen(path);
    if (length + (abstract ? 1 : 0) >= sizeof(address.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path + (abstract ? 1 : 0), path, length);
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, size) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* A listening stream socket (close-on-exec) bound to `name` in the abstract namespace; -1 with errno set. */
static inline int gattway_unix_listen_abstract(const char *name) {
    struct sockaddr_un address;
    size_t length = strlen(name);
    if (length + 1 >= sizeof(address.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path + 1, name, length);
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&address, size) < 0 || listen(fd, 1) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Accepts a connection on `listener`, close-on-exec; -1 with errno set. */
static inline int gattway_unix_accept(int listener) {
    int fd = accept(listener, NULL, NULL);
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

/* The process id of a unix socket's peer, from SO_PEERCRED; -1 when it cannot be told. (A layout of our own: glibc
 * declares struct ucred only under _GNU_SOURCE.) */
static inline int gattway_unix_peer_pid(int fd) {
    struct { int pid; unsigned int uid; unsigned int gid; } credentials;
    socklen_t size = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) < 0 || size != sizeof(credentials)) return -1;
    return credentials.pid;
}

/* The bytes waiting to be read from a socket (FIONREAD); -1 with errno set. */
static inline int gattway_socket_pending(int fd) {
    int pending = 0;
    if (ioctl(fd, FIONREAD, &pending) < 0) return -1;
    return pending;
}

/* The most descriptors one call passes: the bus allows 16 per message by default, and a read may take several. */
#define GATTWAY_MAX_PASSED_FDS 64

/* Room for the most descriptors one call passes, aligned as control messages must be. */
typedef union {
    char buffer[CMSG_SPACE(sizeof(int) * GATTWAY_MAX_PASSED_FDS)];
    struct cmsghdr align;
} gattway_passed_fds;

/* A message of one buffer, to or from the socket's peer, with all of `control` for descriptors. */
static inline struct msghdr gattway_message(struct iovec *vector, gattway_passed_fds *control) {
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = vector;
    message.msg_iovlen = 1;
    message.msg_control = control->buffer;
    message.msg_controllen = sizeof(control->buffer);
    return message;
}

/* Sends up to `length` bytes without blocking, with `count` descriptors attached (count 0: none); the bytes sent,
 * or -1 with errno set. */
static inline ssize_t gattway_send_with_fds(int fd, const void *bytes, size_t length, const int *fds, int count) {
    struct iovec vector = { (void *)bytes, length };
    gattway_passed_fds control;
    struct msghdr message = gattway_message(&vector, &control);
    if (count > GATTWAY_MAX_PASSED_FDS) {
        errno = EINVAL;
        return -1;
    }
    if (count > 0) {
        memset(&control, 0, sizeof(control));
        message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * (size_t)count);
    } else {
        message.msg_control = NULL;
        message.msg_controllen = 0;
    }
    return sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Receives up to `length` bytes without blocking, and the descriptors that came with them (close-on-exec) into
 * `fds`, their number in `*count`; `*truncated` is set when the kernel dropped descriptors for want of room. The
 * bytes received (0 at the end of the stream), or -1 with errno set. */
static inline ssize_t gattway_receive_with_fds(int fd, void *bytes, size_t length, int *fds, int *count,
                                               int *truncated) {
    struct iovec vector = { bytes, length };
    gattway_passed_fds control;
    struct msghdr message = gattway_message(&vector, &control);
    *count = 0;
    *truncated = 0;
    ssize_t received = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (received < 0) return received;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int passed = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int index = 0; index < passed; index++) {
            int descriptor;
            memcpy(&descriptor, CMSG_DATA(header) + sizeof(int) * (size_t)index, sizeof(int));
            if (*count < GATTWAY_MAX_PASSED_FDS) {
                fds[(*count)++] = descriptor;
            } else {
                close(descriptor);
                *truncated = 1;
            }
        }
    }
    if (message.msg_flags & MSG_CTRUNC) *truncated = 1;
    return received;
}
