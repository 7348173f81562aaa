/*
 * The floor of a wake-up on this host: the CPU time a process spends to sleep and be woken once, by data on a
 * socket (what wakes a receiver that reads each advertisement as it comes) and by a timer (what ends a pause of a
 * receiver that reads in batches: epoll_wait's timeout). `gattway-bench adverts` runs it in the same run as the
 * receivers it measures, so that their CPU per advertisement can be read against it.
 *
 *   wakes INTERVAL_MS COUNT     prints "socket <µs>" and "timer <µs>", the waking process's CPU per wake-up
 *
 * The writer of the socket is a child process, so that its own CPU is not counted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

static void fail(const char *what) {
    fprintf(stderr, "wakes: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: wakes INTERVAL_MS COUNT\n");
        return 2;
    }
    long interval = atol(argv[1]);
    int count = atoi(argv[2]);
    if (interval < 1 || interval > 1000 || count < 1 || count > 100000) {
        fprintf(stderr, "wakes: INTERVAL_MS from 1 to 1000, COUNT from 1 to 100000\n");
        return 2;
    }
    /* A bound on the whole run (COUNT wake-ups of each kind take COUNT × INTERVAL_MS twice): a writer that stopped
     * writing must not leave the benchmark waiting. The waits themselves carry no timeout, which would change what
     * they measure. */
    alarm((unsigned)(2 * count * interval / 1000 + 30));
    struct timespec pause = {interval / 1000, (interval % 1000) * 1000000L};
    struct epoll_event events[4];

    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) fail("socketpair");
    pid_t writer = fork();
    if (writer < 0) fail("fork");
    if (writer == 0) {
        /* A report's worth of bytes every interval, until the reader closes its end (a fork has no alarm pending). */
        char report[300] = {0};
        close(pair[0]);
        for (;;) {
            if (write(pair[1], report, sizeof report) != (ssize_t)sizeof report) _exit(0);
            nanosleep(&pause, NULL);
        }
    }
    close(pair[1]);
    int socket_poll = epoll_create1(0);
    if (socket_poll < 0) fail("epoll_create1");
    struct epoll_event readable = {.events = EPOLLIN, .data.fd = pair[0]};
    if (epoll_ctl(socket_poll, EPOLL_CTL_ADD, pair[0], &readable) != 0) fail("epoll_ctl");
    char buffer[65536];
    /* The first wake-ups find the code cold after the fork: left out. */
    for (int i = 0; i < 3; i++) {
        if (epoll_wait(socket_poll, events, 4, -1) < 0 && errno != EINTR) fail("epoll_wait");
        if (recv(pair[0], buffer, sizeof buffer, 0) <= 0) fail("recv");
    }
    double start = cpu_microseconds();
    for (int i = 0; i < count; i++) {
        if (epoll_wait(socket_poll, events, 4, -1) < 0 && errno != EINTR) fail("epoll_wait");
        if (recv(pair[0], buffer, sizeof buffer, 0) <= 0) fail("recv");
    }
    double by_socket = (cpu_microseconds() - start) / count;
    close(pair[0]);
    kill(writer, SIGTERM);
    waitpid(writer, NULL, 0);

    int timer_poll = epoll_create1(0);
    if (timer_poll < 0) fail("epoll_create1");
    for (int i = 0; i < 3; i++) epoll_wait(timer_poll, events, 4, (int)interval);
    start = cpu_microseconds();
    for (int i = 0; i < count; i++) {
        if (epoll_wait(timer_poll, events, 4, (int)interval) < 0 && errno != EINTR) fail("epoll_wait");
    }
    double by_timer = (cpu_microseconds() - start) / count;
    printf("socket %.2f\ntimer %.2f\n", by_socket, by_timer);
    return 0;
}
