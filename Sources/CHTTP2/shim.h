#ifndef HERALD_CHTTP2_SHIM_H
#define HERALD_CHTTP2_SHIM_H
// What Herald's own HTTP/2 client needs from C: nghttp2 for the framing, OpenSSL for TLS,
// and epoll/eventfd for its loop (which Swift's Glibc module leaves out). OpenSSL's
// setters below are macros, which Swift cannot call; each has a function here.
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

static inline long herald_ssl_set_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long herald_ssl_ctx_set_min_tls12(SSL_CTX *context) {
    return SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}
static inline long herald_ssl_ctx_set_partial_writes(SSL_CTX *context) {
    return SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}
/// Lets OpenSSL read as much as the socket holds into its buffer, instead of each record's
/// header and then its body with a read(2) each.
static inline long herald_ssl_ctx_set_read_ahead(SSL_CTX *context) {
    return SSL_CTX_set_read_ahead(context, 1);
}
/// The epoll_data of an event, as the file descriptor Herald stores there.
static inline int herald_epoll_event_fd(const struct epoll_event *event) {
    return event->data.fd;
}
static inline int herald_epoll_set(int epoll, int operation, int fd, uint32_t events) {
    struct epoll_event event = { .events = events, .data = { .fd = fd } };
    return epoll_ctl(epoll, operation, fd, &event);
}

#endif
