/* libcurl, loaded by the HTTP engine's start (its first request). */
#include "loader.h"
#include "../CCurl/shim.h"

#include <string.h>
#include <sys/socket.h>

#define CURL_FUNCTIONS(F, V, R) \
    F(curl_global_init, CURLcode, (long flags), (flags), CURLE_FAILED_INIT) \
    F(curl_easy_init, CURL *, (void), (), NULL) \
    V(curl_easy_reset, (CURL *easy), (easy)) \
    V(curl_easy_cleanup, (CURL *easy), (easy)) \
    F(curl_easy_strerror, const char *, (CURLcode code), (code), "libcurl is not loaded") \
    R(curl_easy_setopt) \
    R(curl_easy_getinfo) \
    F(curl_multi_init, CURLM *, (void), (), NULL) \
    F(curl_multi_cleanup, CURLMcode, (CURLM *multi), (multi), CURLM_INTERNAL_ERROR) \
    R(curl_multi_setopt) \
    F(curl_multi_add_handle, CURLMcode, (CURLM *multi, CURL *easy), (multi, easy), CURLM_INTERNAL_ERROR) \
    F(curl_multi_remove_handle, CURLMcode, (CURLM *multi, CURL *easy), (multi, easy), CURLM_INTERNAL_ERROR) \
    F(curl_multi_perform, CURLMcode, (CURLM *multi, int *running), (multi, running), CURLM_INTERNAL_ERROR) \
    F(curl_multi_poll, CURLMcode, (CURLM *multi, struct curl_waitfd extra_fds[], unsigned int extra_count, int timeout_ms, int *count), \
      (multi, extra_fds, extra_count, timeout_ms, count), CURLM_INTERNAL_ERROR) \
    F(curl_multi_socket_action, CURLMcode, (CURLM *multi, curl_socket_t socket, int events, int *running), \
      (multi, socket, events, running), CURLM_INTERNAL_ERROR) \
    F(curl_multi_info_read, CURLMsg *, (CURLM *multi, int *remaining), (multi, remaining), NULL) \
    F(curl_slist_append, struct curl_slist *, (struct curl_slist *list, const char *line), (list, line), NULL) \
    V(curl_slist_free_all, (struct curl_slist *list), (list)) \
    F(curl_version_info, curl_version_info_data *, (CURLversion age), (age), NULL) \
    F(curl_getdate, time_t, (const char *text, const time_t *unused), (text, unused), -1)

PA_LIBRARY(pa_curl_load_error, "libcurl", "libcurl.so.4", CURL_FUNCTIONS)

/* The typed calls of the variadic functions, declared in CCurl's shim. */
PA_CALLING(pa_easy_setopt_long, CURLcode, (CURL *easy, CURLoption option, long value),
           curl_easy_setopt, (easy, option, value), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_setopt_string, CURLcode, (CURL *easy, CURLoption option, const char *value),
           curl_easy_setopt, (easy, option, value), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_setopt_pointer, CURLcode, (CURL *easy, CURLoption option, void *value),
           curl_easy_setopt, (easy, option, value), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_setopt_write_function, CURLcode, (CURL *easy, pa_curl_write_fn fn),
           curl_easy_setopt, (easy, CURLOPT_WRITEFUNCTION, fn), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_setopt_prereq_function, CURLcode, (CURL *easy, pa_curl_prereq_fn fn),
           curl_easy_setopt, (easy, CURLOPT_PREREQFUNCTION, fn), CURLE_FAILED_INIT)
/* CURLOPT_PROTOCOLS, the bit mask CURLOPT_PROTOCOLS_STR replaced in 7.85 (its number, as the
   headers mark the name deprecated): http and https only, for an older libcurl. */
PA_CALLING(pa_easy_setopt_http_protocols_mask, CURLcode, (CURL *easy),
           curl_easy_setopt, (easy, (CURLoption)(CURLOPTTYPE_LONG + 181), (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)),
           CURLE_FAILED_INIT)
/* Connection sockets are close-on-exec from the start (libcurl's own are not), so that no
   program the host starts, on any thread, inherits the library's connection to the API. */
static curl_socket_t pa_open_close_on_exec_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)context;
    (void)purpose;
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

PA_CALLING(pa_easy_setopt_close_on_exec_sockets, CURLcode, (CURL *easy),
           curl_easy_setopt, (easy, CURLOPT_OPENSOCKETFUNCTION, pa_open_close_on_exec_socket), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_setopt_header_function, CURLcode, (CURL *easy, pa_curl_header_fn fn),
           curl_easy_setopt, (easy, CURLOPT_HEADERFUNCTION, fn), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_getinfo_off, CURLcode, (CURL *easy, CURLINFO info, curl_off_t *value),
           curl_easy_getinfo, (easy, info, value), CURLE_FAILED_INIT)
PA_CALLING(pa_easy_getinfo_long, CURLcode, (CURL *easy, CURLINFO info, long *value),
           curl_easy_getinfo, (easy, info, value), CURLE_FAILED_INIT)
PA_CALLING(pa_multi_setopt_long, CURLMcode, (CURLM *multi, CURLMoption option, long value),
           curl_multi_setopt, (multi, option, value), CURLM_INTERNAL_ERROR)
PA_CALLING(pa_multi_setopt_pointer, CURLMcode, (CURLM *multi, CURLMoption option, void *value),
           curl_multi_setopt, (multi, option, value), CURLM_INTERNAL_ERROR)
PA_CALLING(pa_multi_setopt_socket_function, CURLMcode, (CURLM *multi, pa_curl_socket_fn fn),
           curl_multi_setopt, (multi, CURLMOPT_SOCKETFUNCTION, fn), CURLM_INTERNAL_ERROR)
PA_CALLING(pa_multi_setopt_timer_function, CURLMcode, (CURLM *multi, pa_curl_timer_fn fn),
           curl_multi_setopt, (multi, CURLMOPT_TIMERFUNCTION, fn), CURLM_INTERNAL_ERROR)

PA_HIDDEN const char *pa_curl_version(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info ? info->version : NULL;
}

PA_HIDDEN int pa_curl_uses_openssl(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info && info->ssl_version && strncmp(info->ssl_version, "OpenSSL/", 8) == 0;
}
