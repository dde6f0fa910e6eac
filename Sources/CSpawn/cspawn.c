#define _GNU_SOURCE
#include "cspawn.h"
#include <fcntl.h>
#include <spawn.h>

/// Both entry points: stdin from /dev/null, stdout and stderr on their descriptors, no other
/// inherited descriptor, in `directory` (NULL: the caller's).
static int spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int output_fd, int error_fd,
                 const char *directory) {
    posix_spawn_file_actions_t actions;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    if ((result = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, output_fd, 1)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, error_fd, 2)) == 0 &&
        (result = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0 &&
        (directory == NULL || (result = posix_spawn_file_actions_addchdir_np(&actions, directory)) == 0)) {
        result = posix_spawn(pid, path, &actions, NULL, argv, envp);
    }
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int herald_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                 int output_fd, const char *directory) {
    return spawn(pid, path, argv, envp, output_fd, output_fd, directory);
}

int herald_spawn_split(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                       int output_fd, int error_fd) {
    return spawn(pid, path, argv, envp, output_fd, error_fd, NULL);
}
