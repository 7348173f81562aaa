// posix_spawn file actions and pipe2, which glibc declares only under _GNU_SOURCE (Swift's Glibc module is not built
// with it): closefrom since glibc 2.34, chdir since 2.29. Only the test world's process launcher imports this.
#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
extern int pipe2(int pipefd[2], int flags);
