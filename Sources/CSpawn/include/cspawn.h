#ifndef HERALD_CSPAWN_H
#define HERALD_CSPAWN_H
#include <sys/types.h>

/// Starts `path` with stdin from /dev/null, stdout and stderr on `output_fd`, no other
/// inherited descriptor, in `directory`. Returns 0 and sets `*pid`, or an errno value.
int herald_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                 int output_fd, const char *directory);

/// As `herald_spawn`, with stderr on `error_fd`, in the caller's directory.
int herald_spawn_split(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                       int output_fd, int error_fd);

#endif
