// Linux calls Swift's Glibc module does not bring in (epoll, eventfd, recvmmsg); only Polling imports this.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>

// glibc declares it only under _GNU_SOURCE, which the Glibc module is not built with.
extern int pthread_setname_np(pthread_t thread, const char *name);

// recvmmsg and struct mmsghdr, also declared by glibc only under _GNU_SOURCE: a layout of our own and the system
// call made directly, so that no second prototype of glibc's function is ever in sight.
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

struct gattway_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

static inline int gattway_recvmmsg(int fd, struct gattway_mmsghdr *messages, unsigned int count, int flags) {
    return (int)syscall(SYS_recvmmsg, fd, messages, count, flags, (void *)0);
}
