#ifndef HERALD_CCURL_SHIM_H
#define HERALD_CCURL_SHIM_H
// libcurl's option setters are variadic, which Swift cannot call. These typed
// wrappers give each argument kind its own non-variadic entry point.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

typedef size_t (*herald_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode herald_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode herald_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode herald_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode herald_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode herald_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode herald_easy_setopt_data_callback(CURL *handle, CURLoption option, herald_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// Connect-time address checks (webhooks to URLs that tenants choose): libcurl calls
// herald_guarded_open for every socket it opens, with the address it resolved; `check`
// answers non-zero to refuse it (the connection then fails with CURLE_COULDNT_CONNECT).
typedef int (*herald_address_check)(void *context, const char *address);
struct herald_open_guard {
    herald_address_check check;
    void *context;
};
static inline curl_socket_t herald_guarded_open(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    struct herald_open_guard *guard = (struct herald_open_guard *)clientp;
    char text[INET6_ADDRSTRLEN + 1] = {0};
    if (address->family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&address->addr)->sin_addr, text, sizeof text);
    } else if (address->family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&address->addr)->sin6_addr, text, sizeof text);
    } else {
        return CURL_SOCKET_BAD;
    }
    if (guard == NULL || guard->check(guard->context, text) != 0) return CURL_SOCKET_BAD;
    return socket(address->family, address->socktype, address->protocol);
}
static inline CURLcode herald_easy_guard_connections(CURL *handle, struct herald_open_guard *guard) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, herald_guarded_open);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, (void *)guard);
}

static inline CURLcode herald_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode herald_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode herald_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode herald_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode herald_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode herald_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode herald_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

#endif
