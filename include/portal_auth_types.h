/*
 * portal_auth_types.h: the types of libportalauth's C ABI, written by hand.
 * Include <portal_auth.h>, which includes this file and declares the functions.
 *
 * libportalauth.so links only libc, libm, libstdc++ and libgcc_s. It opens the system
 * libraries its features use the first time each is needed: libcurl at the first request,
 * libsecret (with GLib) at the first keyring access, libqrencode and libpng at the first
 * QR code. Where one is not installed, only the calls that need it fail, with a message
 * naming it: PORTAL_AUTH_E_NETWORK, PORTAL_AUTH_E_SESSION_STORAGE_FAILURE and
 * PORTAL_AUTH_E_INTERNAL respectively.
 *
 * Secrets in memory. Every copy of a secret that the library makes for the host, and every
 * one the host hands it to free, is wiped (explicit_bzero, which no optimiser removes)
 * before it is freed: the token of portal_auth_session_copy_token, the TOTP secret and the
 * QR codes (portal_auth_string_free, portal_auth_bytes_free), a result's userJwt and TOTP
 * link (when the result goes, after its callback), a host storage's value (once read).
 * What the library cannot wipe:
 *   - the copies the host makes, a binding's included: a Python str or a Rust String made
 *     from a token or a link (their runtimes copy and free them as they please);
 *   - the strings the host passes in (a userJwt to verify, a redirect URL with its grant)
 *     and a host storage's copy of the value it is given to set;
 *   - the library's own working copies: Swift strings inside the core (the session's token
 *     while the session lives), libcurl's and OpenSSL's buffers of a request or response.
 * Any of these can reach swap or a core dump; README.md's threat model says what to do.
 */
#ifndef PORTAL_AUTH_TYPES_H
#define PORTAL_AUTH_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The version these headers describe; portal_auth_version() reports the library's. */
#define PORTAL_AUTH_VERSION_MAJOR 0
#define PORTAL_AUTH_VERSION_MINOR 1
#define PORTAL_AUTH_VERSION_PATCH 0
#define PORTAL_AUTH_VERSION_STRING "0.1.0"
/* One number, comparable: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PORTAL_AUTH_VERSION_NUMBER \
    (PORTAL_AUTH_VERSION_MAJOR * 10000 + PORTAL_AUTH_VERSION_MINOR * 100 + PORTAL_AUTH_VERSION_PATCH)

/*
 * Handles. Each is opaque, made by the library and released with its own function.
 *   portal_auth        a client of one auth environment          portal_auth_free
 *   portal_auth_error  what went wrong, with the case's fields   portal_auth_error_free
 */
/* Complete only so that Swift can name them: never look inside. */
typedef struct portal_auth { char opaque_; } portal_auth;
typedef struct portal_auth_error { char opaque_; } portal_auth_error;
/* One asynchronous call: cancel it with portal_auth_call_cancel, free it with portal_auth_call_free. */
typedef struct portal_auth_call { char opaque_; } portal_auth_call;
/* What get_methods found. Borrowed: valid only during the callback. */
typedef struct portal_auth_methods { char opaque_; } portal_auth_methods;
/* Where a redirect or a TOTP code left the user. Borrowed: valid only during the callback. */
typedef struct portal_auth_result { char opaque_; } portal_auth_result;
/* A signed-in user. Reference counted: a callback lends one; portal_auth_session_retain keeps
   it beyond the callback, portal_auth_session_release lets it go. One session is always one
   handle: a redirect replayed from the client's memory hands back the same pointer while
   the host holds it. */
typedef struct portal_auth_session { char opaque_; } portal_auth_session;

/* The kinds of portal_auth_result. */
enum {
    PORTAL_AUTH_RESULT_AUTHENTICATED = 1,  /* a session, already persisted */
    PORTAL_AUTH_RESULT_TOTP_REQUIRED = 2   /* call portal_auth_verify_totp with the user's code */
};

/*
 * Completion callbacks. Each asynchronous function that returns PORTAL_AUTH_OK calls its
 * callback exactly once, never inside the starting call, on the library's I/O thread (or
 * through the client's dispatcher); one that returns an error code never calls it. `error` is
 * NULL on success; it and every other pointer passed are borrowed, valid only during the
 * callback. The I/O thread carries every request of the process: a callback should return
 * promptly (hand long work to a thread of the host's, or install a dispatcher).
 */
typedef void (*portal_auth_done_fn)(void *user_data, const portal_auth_error *error);
typedef void (*portal_auth_methods_fn)(void *user_data, const portal_auth_methods *methods,
                                       const portal_auth_error *error);
typedef void (*portal_auth_url_fn)(void *user_data, const char *url, const portal_auth_error *error);
/* handle_redirect and verify_totp. For handle_redirect, result and error both NULL mean the
   URL is not a sign-in redirect for this client (nothing was sent). */
typedef void (*portal_auth_result_fn)(void *user_data, const portal_auth_result *result,
                                      const portal_auth_error *error);
/* restore_session: session and error both NULL mean no session is stored. */
typedef void (*portal_auth_session_fn)(void *user_data, portal_auth_session *session,
                                       const portal_auth_error *error);

/*
 * A dispatcher runs completions where the host wants them (a GTK main loop, an asyncio
 * loop): the library calls dispatch(dispatcher_data, run, job) instead of running the
 * completion itself, and the host must call run(job) exactly once, from any thread.
 */
typedef void (*portal_auth_job_fn)(void *job);
typedef void (*portal_auth_dispatch_fn)(void *dispatcher_data, portal_auth_job_fn run, void *job);

/*
 * Browser sign-in (portal_auth_sign_in_with_google/_apple) opens the authorize URL through an
 * opener: by default `$BROWSER`, else `xdg-open`; a host installs its own with
 * portal_auth_set_browser_opener. It is called once per sign-in, after the loopback listener
 * is already answering, on a thread the library starts for it (never the I/O thread that
 * carries the other calls): it may block, and may call any function of the library and wait
 * for the callback. `url` is borrowed for the call, and is always an absolute https URL
 * (http only when the API host is loopback); `ephemeral` is the client's prefers-ephemeral
 * flag (1: open a private window if you can). Return 0 once the browser is launched (loading
 * the page before returning works too); any other value ends the sign-in with
 * PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE. `user_data` must stay valid while the opener is
 * installed and until every sign-in started with it has called back.
 */
typedef int (*portal_auth_opener_fn)(void *user_data, const char *url, int32_t ephemeral);

/* Error codes: stable numbers, never reused. docs/protocol.md §10 and the transport's own. */
typedef int32_t portal_auth_code;
enum {
    PORTAL_AUTH_OK = 0,
    PORTAL_AUTH_E_INVALID_ARGUMENT = 1,               /* field: name */
    PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED = 2,
    PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE = 3,        /* field: method */
    PORTAL_AUTH_E_AUTHENTICATION_FAILED = 4,          /* field: detail (the redirect's error) */
    PORTAL_AUTH_E_MALFORMED_RESPONSE = 5,             /* fields: path, missing (may be NULL) */
    PORTAL_AUTH_E_INVALID_GRANT_RESPONSE = 6,
    PORTAL_AUTH_E_INVALID_USER_JWT = 7,               /* field: detail */
    PORTAL_AUTH_E_SESSION_STORAGE_FAILURE = 8,        /* the message says what to do */
    PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE = 9,/* field: detail (the server's text) */
    PORTAL_AUTH_E_RATE_LIMITED = 10,
    PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE = 11,
    PORTAL_AUTH_E_UNAUTHORIZED = 20,                  /* HTTP 401 */
    PORTAL_AUTH_E_HTTP_STATUS = 21,                   /* field: http_status */
    PORTAL_AUTH_E_NETWORK = 22,                       /* no response: refused, reset, timeout, too large; no libcurl */
    PORTAL_AUTH_E_SESSION_INVALIDATED = 30,
    PORTAL_AUTH_E_CANCELLED = 31,
    PORTAL_AUTH_E_SIGN_IN_CLOSED = 40,                /* POPUP_CLOSED */
    PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE = 41,           /* POPUP_UNAVAILABLE */
    PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS = 42,           /* SIGN_IN_ALREADY_IN_PROGRESS */
    PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE = 43,   /* CALLBACK_INCOMPLETE */
    PORTAL_AUTH_E_INTERNAL = 99                       /* also: a QR code without libqrencode or libpng */
};

/* Where a client keeps the session of its environment. */
enum {
    PORTAL_AUTH_STORAGE_KEYRING = 0,   /* the desktop keyring (Secret Service), the default */
    PORTAL_AUTH_STORAGE_MEMORY = 1,    /* this process only, forgotten at exit */
    PORTAL_AUTH_STORAGE_HOST = 2       /* the host's own, through portal_auth_storage_callbacks */
};

/*
 * Host-supplied storage: one opaque UTF-8 value per environment. The library encodes and
 * decodes the value, serialises the calls per environment, and applies the fault taxonomy:
 * a callback returning non-zero is a transient failure (nothing is deleted for it); a value
 * that does not decode is deleted. Callbacks run on a library thread, one at a time per
 * environment. Each returns 0 on success.
 *   get:    store in *out_value a malloc'd copy of the value (the library wipes it and
 *           frees it with free()), or NULL when nothing is stored
 *   set:    store `value`, replacing any
 *   remove: delete the value; deleting nothing is a success
 */
typedef struct portal_auth_storage_callbacks {
    size_t size;   /* sizeof(portal_auth_storage_callbacks) */
    int (*get)(void *user_data, const char *environment_id, char **out_value);
    int (*set)(void *user_data, const char *environment_id, const char *value);
    int (*remove)(void *user_data, const char *environment_id);
    void *user_data;
    /* Optional (may be NULL): tells the host it may free what user_data points to. Once
       portal_auth_new has read a struct of the right size, release is called exactly once,
       from any thread: before portal_auth_new returns when it fails, else when the client
       and every session it made are gone. */
    void (*release)(void *user_data);
} portal_auth_storage_callbacks;

/* Log levels of portal_auth_set_log_handler and portal_auth_set_log_level. */
enum {
    PORTAL_AUTH_LOG_DEBUG = 0,
    PORTAL_AUTH_LOG_INFO = 1,
    PORTAL_AUTH_LOG_WARNING = 2,
    PORTAL_AUTH_LOG_ERROR = 3
};

/* Receives the library's log lines (which name the endUserId where useful and never carry a
   secret). `message` is borrowed for the call. Called from library threads. */
typedef void (*portal_auth_log_fn)(void *user_data, int32_t level, const char *message);

/* The terminal a TOTP QR code is drawn for (portal_auth_totp_qr_terminal): its half blocks
   take the text's colour, and the background shows through the spaces. */
enum {
    PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK = 0,   /* light text on a dark background, as most terminals */
    PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT = 1    /* dark text on a light background */
};

/* A yes/no option that may also be left unset. */
enum {
    PORTAL_AUTH_UNSET = -1,
    PORTAL_AUTH_FALSE = 0,
    PORTAL_AUTH_TRUE = 1
};

/*
 * A client's configuration: the initializer parameters of PortalAuth, plus timeouts and the
 * storage. Fill it with portal_auth_options_init(&options, sizeof options) first, which sets
 * `size`: fields added in later versions go at the end, and the library reads and writes only
 * the `size` bytes a caller knows.
 * Strings are UTF-8 and borrowed: the library copies what it keeps before returning.
 */
typedef struct portal_auth_options {
    size_t size;                         /* sizeof(portal_auth_options) of the caller */
    const char *auth_environment_id;     /* required */
    const char *redirect_url;            /* required */
    const char *api_host;                /* NULL: "api.portalhq.io" */
    const char *magic_link_from_email;   /* with magic_link_template_id; both NULL: none */
    const char *magic_link_template_id;
    int32_t is_account_abstracted;       /* PORTAL_AUTH_UNSET (default), _FALSE or _TRUE */
    int32_t storage;                     /* PORTAL_AUTH_STORAGE_KEYRING (default) or _MEMORY */
    uint32_t connect_timeout_ms;         /* 0: 10 s */
    uint32_t request_timeout_ms;         /* 0: 30 s */
    /* With PORTAL_AUTH_STORAGE_HOST: the callbacks, copied at creation. */
    const portal_auth_storage_callbacks *host_storage;
    /* With PORTAL_AUTH_STORAGE_KEYRING: the application's reverse-DNS name, as its desktop
       file's ("com.example.App"). The keyring item is the application's own: an attribute
       beside the environment id, and its label. Two applications of one environment never
       share (or sign each other out of) a session; the instances of one share theirs.
       NULL: none, and the item is shared by every program of the environment that names
       none. Anything but a reverse-DNS name is INVALID_ARGUMENT, whatever the storage. */
    const char *application_id;
} portal_auth_options;

#endif
