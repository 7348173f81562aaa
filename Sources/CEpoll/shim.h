// Linux's epoll and eventfd, which Swift's Glibc module does not bring in; only Polling imports this.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>

// glibc declares it only under _GNU_SOURCE, which the Glibc module is not built with.
extern int pthread_setname_np(pthread_t thread, const char *name);
