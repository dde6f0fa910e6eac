#ifndef HERALD_CLIBPQ_SHIM_H
#define HERALD_CLIBPQ_SHIM_H
// libpq's public header; pkg-config (libpq) supplies the include path.
#include <libpq-fe.h>
#endif
