#ifndef HERALD_CLIBPQ_SHIM_H
#define HERALD_CLIBPQ_SHIM_H
// libpq's public header; pkg-config (libpq) supplies the include path.
#include <libpq-fe.h>
// epoll, which PostgresPoller waits on the connections' sockets with (Glibc's module map
// leaves it out).
#include <sys/epoll.h>
#endif
