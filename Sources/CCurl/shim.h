#ifndef PORTAL_AUTH_CCURL_SHIM_H
#define PORTAL_AUTH_CCURL_SHIM_H

#include <curl/curl.h>
#include <sys/prctl.h>

/* libcurl is not linked: Sources/CLibraryLoader/curl.c defines every libcurl function the
   core calls, loading libcurl on first use. */

/* Loads libcurl (once): NULL, or why it could not be loaded. */
const char *pa_curl_load_error(void);

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift
   cannot call: one typed wrapper per argument kind (in curl.c too). */

typedef size_t (*pa_curl_write_fn)(char *data, size_t size, size_t count, void *user);
typedef int (*pa_curl_prereq_fn)(void *user, char *primary_ip, char *local_ip, int primary_port, int local_port);
typedef int (*pa_curl_socket_fn)(CURL *easy, curl_socket_t socket, int what, void *user, void *socket_data);
typedef int (*pa_curl_timer_fn)(CURLM *multi, long timeout_ms, void *user);
typedef size_t (*pa_curl_header_fn)(char *line, size_t size, size_t count, void *user);

CURLcode pa_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode pa_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode pa_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode pa_easy_setopt_write_function(CURL *easy, pa_curl_write_fn fn);
CURLcode pa_easy_setopt_prereq_function(CURL *easy, pa_curl_prereq_fn fn);
/* CURLOPT_PROTOCOLS (libcurl before 7.85): http and https only (curl.c). */
CURLcode pa_easy_setopt_http_protocols_mask(CURL *easy);
/* CURLOPT_OPENSOCKETFUNCTION: connection sockets made close-on-exec (curl.c). */
CURLcode pa_easy_setopt_close_on_exec_sockets(CURL *easy);
CURLcode pa_easy_setopt_header_function(CURL *easy, pa_curl_header_fn fn);
CURLcode pa_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode pa_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
CURLMcode pa_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode pa_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode pa_multi_setopt_socket_function(CURLM *multi, pa_curl_socket_fn fn);
CURLMcode pa_multi_setopt_timer_function(CURLM *multi, pa_curl_timer_fn fn);

/* The loaded libcurl's version ("7.88.1"), for messages; NULL if it cannot say. */
const char *pa_curl_version(void);
/* Whether the loaded libcurl verifies certificates with OpenSSL, whose verification result
   (CURLINFO_SSL_VERIFYRESULT) tells an expired certificate from an untrusted one. */
int pa_curl_uses_openssl(void);

/* CURLAUTH_ANY, a macro of an expression Swift does not import. */
static inline long pa_curlauth_any(void) {
    return (long)CURLAUTH_ANY;
}

/* CURLMsg carries its result in a union; reading it here keeps Swift away from the layout. */
static inline CURLcode pa_message_result(const CURLMsg *message) {
    return message->data.result;
}

/* Names the calling thread, so the library's threads can be told apart in ps and gdb. */
static inline void pa_set_thread_name(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

#endif
