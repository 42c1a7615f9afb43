/* A libcurl that does not honour one option, standing in for an older libcurl (none older
 * than Debian 12's can run here). Built as libcurl.so.4 and found first through
 * LD_LIBRARY_PATH, it forwards every function the library and the tests call to the real
 * libcurl (REAL_LIBCURL, its absolute path), except that curl_easy_setopt of an option
 * whose number $PORTAL_AUTH_TEST_REFUSED_CURLOPT lists (comma-separated) answers
 * CURLE_UNKNOWN_OPTION, as a libcurl without that option does. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <string.h>
#include <stdarg.h>
#include <stdlib.h>

/* The real libcurl's function `name`. ISO C converts no object pointer (dlsym's) to a
   function pointer, so the bytes are copied into one; any function pointer then converts to
   the right type. */
typedef void (*real_function)(void);
static real_function real(const char *name) {
    static void *library;
    if (!library) library = dlopen(REAL_LIBCURL, RTLD_NOW | RTLD_LOCAL);
    void *symbol = library ? dlsym(library, name) : NULL;
    if (!symbol) abort();
    real_function function;
    memcpy(&function, &symbol, sizeof function);
    return function;
}

#define FORWARD(type, name, parameters, arguments) \
    type (name) parameters { return ((type (*) parameters)real(#name)) arguments; }
#define FORWARD_VOID(name, parameters, arguments) \
    void (name) parameters { ((void (*) parameters)real(#name)) arguments; }

FORWARD(CURLcode, curl_global_init, (long flags), (flags))
FORWARD_VOID(curl_global_cleanup, (void), ())
FORWARD(curl_version_info_data *, curl_version_info, (CURLversion age), (age))
FORWARD(CURL *, curl_easy_init, (void), ())
FORWARD_VOID(curl_easy_reset, (CURL *easy), (easy))
FORWARD_VOID(curl_easy_cleanup, (CURL *easy), (easy))
FORWARD(CURLcode, curl_easy_perform, (CURL *easy), (easy))
FORWARD(const char *, curl_easy_strerror, (CURLcode code), (code))
FORWARD(CURLM *, curl_multi_init, (void), ())
FORWARD(CURLMcode, curl_multi_cleanup, (CURLM *multi), (multi))
FORWARD(CURLMcode, curl_multi_add_handle, (CURLM *multi, CURL *easy), (multi, easy))
FORWARD(CURLMcode, curl_multi_remove_handle, (CURLM *multi, CURL *easy), (multi, easy))
FORWARD(CURLMcode, curl_multi_perform, (CURLM *multi, int *running), (multi, running))
FORWARD(CURLMcode, curl_multi_poll, (CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready),
        (multi, extra, count, timeout, ready))
FORWARD(CURLMcode, curl_multi_socket_action, (CURLM *multi, curl_socket_t socket, int events, int *running),
        (multi, socket, events, running))
FORWARD(CURLMsg *, curl_multi_info_read, (CURLM *multi, int *remaining), (multi, remaining))
FORWARD(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *line), (list, line))
FORWARD_VOID(curl_slist_free_all, (struct curl_slist *list), (list))
FORWARD(time_t, curl_getdate, (const char *text, const time_t *unused), (text, unused))

static int is_refused(CURLoption option) {
    const char *listed = getenv("PORTAL_AUTH_TEST_REFUSED_CURLOPT");
    for (char *end; listed && *listed; listed = *end == ',' ? end + 1 : end) {
        if (strtol(listed, &end, 10) == (long)option) return 1;
        if (end == listed) return 0;
    }
    return 0;
}

/* The variadic ones: the argument's type follows from the option's number range. */
CURLcode (curl_easy_setopt)(CURL *easy, CURLoption option, ...) {
    if (is_refused(option)) return CURLE_UNKNOWN_OPTION;
    CURLcode (*forward)(CURL *, CURLoption, ...) = (CURLcode (*)(CURL *, CURLoption, ...))real("curl_easy_setopt");
    va_list arguments;
    va_start(arguments, option);
    CURLcode code;
    if (option < CURLOPTTYPE_OBJECTPOINT) code = forward(easy, option, va_arg(arguments, long));
    else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB) code = forward(easy, option, va_arg(arguments, curl_off_t));
    else code = forward(easy, option, va_arg(arguments, void *));
    va_end(arguments);
    return code;
}

CURLcode (curl_easy_getinfo)(CURL *easy, CURLINFO info, ...) {
    CURLcode (*forward)(CURL *, CURLINFO, ...) = (CURLcode (*)(CURL *, CURLINFO, ...))real("curl_easy_getinfo");
    va_list arguments;
    va_start(arguments, info);
    CURLcode code = forward(easy, info, va_arg(arguments, void *));
    va_end(arguments);
    return code;
}

CURLMcode (curl_multi_setopt)(CURLM *multi, CURLMoption option, ...) {
    CURLMcode (*forward)(CURLM *, CURLMoption, ...) = (CURLMcode (*)(CURLM *, CURLMoption, ...))real("curl_multi_setopt");
    va_list arguments;
    va_start(arguments, option);
    CURLMcode code = option < CURLOPTTYPE_OBJECTPOINT ? forward(multi, option, va_arg(arguments, long))
                                                      : forward(multi, option, va_arg(arguments, void *));
    va_end(arguments);
    return code;
}
