/**
 * @mainpage libportalauth
 *
 * libportalauth signs the users of a desktop application in with Portal's Client Auth:
 * magic links sent by email, Google and Apple sign-in (in the system browser, or through
 * authorize URLs the application opens itself), the redirect that completes each of them,
 * a TOTP second factor with its enrollment QR code, and a session that is persisted in the
 * desktop keyring and restored at the next launch. It speaks Portal's wire protocol as the
 * repository's docs/protocol.md describes it; docs/desktop.md "C ABI contract" lists the
 * properties this header keeps.
 *
 * This one header is the whole interface. It is arranged in the order a reader needs:
 * this overview, the version, options and the client, the calls (one group per sign-in
 * flow), their results, sessions, errors, storage, logging, TOTP enrollment, and last
 * ownership and freeing. Build
 * against it with `pkg-config --cflags --libs portal-auth`, or with CMake's
 * `find_package(PortalAuth)` and the target `PortalAuth::PortalAuth`.
 *
 * @section overview_loading Loading
 *
 * libportalauth.so.0 links only libc, libm, libstdc++ and libgcc_s. It opens the system
 * libraries a feature uses the first time that feature is needed: libcurl at the first
 * request, libsecret (with GLib) at the first keyring access, libqrencode and libpng at
 * the first QR code. Where one is not installed, only the calls that need it fail, with a
 * message naming it: PORTAL_AUTH_E_NETWORK, PORTAL_AUTH_E_SESSION_STORAGE_FAILURE and
 * PORTAL_AUTH_E_INTERNAL respectively. Making a client does no I/O at all.
 *
 * @section overview_threads Threads
 *
 * Every function may be called from any thread. The library runs one I/O thread for the
 * whole process, which carries every request of every client from start to result.
 *
 * @section overview_fork fork()
 *
 * A child process that fork() makes (without exec) starts with a library of its own, made
 * on first use there: a new I/O thread, a completion queue whose descriptor keeps its
 * number (portal_auth_completion_fd) but is the child's own, with nothing pending, and the
 * child's own keyring connection and storage threads. Nothing the parent had under way is
 * in the child: no call of the parent completes there, and no completion of the parent's
 * runs there; the parent goes on untouched. The client, session and call handles made
 * before the fork are the parent's: in the child, every function given one acts as if given
 * NULL (PORTAL_AUTH_E_INVALID_ARGUMENT, or nothing), and their frees free nothing, since
 * freeing a client would tear down what it shares with the parent (its listeners'
 * sockets). Make new clients in the child. Error and result handles stay readable.
 *
 * @section overview_callbacks Asynchronous calls and callbacks
 *
 * Every call that can touch the network or the keyring is asynchronous: it takes a
 * completion callback, a `void *user_data` passed back to it untouched, and an optional
 * `out_call` that receives a handle to cancel the call. A call that returns PORTAL_AUTH_OK
 * calls its callback exactly once, never inside the starting call (but possibly on another
 * thread before the starting call has returned: `*out_call` is written before the call can
 * complete, so a callback may read it there and free it); a call that returns an error code
 * never calls back and stores NULL in `*out_call`. One call is multi-shot:
 * portal_auth_listen_for_redirects calls back once per forwarded redirect, and a last time,
 * flagged as such, when it ends. Where the callback runs is the
 * client's completion model (@ref completion_models): on the I/O thread, which waits for
 * it, so it should return promptly; through a dispatcher the host installs; or on the
 * host's own thread, from a completion queue its event loop watches.
 *
 * @section overview_ownership Ownership
 *
 * Every pointer's owner is stated where it crosses; @ref memory gives the rules once, with
 * every function that frees.
 *
 * @section overview_secrets Secrets in memory
 *
 * Every copy of a secret that the library makes for the host, and every one the host hands
 * it to free, is wiped (with explicit_bzero, which no optimiser removes) before it is freed:
 * the token of portal_auth_session_copy_token, the TOTP secret and the QR codes
 * (portal_auth_string_free, portal_auth_bytes_free), a result's userJwt and TOTP link (when
 * the result goes, after its callback), a host storage's value (once read). What the
 * library cannot wipe:
 * - the copies the host makes, a binding's included: a Python str or a Rust String made
 *   from a token or a link (their runtimes copy and free them as they please);
 * - the strings the host passes in (a userJwt to verify, a redirect URL with its grant),
 *   and a host storage's own copy of the value it is given to set;
 * - the library's own working copies: Swift strings inside the library (the session's
 *   token while the session lives), and libcurl's and OpenSSL's buffers of a request or
 *   a response.
 * Any of these can reach swap or a core dump; SECURITY.md's threat model says what to do.
 *
 * @section overview_errors Errors
 *
 * Functions that can fail return a portal_auth_code: PORTAL_AUTH_OK, or a stable number
 * from @ref errors. Synchronous functions that can fail in more than one way also take an
 * optional `out_error`, which receives a portal_auth_error with the message and the case's
 * fields (free it with portal_auth_error_free); asynchronous calls pass theirs to the
 * callback. Every `out_` argument is cleared first, so a failed call leaves NULL (or 0)
 * in it. No message or field ever holds a token, a grant, a userJwt, a TOTP link or secret,
 * or a stored value.
 *
 * @section overview_timeouts Timeouts
 *
 * Every timeout is a whole number of milliseconds in an int32_t, and a value of zero or
 * less means the library's default, which each field or argument names. This is the one
 * meaning everywhere, and the bindings pass their callers' values through unchanged.
 */

/**
 * @file portal_auth.h
 * @brief libportalauth: Portal's Client Auth sign-in for Linux desktops, as a C library.
 *
 * The whole interface; the main page is its overview.
 */
#ifndef PORTAL_AUTH_H
#define PORTAL_AUTH_H

#include <stddef.h>
#include <stdint.h>

/**
 * @defgroup macros Declaration macros
 * @brief What marks the declarations of this header.
 * @{
 */

/**
 * Marks every function of this header: default visibility with GCC and Clang, whatever the
 * visibility around it. A program that includes this header where a GCC visibility pragma
 * hides its own declarations still calls the library's functions, and a library that
 * defines them (the real one, or a test's stand-in) built with -fvisibility=hidden still
 * exports them. Nothing with other compilers.
 */
#if defined(__GNUC__)
#define PORTAL_AUTH_EXTERN __attribute__((visibility("default")))
#else
#define PORTAL_AUTH_EXTERN
#endif

/**
 * Marks a declaration deprecated: GCC and Clang warn where a program uses it
 * (-Wdeprecated-declarations), quoting `message`. Nothing with other compilers, nor where
 * the program defines PORTAL_AUTH_NO_DEPRECATION_WARNINGS before it includes this header.
 * Nothing is deprecated yet; the next function to go is marked beside its
 * PORTAL_AUTH_EXTERN, and CHANGELOG.md says so:
 * @code
 * PORTAL_AUTH_EXTERN PORTAL_AUTH_DEPRECATED("use portal_auth_new_thing")
 * void portal_auth_old_thing(void);
 * @endcode
 *
 * @param message What to use instead: a string literal.
 */
#if defined(__GNUC__) && !defined(PORTAL_AUTH_NO_DEPRECATION_WARNINGS)
#define PORTAL_AUTH_DEPRECATED(message) __attribute__((deprecated(message)))
#else
#define PORTAL_AUTH_DEPRECATED(message)
#endif

/** @} */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup basics Handles, codes and flags
 * @brief The types every part of the interface uses.
 * @{
 */

/**
 * A client of one auth environment, made by portal_auth_new.
 * @see portal_auth_free
 */
typedef struct portal_auth portal_auth;

/**
 * What went wrong, with the case's fields.
 * @see portal_auth_error_free
 */
typedef struct portal_auth_error portal_auth_error;

/**
 * One asynchronous call, to cancel it.
 * @see portal_auth_call_free
 */
typedef struct portal_auth_call portal_auth_call;

/** The sign-in methods an environment has enabled; lent to a callback only. */
typedef struct portal_auth_methods portal_auth_methods;

/** Where a redirect or a TOTP code left the user; lent to a callback only. */
typedef struct portal_auth_result portal_auth_result;

/**
 * A signed-in user, reference counted: portal_auth_session_retain keeps one.
 * @see portal_auth_session_release
 */
typedef struct portal_auth_session portal_auth_session;

/**
 * A completion queue a component owns (completion model 4.), made by
 * portal_auth_completion_queue_new.
 * @see portal_auth_completion_queue_free
 */
typedef struct portal_auth_completion_queue portal_auth_completion_queue;

/**
 * The outcome of a function: PORTAL_AUTH_OK or an error code of @ref errors. A 32-bit
 * integer rather than an enum, because new codes are added over versions.
 */
typedef int32_t portal_auth_code;

/** A yes or no: what a flag is set to, or what a question answers. */
typedef enum portal_auth_bool {
    PORTAL_AUTH_FALSE = 0, /**< No. */
    PORTAL_AUTH_TRUE = 1   /**< Yes. */
} portal_auth_bool;

/**
 * A yes or no that may be left to the server: portal_auth_options.is_account_abstracted,
 * and what portal_auth_result_is_account_abstracted returns. Unset is 0, so a zeroed
 * struct leaves it to the server; yes is 1, as PORTAL_AUTH_TRUE is.
 */
typedef enum portal_auth_tristate {
    PORTAL_AUTH_UNSET = 0, /**< Not set: the server decides, or did not say. */
    PORTAL_AUTH_YES = 1,   /**< Yes. */
    PORTAL_AUTH_NO = 2     /**< No. */
} portal_auth_tristate;

/** @} */

/**
 * @defgroup version Version
 * @brief The version of these declarations, and of the library that was loaded.
 *
 * The library's file is libportalauth.so.0.MINOR.PATCH and its soname libportalauth.so.0;
 * every symbol carries the version node PORTAL_AUTH_0. A library with the same soname
 * runs a program built against any older header of that soname.
 * @{
 */

/** The major version of this header. */
#define PORTAL_AUTH_VERSION_MAJOR 0
/** The minor version of this header. */
#define PORTAL_AUTH_VERSION_MINOR 1
/** The patch version of this header. */
#define PORTAL_AUTH_VERSION_PATCH 0
/** The version of this header as text. */
#define PORTAL_AUTH_VERSION_STRING "0.1.0"
/** The version of this header as one comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PORTAL_AUTH_VERSION_NUMBER                                              \
    (PORTAL_AUTH_VERSION_MAJOR * 10000 + PORTAL_AUTH_VERSION_MINOR * 100 +      \
     PORTAL_AUTH_VERSION_PATCH)
/** The number in the soname, libportalauth.so.0: it changes only with an incompatible ABI. */
#define PORTAL_AUTH_SOVERSION 0

/**
 * The version of the library that was loaded, as text, such as "0.1.0".
 *
 * @return Static storage: never free it.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_version(void);

/**
 * The version of the library that was loaded, counted as PORTAL_AUTH_VERSION_NUMBER, to
 * compare with the macro a program was compiled against.
 *
 * @return MAJOR * 10000 + MINOR * 100 + PATCH.
 */
PORTAL_AUTH_EXTERN
int32_t portal_auth_version_number(void);

/** @} */

/**
 * @defgroup client Options and client
 * @brief A client's configuration, and the client itself.
 * @{
 */

/** Where a client keeps the session of its environment. */
typedef enum portal_auth_storage_kind {
    /** The desktop keyring (Secret Service), the default; inside a Flatpak sandbox, libsecret's
        file keyring of the application, encrypted with the key the Secret portal hands it. */
    PORTAL_AUTH_STORAGE_KEYRING = 0,
    PORTAL_AUTH_STORAGE_MEMORY = 1,  /**< This process only, forgotten at exit. */
    PORTAL_AUTH_STORAGE_HOST = 2,    /**< The host's own, through portal_auth_storage_callbacks. */
    /** Plain files (not encrypted), for machines with no keyring: chosen by the host, for
        example after PORTAL_AUTH_REASON_NO_SESSION_BUS; see portal_auth_options.file_storage_path. */
    PORTAL_AUTH_STORAGE_FILE = 3
} portal_auth_storage_kind;

/** Host-supplied storage, described in @ref storage. */
typedef struct portal_auth_storage_callbacks portal_auth_storage_callbacks;

/**
 * A client's configuration: the auth environment, the redirect URL, the API host, the
 * magic-link sender, timeouts and the storage.
 *
 * Fill it with PORTAL_AUTH_OPTIONS_INIT or portal_auth_options_init first: either sets
 * `size`, and every other field to its default, which is zero (or NULL) for each; a struct
 * zeroed with memset and then given its `size` is the same. Fields added in later versions
 * go at the end, each with zero as its default, and the library reads only the `size`
 * bytes its caller declared, so a program built against an older header keeps working.
 * Strings are UTF-8 and borrowed: portal_auth_new copies what it keeps.
 */
typedef struct portal_auth_options {
    /** sizeof(portal_auth_options) as the caller was compiled: set by the initialisers. */
    size_t size;
    /** The auth environment's id. Required: blank is PORTAL_AUTH_E_INVALID_ARGUMENT. */
    const char *auth_environment_id;
    /** The redirect URL Portal sends the user back to. Required; stored trimmed. */
    const char *redirect_url;
    /** The API host; NULL means "api.portalhq.io". */
    const char *api_host;
    /** The magic-link sender's address, with magic_link_template_id; both NULL: no magic links. */
    const char *magic_link_from_email;
    /** The magic-link email template, with magic_link_from_email. */
    const char *magic_link_template_id;
    /**
     * Whether the account is account-abstracted: PORTAL_AUTH_YES or PORTAL_AUTH_NO is sent;
     * PORTAL_AUTH_UNSET (0, the default) sends nothing. -1, which was PORTAL_AUTH_UNSET in
     * earlier headers, is read as unset too, for a program built against one.
     */
    portal_auth_tristate is_account_abstracted;
    /** Where the session is kept: PORTAL_AUTH_STORAGE_KEYRING by default. */
    portal_auth_storage_kind storage;
    /** How long a connection may take to open; zero or less: 10,000 ms. */
    int32_t connect_timeout_ms;
    /** How long a whole request may take; zero or less: 30,000 ms. */
    int32_t request_timeout_ms;
    /** With PORTAL_AUTH_STORAGE_HOST: the host's callbacks, copied by portal_auth_new. */
    const portal_auth_storage_callbacks *host_storage;
    /**
     * With PORTAL_AUTH_STORAGE_KEYRING: the application's reverse-DNS name, as its desktop
     * file's ("com.example.App"). The keyring item is the application's own: an attribute
     * beside the environment id, and its label. Two applications of one environment never
     * share (or sign each other out of) a session; the instances of one share theirs.
     * NULL: none, and the item is shared by every program of the environment that names
     * none (inside a Flatpak sandbox: $FLATPAK_ID). Anything but a reverse-DNS name is PORTAL_AUTH_E_INVALID_ARGUMENT, whatever the
     * storage.
     */
    const char *application_id;
    /**
     * With PORTAL_AUTH_STORAGE_KEYRING: whether the keyring's dialogs are shown (an unlock,
     * KeePassXC's access confirmation). Zero or less (the default): never; a call that
     * would show one fails at once with PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION (or
     * _KEYRING_LOCKED for an unlock), its prompt dismissed. Else the dialog shows and the
     * call waits for the user's answer up to this many milliseconds (then
     * _KEYRING_NEEDS_CONFIRMATION), or until it is cancelled. Whatever opens without a
     * dialog (a KDE wallet opened at login) is opened either way.
     */
    int32_t keyring_prompt_timeout_ms;
    /**
     * With PORTAL_AUTH_STORAGE_FILE: the folder of the session files, an absolute path, which
     * must be the user's alone (mode 0700, not a symlink; made so when missing). NULL:
     * $XDG_STATE_HOME/portal-auth, by default ~/.local/state/portal-auth. One file per
     * application_id and environment, mode 0600, replaced whole on each write (a crash
     * leaves the old session or the new one); the file is not encrypted.
     */
    const char *file_storage_path;
    /**
     * The completion queue the client's calls complete through (completion model 4.):
     * NULL, the default, is the I/O thread. The client keeps the queue for its own use, so
     * the caller may free its handle first (portal_auth_completion_queue_free says what
     * happens then). portal_auth_set_dispatcher and portal_auth_set_completion_queue
     * replace it for the calls started after them.
     */
    portal_auth_completion_queue *completion_queue;
    /**
     * A PEM file of the certificate authorities to trust in place of the system's bundle:
     * a company's own CA, for an API host behind its TLS. NULL (the default): the file
     * named by $CURL_CA_BUNDLE, else $SSL_CERT_FILE (with the folder of $SSL_CERT_DIR),
     * else the system's. The environment is read by portal_auth_new, as are the proxy
     * variables; docs/network.md has the order. A path that is not a readable file is
     * PORTAL_AUTH_E_INVALID_ARGUMENT.
     */
    const char *ca_file;
} portal_auth_options;

/**
 * An initialiser that sets `size` and leaves every other field zero, its default, as
 * portal_auth_options_init does: `portal_auth_options options = PORTAL_AUTH_OPTIONS_INIT;`
 */
#ifdef __cplusplus
/* C++ has designated initialisers only from C++20, and a shorter braced list draws
   -Wmissing-field-initializers: the struct value-initialised (zeroed), then its size. */
#define PORTAL_AUTH_OPTIONS_INIT                                                      \
    ([] {                                                                             \
        portal_auth_options portal_auth_initialised_ = portal_auth_options();         \
        portal_auth_initialised_.size = sizeof portal_auth_initialised_;              \
        return portal_auth_initialised_;                                              \
    }())
#else
#define PORTAL_AUTH_OPTIONS_INIT { .size = sizeof(portal_auth_options) }
#endif

/**
 * Fills options with the defaults and sets its `size`.
 *
 * The library writes no further than `size` bytes, so a caller built against an older,
 * shorter struct is safe; bytes of a newer, longer struct beyond the library's own are
 * zeroed.
 *
 * @param options The struct to fill. NULL is ignored.
 * @param size sizeof *options, as the caller was compiled. A size too small to hold the
 *             `size` field itself is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_options_init(portal_auth_options *options, size_t size);

/**
 * Creates a client from options. It checks them and does no network or keyring I/O.
 *
 * @param options The configuration; borrowed, copied before return.
 * @param out_client Receives the client (free it with portal_auth_free), or NULL on failure.
 * @param out_error May be NULL. Receives an error on failure (free it with
 *                  portal_auth_error_free), else NULL.
 * @retval PORTAL_AUTH_OK The client is in `*out_client`.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT NULL options or out_client, a size too small, a
 *         blank auth_environment_id or redirect_url, an unusable api_host, a string that is
 *         not UTF-8, only one of the two magic-link fields, a value outside its enum, or
 *         unusable host_storage; portal_auth_error_name names the field.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_new(const portal_auth_options *options, portal_auth **out_client,
                                 portal_auth_error **out_error);

/**
 * A completion the library hands to a dispatcher: the host calls it with `job`.
 *
 * @param job The job the dispatcher received.
 */
typedef void (*portal_auth_job_fn)(void *job);

/**
 * A dispatcher runs completions where the host wants them (a GTK main loop, an asyncio
 * loop): the library calls `dispatch(dispatcher_data, run, job)` instead of running the
 * completion itself, and the host must call `run(job)` exactly once, from any thread.
 */
typedef void (*portal_auth_dispatch_fn)(void *dispatcher_data, portal_auth_job_fn run, void *job);

/**
 * Lets the host free what it handed the library to keep (a dispatcher's data).
 *
 * @param data The pointer the host passed with it.
 */
typedef void (*portal_auth_destroy_fn)(void *data);

/**
 * Installs the client's dispatcher for the calls started from now on. A call completes
 * through the dispatcher it was started with; the invalidation of a session one of the
 * client's calls lent completes through the client's dispatcher of the moment, while the
 * client lives (portal_auth_session_invalidate).
 *
 * @param client The client.
 * @param dispatch The dispatcher, or NULL to run completions on the I/O thread again.
 * @param dispatcher_data Passed back to dispatch untouched.
 * @param destroy May be NULL. Called with dispatcher_data exactly once, from any thread,
 *                once no job of this dispatcher can run any more: when the client no
 *                longer uses it (another dispatcher or the completion queue replaced it,
 *                or the client was freed) and the host has run every job handed to it, which
 *                may be inside this call, portal_auth_free or a job's `run`. At once, before
 *                this returns, when dispatch is NULL or the call fails.
 * @retval PORTAL_AUTH_OK Installed.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_dispatcher(portal_auth *client, portal_auth_dispatch_fn dispatch,
                                            void *dispatcher_data, portal_auth_destroy_fn destroy);

/**
 * @anchor completion_models
 * Completion models: where a client's callbacks run. Each client has one, set for the
 * calls started from then on; a call completes the way it was started, even once its
 * client is freed.
 *
 * 1. The I/O thread, the default. Callbacks run on the library's one I/O thread, which
 *    carries every request of the process, so they must return promptly. For programs
 *    without an event loop, or that hand the outcome on to threads of their own.
 *
 * 2. A dispatcher (portal_auth_set_dispatcher): the library calls `dispatch` on its thread
 *    instead, and the host runs the job wherever it likes. For a loop that already has a
 *    thread-safe way to post work (Qt's queued calls, GLib's g_main_context_invoke), or a
 *    host that runs several loops, one per client.
 *
 * 3. The completion queue (portal_auth_set_completion_queue): the calls run on the host's
 *    thread, inside portal_auth_run_completions, as libcurl's multi socket API, c-ares and
 *    libpq do for their loops. portal_auth_completion_fd is readable (POLLIN; EPOLLIN,
 *    level-triggered) exactly while the queue has work: completions pending, or the
 *    calls' own work ready (a call to start, a response arrived, a timeout due). Each run
 *    does that work (builds and sends requests over the queue's own connections, reads
 *    responses) and runs the completions pending. For a host with one event loop that
 *    watches descriptors: callbacks run on the loop's own thread, with no lock and, for an
 *    interpreter, no thread state made for them; and a call's request and response wake no
 *    library thread (bench/RESULTS.md measures it the fastest model). What may block still
 *    runs on library threads: keyring and host-storage operations, a browser sign-in's
 *    listener, name lookups (libcurl's resolver). The first request loads libcurl, on the
 *    thread that runs the queue. portal_auth_set_queued_log_handler sends the log lines the
 *    same way. When no run has begun for a second while the queue has work, a library
 *    thread does the calls' work (never their completions) until the host runs the queue
 *    again: so a call whose request is spent, a grant exchange above all, still stores its
 *    session when the host stops running the queue (interrupted, exiting, its loop gone).
 *
 *    The queue is the process's, not the client's: a loop watches one descriptor however
 *    many clients it makes, a client freed with calls in flight needs nothing (their
 *    completions stay queued and run as usual, exactly once), and sessions, which outlive
 *    their clients, invalidate through it too. The price: every queued completion runs on
 *    whichever thread runs the queue, so a host with loops on several threads gives each
 *    its completions through a queue of its own (4.).
 *
 * 4. A component's own completion queue (portal_auth_completion_queue_new, named in the
 *    options of its clients): the contract of 3., for those clients alone. A plugin, a
 *    sync thread or a toolkit layer keeps its callbacks on its own thread, whatever else
 *    in the process runs the process's queue or another component's.
 *
 * A plain poll loop, or a blocking wait with a timeout:
 * @code
 * struct pollfd watched = { .fd = portal_auth_completion_fd(), .events = POLLIN };
 * portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE);
 * portal_auth_get_methods(client, on_methods, &state, NULL);
 * while (!state.done && poll(&watched, 1, timeout_ms) > 0)
 *     portal_auth_run_completions();
 * @endcode
 * GLib (GTK):
 * @code
 * static gboolean run_completions(gint fd, GIOCondition condition, gpointer data) {
 *     portal_auth_run_completions();
 *     return G_SOURCE_CONTINUE;
 * }
 * g_unix_fd_add(portal_auth_completion_fd(), G_IO_IN, run_completions, NULL);
 * @endcode
 * Python's asyncio, through ctypes (the portal_auth package does this itself):
 * @code
 * loop.add_reader(lib.portal_auth_completion_fd(), lib.portal_auth_run_completions)
 * @endcode
 * Rust's tokio (its readiness is edge-triggered: clearing it after the run is safe, since a
 * run takes every ready event of the descriptor, and work that comes ready meanwhile makes
 * it readable anew):
 * @code
 * let fd = AsyncFd::with_interest(unsafe { portal_auth_completion_fd() }, Interest::READABLE)?;
 * loop {
 *     let mut ready = fd.readable().await?;
 *     unsafe { portal_auth_run_completions() };
 *     ready.clear_ready();
 * }
 * @endcode
 */

/**
 * Runs the client's calls started from now on through the completion queue, or back on the
 * I/O thread. A call through the queue does its work, and runs its completion exactly once,
 * only inside portal_auth_run_completions, on the thread that calls it, so never inside the
 * starting call. Enabling it replaces the client's dispatcher; calls already started keep
 * the way they were started with.
 *
 * @param client The client.
 * @param enabled PORTAL_AUTH_TRUE for the queue; PORTAL_AUTH_FALSE for the I/O thread
 *                (no dispatcher then applies).
 * @retval PORTAL_AUTH_OK Set.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client, or another value of enabled.
 * @retval PORTAL_AUTH_E_INTERNAL The queue has no descriptor (the process is out of them);
 *         the client is left as it was.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_completion_queue(portal_auth *client, portal_auth_bool enabled);

/**
 * The completion queue's descriptor, for the host's event loop to watch: readable exactly
 * while the queue has work for portal_auth_run_completions, that is completions queued and
 * not yet taken, or its calls' work ready (an epoll descriptor over the queue's eventfd,
 * the calls' connections and their timer). The work that a run queues for itself while it
 * runs (a call's next step, its completion), and takes before it returns, does not make it
 * readable; what a run leaves does, by the time it returns. A log handler that a run calls
 * (portal_auth_set_log_handler) sees the descriptor as from outside the run. One for the
 * process, made by the first call of this function or of portal_auth_set_completion_queue,
 * and open until the process exits.
 *
 * @return The descriptor: poll it, never read, write or close it. -1 when none could be
 *         made.
 */
PORTAL_AUTH_EXTERN
int32_t portal_auth_completion_fd(void);

/**
 * Does, on the calling thread, the queue's work that is ready: the calls' own (their
 * requests, responses and results, a few rounds of it, so that a burst cannot hold the
 * host's loop), and then every completion pending, one after another. It does not wait for
 * I/O. Work and completions that arrive meanwhile (a call started by a completion) wait for
 * the next call, and the descriptor is readable again. Any thread may
 * call it, also from inside a completion; each completion runs once, on one of them.
 *
 * @return How many completions it ran (with portal_auth_set_queued_log_handler, queued log
 *         lines count too); 0 when none was pending, also after a run that only advanced
 *         the calls' work.
 */
PORTAL_AUTH_EXTERN
size_t portal_auth_run_completions(void);

/**
 * @name A component's own completion queue
 * A completion queue a component owns (completion model 4.): the process's queue's
 * contract, for the clients that name it in their options (portal_auth_options'
 * completion_queue). Their calls do their work and run their completions, exactly once
 * and never inside the starting call, only inside portal_auth_completion_queue_run on
 * this queue, on the thread that calls it; sessions that those calls lend invalidate
 * through it too. Its descriptor is its own and readable (POLLIN, level-triggered)
 * exactly while it has work. When no run has begun for a second while it has work, a
 * library thread does its calls' work (never their completions), as for the process's.
 * In a forked child, a queue of the parent's is no queue: the functions below treat it as
 * NULL.
 *
 * @code
 * portal_auth_completion_queue *queue;
 * portal_auth_completion_queue_new(&queue);
 * options.completion_queue = queue;
 * portal_auth_new(&options, &client, NULL);
 * struct pollfd watched = { .fd = portal_auth_completion_queue_fd(queue), .events = POLLIN };
 * while (!state.done && poll(&watched, 1, timeout_ms) > 0)
 *     portal_auth_completion_queue_run(queue);
 * @endcode
 * @{
 */

/**
 * Makes a completion queue.
 *
 * @param out_queue Receives the queue (free it with portal_auth_completion_queue_free),
 *                  or NULL on failure.
 * @retval PORTAL_AUTH_OK Made.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL out_queue.
 * @retval PORTAL_AUTH_E_INTERNAL No descriptor was left for it.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_completion_queue_new(portal_auth_completion_queue **out_queue);

/**
 * The queue's descriptor, for the event loop of the thread that runs it: readable exactly
 * while the queue has work (as portal_auth_completion_fd is for the process's).
 *
 * @param queue The queue.
 * @return The descriptor: poll it, never read, write or close it. -1 for NULL.
 */
PORTAL_AUTH_EXTERN
int32_t portal_auth_completion_queue_fd(const portal_auth_completion_queue *queue);

/**
 * Does, on the calling thread, the queue's work that is ready and runs the completions
 * pending, as portal_auth_run_completions does for the process's queue.
 *
 * @param queue The queue.
 * @return How many completions it ran; 0 for NULL.
 */
PORTAL_AUTH_EXTERN
size_t portal_auth_completion_queue_run(portal_auth_completion_queue *queue);

/** @} */

/** @} */

/**
 * @defgroup calls Calls
 * @brief The asynchronous calls of every sign-in flow, and their call handles.
 *
 * Each call here takes a callback and a `user_data` passed back to it, and an optional
 * `out_call` (see the overview's rules). Unless a call says otherwise, it returns
 * PORTAL_AUTH_E_INVALID_ARGUMENT, stores NULL in `*out_call` and never calls back for a
 * NULL client or callback or a string argument that is not UTF-8.
 * @{
 */

/**
 * The callback of a call that has no value: `error` is NULL on success, else borrowed for
 * the callback.
 */
typedef void (*portal_auth_done_fn)(void *user_data, const portal_auth_error *error);

/**
 * The callback of the calls that sign a user in (handle_redirect, verify_totp and the
 * browser sign-ins): a result on success, else an error, each borrowed for the callback.
 * For portal_auth_handle_redirect, result and error both NULL mean the URL is not a
 * sign-in redirect for this client, and nothing was sent.
 */
typedef void (*portal_auth_result_fn)(void *user_data, const portal_auth_result *result,
                                      const portal_auth_error *error);

/**
 * Asks a call to stop. It is honoured only before the call's request is on the wire: a
 * grant sent is spent, so the exchange completes and its session is persisted. The callback
 * still fires exactly once, with PORTAL_AUTH_E_CANCELLED when the cancellation took.
 *
 * @param call The call; NULL and finished calls are ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_call_cancel(portal_auth_call *call);

/**
 * @name Methods
 * Which sign-in methods the environment has enabled.
 * @{
 */

/**
 * The callback of portal_auth_get_methods: the methods on success, else an error, each
 * borrowed for the callback.
 */
typedef void (*portal_auth_methods_fn)(void *user_data, const portal_auth_methods *methods,
                                       const portal_auth_error *error);

/**
 * Fetches the sign-in methods the environment has enabled.
 *
 * @param client The client.
 * @param done Called once with the methods or an error.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_get_methods(portal_auth *client, portal_auth_methods_fn done,
                                         void *user_data, portal_auth_call **out_call);

/**
 * The number of methods.
 *
 * @param methods The methods; NULL counts as none.
 * @return The count, from 0.
 */
PORTAL_AUTH_EXTERN
size_t portal_auth_methods_count(const portal_auth_methods *methods);

/**
 * One method.
 *
 * @param methods The methods.
 * @param index From 0 to the count less one.
 * @return "EMAIL_MAGIC_LINK", "GOOGLE" or "APPLE", owned by methods; NULL out of range.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_methods_at(const portal_auth_methods *methods, size_t index);

/**
 * Whether Portal suggests creating a wallet for a new user.
 *
 * @param methods The methods.
 * @return PORTAL_AUTH_TRUE or PORTAL_AUTH_FALSE (also for NULL).
 */
PORTAL_AUTH_EXTERN
portal_auth_bool portal_auth_methods_auto_create_wallet(const portal_auth_methods *methods);

/** @} */

/**
 * @name Magic link
 * A sign-in link sent by email. With a loopback redirect URL that Portal allow-lists, such
 * as http://127.0.0.1:8765/callback, portal_auth_sign_in_with_magic_link does it all in one
 * call: the user opens the email in a browser on this machine and the application finishes
 * by itself (docs/desktop.md "Magic-link sign-in"). Otherwise portal_auth_send_magic_link
 * sends it, and the redirect it leads to completes with portal_auth_handle_redirect (from
 * the application's URL handler, see @ref forwarding, or pasted by the user).
 * @{
 */

/**
 * Emails the user a sign-in link. Needs the magic-link fields of the options.
 *
 * @param client The client.
 * @param email The address; borrowed. Trimmed and lowercased; a blank or NULL address fails
 *              through the callback with PORTAL_AUTH_E_INVALID_ARGUMENT ("email").
 * @param done Called once: no error once Portal answered any 2xx status, whatever its body
 *             (the email went out); PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED without the
 *             magic-link options, PORTAL_AUTH_E_RATE_LIMITED when Portal refuses to send more.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done, or an email that is not UTF-8.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_send_magic_link(portal_auth *client, const char *email,
                                             portal_auth_done_fn done, void *user_data,
                                             portal_auth_call **out_call);

/**
 * Signs in by magic link with no URL to paste: emails the link with the loopback redirect
 * URL, waits on a one-shot listener there for the browser the user opens the email in to
 * bring the redirect, completes the sign-in as portal_auth_handle_redirect would, and then
 * answers the browser with a page that says the sign-in is done and the user can go back
 * to the application (or that the TOTP code is still to be entered there). In this order:
 * the one-at-a-time guard, shared with the browser sign-ins; the checks of
 * portal_auth_send_magic_link; the listener bound (a port in use fails before any email is
 * sent); the email; the wait. The listener accepts only what a browser sign-in's accepts:
 * a callback to the redirect URL's own host, as a top-level navigation, that carries a
 * grant or an error; any other request is refused and the wait goes on.
 *
 * While it waits, portal_auth_handle_redirect with the email's link (pasted by a user who
 * opened the email on another device, or forwarded by the application's next instance)
 * completes it too: the listener stops, the grant is exchanged once, and `done` is called
 * once, with that outcome (the same session as the portal_auth_handle_redirect call's).
 *
 * @param client The client; it needs the magic-link options.
 * @param email The address; borrowed. Trimmed and lowercased; a blank or NULL address fails
 *              through the callback with PORTAL_AUTH_E_INVALID_ARGUMENT ("email").
 * @param timeout_ms How long to wait for the redirect; zero or less: 900,000 ms (the user
 *                   has to open their email).
 * @param done Called once with a result (PORTAL_AUTH_RESULT_AUTHENTICATED or
 *             PORTAL_AUTH_RESULT_TOTP_REQUIRED), or an error:
 *             PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS while another sign-in of this client runs;
 *             PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED, PORTAL_AUTH_E_INVALID_ARGUMENT
 *             ("email"); PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE for a redirect URL that is not
 *             loopback with an explicit port or a port in use (no email is sent), or a
 *             listener that cannot start (portal_auth_error_reason tells which); the errors
 *             of portal_auth_send_magic_link; PORTAL_AUTH_E_SIGN_IN_CLOSED on timeout,
 *             portal_auth_call_cancel or portal_auth_free before the redirect came (nothing
 *             was exchanged; the reason tells which: PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT,
 *             _SIGN_IN_CANCELLED, _CLIENT_CLOSED); or what portal_auth_handle_redirect
 *             reports.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done, or an email that is not UTF-8.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_sign_in_with_magic_link(portal_auth *client, const char *email,
                                                     int32_t timeout_ms, portal_auth_result_fn done,
                                                     void *user_data, portal_auth_call **out_call);

/** @} */

/**
 * @name OAuth URLs
 * Authorize URLs for a host that opens the browser and receives the redirect itself.
 * @{
 */

/**
 * The callback of the login calls: the authorize URL on success, else an error, each
 * borrowed for the callback.
 */
typedef void (*portal_auth_url_fn)(void *user_data, const char *url,
                                   const portal_auth_error *error);

/**
 * Fetches a fresh Google authorize URL for the host to open. Each URL is single-use: fetch
 * one per sign-in.
 *
 * Every binding gives the URL as a string but Python's, which returns it in an
 * AuthorizeUrlResult(authorize_url): the shape of Portal's SDK that the Python binding's
 * contract fixes (docs/desktop.md "Python binding").
 *
 * @param client The client.
 * @param done Called once with the URL, or an error (PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE
 *             when the environment has no Google sign-in).
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_login_with_google(portal_auth *client, portal_auth_url_fn done,
                                               void *user_data, portal_auth_call **out_call);

/**
 * Fetches a fresh Apple authorize URL for the host to open; as portal_auth_login_with_google.
 *
 * @param client The client.
 * @param done Called once with the URL or an error.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_login_with_apple(portal_auth *client, portal_auth_url_fn done,
                                              void *user_data, portal_auth_call **out_call);

/** @} */

/**
 * @name Browser sign-in
 * Google or Apple sign-in in one call: the library opens the system browser, waits on a
 * one-shot loopback listener for the provider to send the user back, and completes the
 * sign-in (docs/desktop.md "Browser sign-in"). The redirect URL must be a loopback URL with
 * an explicit port, such as http://127.0.0.1:8765/callback, that Portal allow-lists.
 * @{
 */

/**
 * Opens an authorize URL in a browser. It is called once per sign-in, once the loopback
 * listener is already answering, on a thread the library starts for it (never the I/O
 * thread that carries the other calls): it may block, and may call any function of the
 * library and wait for the callback. `url` is borrowed for the call, and is always an
 * absolute https URL (http only when the API host is loopback); `ephemeral` is the client's
 * prefers-ephemeral flag (PORTAL_AUTH_TRUE: open a private window if you can).
 *
 * Return 0 once the browser is launched (loading the page before returning works too).
 * Return PORTAL_AUTH_REASON_NO_BROWSER when there is no browser to open (a terminal over
 * SSH, no desktop): the sign-in ends at once with PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE and
 * PORTAL_AUTH_REASON_NO_BROWSER, and portal_auth_error_url gives the URL to show the user.
 * Any other value ends it with PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE and
 * PORTAL_AUTH_REASON_OPENER_FAILED, whose message quotes the value returned.
 */
typedef int (*portal_auth_opener_fn)(void *user_data, const char *url, portal_auth_bool ephemeral);

/**
 * Installs the opener of the browser sign-ins called from now on. A sign-in calls the opener
 * that was installed when its portal_auth_sign_in_with_google or _apple call was made, even
 * if another is installed before its work starts; a sign-in called later never calls a
 * replaced one.
 *
 * @param client The client.
 * @param opener The opener, or NULL to restore the default (`$BROWSER`, else `xdg-open`).
 * @param user_data Passed to opener untouched; it must stay valid while the opener is
 *                  installed and until every sign-in called while it was installed has
 *                  called back. Once replaced with no such sign-in under way, free it.
 * @retval PORTAL_AUTH_OK Installed.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_browser_opener(portal_auth *client, portal_auth_opener_fn opener,
                                                void *user_data);

/**
 * Sets the flag passed to the opener as `ephemeral`.
 *
 * @param client The client.
 * @param prefers PORTAL_AUTH_TRUE asks for a private window; PORTAL_AUTH_FALSE, the
 *                default, does not.
 * @retval PORTAL_AUTH_OK Set.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client, or another value.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_prefers_ephemeral_web_browser_session(portal_auth *client,
                                                                       portal_auth_bool prefers);

/**
 * The flag passed to the opener as `ephemeral`.
 *
 * @param client The client.
 * @return PORTAL_AUTH_TRUE or PORTAL_AUTH_FALSE (also for NULL).
 */
PORTAL_AUTH_EXTERN
portal_auth_bool portal_auth_prefers_ephemeral_web_browser_session(const portal_auth *client);

/**
 * Signs in with Google in the user's browser: opens a fresh authorize URL through the
 * client's opener, waits for the browser to come back to the loopback redirect URL, and
 * completes the sign-in as portal_auth_handle_redirect would. One sign-in (browser or magic
 * link) runs at a time per client. The wait ends only on a callback to the redirect URL's own host, as a
 * top-level navigation, that carries a grant or an error; any other request to the
 * listener is refused and the wait goes on.
 *
 * @param client The client.
 * @param timeout_ms How long to wait for the browser; zero or less: 300,000 ms.
 * @param done Called once with a result (PORTAL_AUTH_RESULT_AUTHENTICATED or
 *             PORTAL_AUTH_RESULT_TOTP_REQUIRED), or an error:
 *             PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS while another sign-in (browser or magic
 *             link) of this client runs; PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE for a redirect
 *             URL that is not loopback with an explicit port, a port in use, no browser
 *             found (portal_auth_error_url gives the URL to show the user instead) or a
 *             failed opener (portal_auth_error_reason tells which);
 *             PORTAL_AUTH_E_MALFORMED_RESPONSE for an authorize URL that is not an absolute
 *             https URL (no browser is started); PORTAL_AUTH_E_SIGN_IN_CLOSED on timeout,
 *             portal_auth_call_cancel or portal_auth_free before the browser came back
 *             (nothing was exchanged; the reason tells which, as for
 *             portal_auth_sign_in_with_magic_link); PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE
 *             when the browser came back without a usable grant; or what
 *             portal_auth_handle_redirect reports.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_sign_in_with_google(portal_auth *client, int32_t timeout_ms,
                                                 portal_auth_result_fn done, void *user_data,
                                                 portal_auth_call **out_call);

/**
 * Signs in with Apple in the user's browser; as portal_auth_sign_in_with_google.
 *
 * @param client The client.
 * @param timeout_ms How long to wait for the browser; zero or less: 300,000 ms.
 * @param done Called once with a result or an error.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_sign_in_with_apple(portal_auth *client, int32_t timeout_ms,
                                                portal_auth_result_fn done, void *user_data,
                                                portal_auth_call **out_call);

/** @} */

/**
 * @name Redirects
 * The single completion path of every flow: the URL the application received when the
 * user came back from a magic link or a provider.
 * @{
 */

/**
 * Exchanges the grant a redirect URL carries (docs/protocol.md section 3). A URL that
 * does not target the configured redirect URL, or carries no grant, calls back with result
 * and error both NULL and sends nothing. The same redirect handled again replays its result
 * with no request.
 *
 * @param client The client.
 * @param url The URL received; borrowed.
 * @param done Called once with a result, nothing (not a sign-in redirect), or an error
 *             (PORTAL_AUTH_E_AUTHENTICATION_FAILED when the redirect carries an error).
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client, url or done, or a URL that is not UTF-8.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_handle_redirect(portal_auth *client, const char *url,
                                             portal_auth_result_fn done, void *user_data,
                                             portal_auth_call **out_call);

/** @} */

/**
 * @name Redirect forwarding
 * @anchor forwarding
 * A custom-scheme redirect URL (myapp://auth/callback) reaches the application through the
 * desktop. The recommended way (README.md shows the .desktop entry and the D-Bus service) is
 * a DBusActivatable application: the desktop hands the URL to the application's name on the
 * session bus (org.freedesktop.Application.Open), which portal_auth_listen_for_redirects
 * serves for a client with an application_id, and the session bus starts the application
 * first when none runs (which then listens, and receives the URL); the URL is on no command
 * line. The other way, for desktops without D-Bus activation, and weaker: the desktop starts
 * the application's URL handler as a new process with the URL as its argument, where any
 * local user can read it (/proc/PID/cmdline); that process forwards the URL with
 * portal_auth_forward_redirect to the instance that is already running, which completes the
 * sign-in the user is looking at; when none runs, it handles the URL itself (docs/desktop.md
 * "Redirect forwarding").
 *
 * The channel is a Unix socket in the user's runtime folder ($XDG_RUNTIME_DIR, which must
 * be theirs alone, mode 0700), one per user, application_id (of the options) and
 * environment; each end checks that the other runs as the same user. It carries only URLs
 * that target the configured redirect URL, each at most as long as
 * portal_auth_handle_redirect reads; a local client that sends anything else, too much, or
 * too slowly is refused or dropped, and stalls nothing. No log line holds a URL (it carries
 * the grant).
 * @{
 */

/**
 * The callback of portal_auth_listen_for_redirects, called once per forwarded redirect and
 * a last time when listening ends. The result and the error are borrowed for the call.
 *
 * With `last` PORTAL_AUTH_FALSE: the outcome of one forwarded URL, as
 * portal_auth_handle_redirect's callback would have it (a result; both NULL for a URL that
 * is not a sign-in redirect; or an error). With `last` PORTAL_AUTH_TRUE: listening has ended,
 * and `error` says why (result is NULL); no call follows.
 */
typedef void (*portal_auth_redirect_fn)(void *user_data, const portal_auth_result *result,
                                        const portal_auth_error *error, portal_auth_bool last);

/**
 * In the running application: listens for the redirects its next instances forward
 * (portal_auth_forward_redirect) and handles each as portal_auth_handle_redirect would. The
 * channel listens once this returns: a redirect forwarded from then on is taken. With an
 * application_id, the client also owns that name on the session bus once this returns, and
 * serves org.freedesktop.Application there: each URL of an Open call that targets the
 * redirect URL is taken the same way (Activate and ActivateAction do nothing); without a
 * session bus, or with the name owned by another process, it listens on the channel alone
 * (a log line says why). A forwarded magic link completes a
 * portal_auth_sign_in_with_magic_link that waits for it. One client of an application_id
 * and environment listens at a time (in the whole session). Redirects already taken when
 * listening ends are handled first, and reach `done` before its last call.
 *
 * @param client The client.
 * @param done Called once per forwarded redirect, one at a time in the order they came,
 *             through the client's completion model; then a last time (`last`
 *             PORTAL_AUTH_TRUE) with PORTAL_AUTH_E_SIGN_IN_CLOSED when listening ended
 *             (portal_auth_call_cancel: PORTAL_AUTH_REASON_SIGN_IN_CANCELLED, or
 *             portal_auth_free: _CLIENT_CLOSED), or
 *             PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE when it could not listen
 *             (portal_auth_error_reason: PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY,
 *             _RUNTIME_DIRECTORY_UNSAFE, _CHANNEL_IN_USE for another instance listening, or
 *             _CHANNEL_FAILED).
 * @param user_data Passed to done; it must stay valid until done's last call.
 * @param out_call May be NULL. Receives a call handle: portal_auth_call_cancel ends listening
 *                 (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called, at least its last call.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_listen_for_redirects(portal_auth *client, portal_auth_redirect_fn done,
                                                  void *user_data, portal_auth_call **out_call);

/** What became of a forwarded redirect (portal_auth_forward_redirect). */
typedef enum portal_auth_forward_result {
    /** The running instance took the URL and handles it: nothing more to do here. */
    PORTAL_AUTH_FORWARD_TAKEN = 1,
    /** No instance listens: handle the URL here (portal_auth_handle_redirect). */
    PORTAL_AUTH_FORWARD_NO_INSTANCE = 2,
    /** The URL does not target the redirect URL of the options (checked here, or by the
        running instance): nothing was handed over, and portal_auth_handle_redirect would
        find nothing in it either. */
    PORTAL_AUTH_FORWARD_REFUSED = 3
} portal_auth_forward_result;

/**
 * The callback of portal_auth_forward_redirect: the outcome, or 0 and an error, borrowed
 * for the call.
 */
typedef void (*portal_auth_forward_fn)(void *user_data, portal_auth_forward_result outcome,
                                       const portal_auth_error *error);

/**
 * In the URL handler the desktop started: hands the URL it received to the application's
 * running instance (the one listening with portal_auth_listen_for_redirects for the same
 * user, application_id and environment) and says whether one took it. No request to Portal
 * and no keyring access. Each step (connecting, sending, the instance's answer) waits at
 * most 5 s.
 *
 * Every binding offers this as a function of the options, with no client (Qt: the static
 * Client::forwardRedirect), but Python's, which is a method of its clients, forwarding with
 * the client's options: every call of the Python binding's contract is a client's method
 * (docs/desktop.md "Python binding"), and making a client does no I/O.
 *
 * @param options As for portal_auth_new (read before this returns): the environment, the
 *                redirect URL and the application_id name the channel.
 * @param url The URL the handler received (its argument, %u); borrowed.
 * @param done Called once, on a library thread (there is no client, so no completion model
 *             applies), with PORTAL_AUTH_FORWARD_TAKEN, _NO_INSTANCE or _REFUSED; or with 0
 *             and an error: what portal_auth_new reports for the options, or
 *             PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE with portal_auth_error_reason
 *             PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY or _RUNTIME_DIRECTORY_UNSAFE (nothing
 *             was sent), or _CHANNEL_FAILED (the instance did not answer in time: it may
 *             still handle the URL, so do not handle it here too).
 * @param user_data Passed to done.
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT NULL options, url or done, or a URL that is not UTF-8.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_forward_redirect(const portal_auth_options *options, const char *url,
                                              portal_auth_forward_fn done, void *user_data);

/** @} */

/**
 * @name TOTP
 * The second factor: a PORTAL_AUTH_RESULT_TOTP_REQUIRED result asks for the user's code.
 * @{
 */

/**
 * Submits the user's code for a TOTP step. The code is posted verbatim: tidy what the user
 * typed with portal_auth_totp_code_normalize first. A code the server refuses fails with
 * PORTAL_AUTH_E_UNAUTHORIZED and a reason: PORTAL_AUTH_REASON_TOTP_CODE_REJECTED asks for the
 * code again, for the same step; PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED says the step's userJwt
 * had expired by the server's clock (portal_auth_result_totp_expires_at), so the user signs
 * in again; PORTAL_AUTH_REASON_TOTP_STEP_USED says this client already signed in with the
 * step (sign in again); PORTAL_AUTH_REASON_OUTCOME_UNKNOWN says the last attempt with this
 * step lost its answer and may have signed the user in (sign in again). An expired step is
 * still sent: the server decides, and its answer's Date gives its clock.
 *
 * @param client The client.
 * @param code The user's code; borrowed.
 * @param user_jwt The step's userJwt (portal_auth_result_user_jwt); borrowed. A secret.
 * @param done Called once with a PORTAL_AUTH_RESULT_AUTHENTICATED result (the session is
 *             persisted first), or an error.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client, code, user_jwt or done, or a string
 *         that is not UTF-8.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_verify_totp(portal_auth *client, const char *code,
                                         const char *user_jwt, portal_auth_result_fn done,
                                         void *user_data, portal_auth_call **out_call);

/** The size of the buffer portal_auth_totp_code_normalize writes: six digits and a NUL. */
#define PORTAL_AUTH_TOTP_CODE_SIZE 7

/**
 * Tidies what the user typed for a TOTP code before portal_auth_verify_totp: removes the
 * spaces and dashes authenticator apps show ("123 456", "123-456") and says whether
 * exactly six digits remain. Makes no request.
 *
 * @param typed What the user typed; borrowed. NULL or not UTF-8 gives PORTAL_AUTH_FALSE.
 * @param out_code May be NULL. Receives the six digits, NUL-terminated, or "" when the
 *                 answer is PORTAL_AUTH_FALSE; PORTAL_AUTH_TOTP_CODE_SIZE bytes.
 * @return PORTAL_AUTH_TRUE when six digits remain (verify them); PORTAL_AUTH_FALSE when
 *         anything else is left or another number of digits (ask the user again).
 */
PORTAL_AUTH_EXTERN
portal_auth_bool portal_auth_totp_code_normalize(const char *typed,
                                                 char out_code[PORTAL_AUTH_TOTP_CODE_SIZE]);

/** @} */

/** @} */

/**
 * @defgroup results Results
 * @brief Where a sign-in left the user: signed in, or one TOTP step away.
 *
 * A portal_auth_result is lent to a portal_auth_result_fn callback and valid only during
 * it, as is every string it returns: copy what you keep, or retain the session.
 * @{
 */

/** The kinds of portal_auth_result, as portal_auth_result_kind returns them. */
typedef enum portal_auth_result_type {
    PORTAL_AUTH_RESULT_AUTHENTICATED = 1, /**< Signed in: a session, already persisted. */
    PORTAL_AUTH_RESULT_TOTP_REQUIRED = 2  /**< Call portal_auth_verify_totp with the user's code. */
} portal_auth_result_type;

/**
 * The kind of a result.
 *
 * @param result The result.
 * @return PORTAL_AUTH_RESULT_AUTHENTICATED or PORTAL_AUTH_RESULT_TOTP_REQUIRED; 0 for NULL.
 */
PORTAL_AUTH_EXTERN
portal_auth_result_type portal_auth_result_kind(const portal_auth_result *result);

/**
 * AUTHENTICATED: the session.
 *
 * @param result The result.
 * @return The session, lent for the callback (portal_auth_session_retain keeps it); NULL
 *         for another kind.
 */
PORTAL_AUTH_EXTERN
portal_auth_session *portal_auth_result_session(const portal_auth_result *result);

/**
 * AUTHENTICATED: the Portal client id.
 *
 * @param result The result.
 * @return Owned by the result; NULL when the server sent none, or for another kind.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_result_client_id(const portal_auth_result *result);

/**
 * AUTHENTICATED: whether the account is account-abstracted.
 *
 * @param result The result.
 * @return PORTAL_AUTH_YES or PORTAL_AUTH_NO; PORTAL_AUTH_UNSET when the server did not say,
 *         or for another kind.
 */
PORTAL_AUTH_EXTERN
portal_auth_tristate portal_auth_result_is_account_abstracted(const portal_auth_result *result);

/**
 * TOTP_REQUIRED: the userJwt to pass to portal_auth_verify_totp. A secret: never log it.
 *
 * @param result The result.
 * @return Owned by the result, which wipes it when it goes: copy it to keep it beyond the
 *         callback. NULL for another kind.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_result_user_jwt(const portal_auth_result *result);

/**
 * TOTP_REQUIRED: the enrollment link, present on the user's first sign-in only (see
 * @ref totp). It embeds the TOTP secret: never log it.
 *
 * @param result The result.
 * @return Owned by the result, which wipes it when it goes; NULL when absent, or for
 *         another kind.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_result_totp_link(const portal_auth_result *result);

/**
 * TOTP_REQUIRED: the user's id.
 *
 * @param result The result.
 * @return Owned by the result; "" when the server did not send it; NULL for another kind.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_result_end_user_id(const portal_auth_result *result);

/**
 * TOTP_REQUIRED: when the step expires, by this machine's clock: the userJwt's `exp` (ten
 * minutes after the sign-in, by the server's clock), less how far the server's clock was
 * ahead when it answered (its Date). A client whose clock is off still counts down the
 * right time left; a code verified later fails with PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED.
 *
 * @param result The result.
 * @return Whole seconds since the Unix epoch; 0 when the userJwt carries no expiry, or for
 *         another kind.
 */
PORTAL_AUTH_EXTERN
int64_t portal_auth_result_totp_expires_at(const portal_auth_result *result);

/** @} */

/**
 * @defgroup sessions Sessions
 * @brief A signed-in user, persisted by the client and restored at the next launch.
 *
 * A session is reference counted: a callback lends one, portal_auth_session_retain keeps it
 * beyond the callback, and portal_auth_session_release lets it go. One session is always
 * one handle: a redirect replayed from the client's memory hands back the same pointer
 * while the host holds it. A session belongs to no client and outlives it.
 * @{
 */

/**
 * The callback of portal_auth_restore_session: the session on success, else an error, each
 * lent for the callback. Session and error both NULL mean no session is stored.
 */
typedef void (*portal_auth_session_fn)(void *user_data, portal_auth_session *session,
                                       const portal_auth_error *error);

/**
 * Reads the persisted session, with no network. A stored entry that cannot be decoded
 * belongs to nobody: it is deleted (one warning line says so, never its content) and reads
 * as no session; when that delete fails, the call fails with
 * PORTAL_AUTH_E_SESSION_STORAGE_FAILURE and PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED, and the
 * entry stays, for a failed self-heal is never reported as signed out. A store that cannot
 * be read this time fails with PORTAL_AUTH_E_SESSION_STORAGE_FAILURE (its reason tells
 * which failure) and leaves the entry alone. The session shares its state with every
 * other handle of its token in the process (see portal_auth_session_invalidate); a token
 * invalidated here whose delete had failed is deleted now, and reads as no session.
 *
 * @param client The client.
 * @param done Called once with the session, nothing, or an error.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_restore_session(portal_auth *client, portal_auth_session_fn done,
                                             void *user_data, portal_auth_call **out_call);

/**
 * Deletes the persisted session and forgets the client's memory of its last grant, once any
 * exchange in flight has finished persisting. Portal has no server-side sign-out.
 *
 * @param client The client.
 * @param done Called once.
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL client or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_clear_persisted_session(portal_auth *client, portal_auth_done_fn done,
                                                     void *user_data, portal_auth_call **out_call);

/**
 * Keeps a session beyond the callback that lent it.
 *
 * @param session The session; NULL is ignored.
 * @return session itself.
 */
PORTAL_AUTH_EXTERN
portal_auth_session *portal_auth_session_retain(portal_auth_session *session);

/**
 * Lets a retained session go.
 *
 * @param session The session; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_session_release(portal_auth_session *session);

/**
 * The user's id: never secret, what to log and key per-user state on.
 *
 * @param session The session.
 * @return Owned by the session; NULL for NULL.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_session_end_user_id(const portal_auth_session *session);

/**
 * Copies the Client Session Token, the secret that authenticates the user to Portal.
 *
 * @param session The session.
 * @param out_token Receives a new string (free it with portal_auth_string_free, which wipes
 *                  it), or NULL on failure.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK The token is in `*out_token`.
 * @retval PORTAL_AUTH_E_SESSION_INVALIDATED The session, or another handle of its token,
 *         was invalidated.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL session or out_token.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_session_copy_token(const portal_auth_session *session,
                                                char **out_token, portal_auth_error **out_error);

/**
 * Invalidates the session: the token is forgotten at once, in every session handle of its
 * environment and token in the process (whichever call lent it: a sign-in, each restore),
 * then the persisted copy is deleted if it is still this token's, or cannot be decoded; a
 * newer sign-in's entry is spared. Invalidation is single-flight: concurrent calls on
 * those handles make one compare-and-delete (one read, at most one delete) and each
 * callback gets its outcome; once one has succeeded, a later call does no storage I/O.
 *
 * The callback completes where the client whose call lent the session last (a sign-in, a
 * restore) sends its completions at the time: its dispatcher, its completion queue or the I/O
 * thread, while that client lives; once the client is freed, from the completion queue if
 * the lending call completed there, else on a library thread.
 *
 * @param session The session.
 * @param done Called once; an error reports a storage failure (the session stays
 *             invalidated, and invalidating it again retries the delete).
 * @param user_data Passed to done.
 * @param out_call May be NULL. Receives a call handle (free it with portal_auth_call_free).
 * @retval PORTAL_AUTH_OK Started: done will be called.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL session or done.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_session_invalidate(portal_auth_session *session,
                                                portal_auth_done_fn done, void *user_data,
                                                portal_auth_call **out_call);

/** @} */

/**
 * @defgroup errors Errors
 * @brief Stable codes, and the error handle with a message and the case's fields.
 * @{
 */

/**
 * The codes of portal_auth_code: stable numbers, never reused. The comment of each starts
 * with the sentence portal_auth_code_message gives, and names the fields its error
 * carries. The protocol's own errors, from INVALID_ARGUMENT to TOTP_QR_UNAVAILABLE, are
 * those of docs/protocol.md section 10.
 */
enum {
    /** Success. */
    PORTAL_AUTH_OK = 0,
    /** An argument or option is unusable. Field: name. */
    PORTAL_AUTH_E_INVALID_ARGUMENT = 1,
    /** The client has no magic-link options. */
    PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED = 2,
    /** The environment has not enabled this sign-in method. Field: method. */
    PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE = 3,
    /** The redirect carried an error instead of a grant. Field: detail (the redirect's error). */
    PORTAL_AUTH_E_AUTHENTICATION_FAILED = 4,
    /** Portal's response is not what the protocol says. Fields: path, missing (may be NULL). */
    PORTAL_AUTH_E_MALFORMED_RESPONSE = 5,
    /** The grant's exchange gave neither a session nor a TOTP step. */
    PORTAL_AUTH_E_INVALID_GRANT_RESPONSE = 6,
    /** The TOTP step's userJwt cannot be read. Field: detail. */
    PORTAL_AUTH_E_INVALID_USER_JWT = 7,
    /** The session could not be read, kept or removed. Field: reason. The error's message
        says what to do. */
    PORTAL_AUTH_E_SESSION_STORAGE_FAILURE = 8,
    /** The environment cannot make an account-abstracted wallet. Field: detail (the server's
        text). */
    PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE = 9,
    /** Portal sends no more emails for now. Field: retry_after. */
    PORTAL_AUTH_E_RATE_LIMITED = 10,
    /** The link cannot be made into a QR code. So is a scale out of range, whose message
        gives the range. */
    PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE = 11,
    /** Portal refused the request (HTTP 401). Field: http_status. */
    PORTAL_AUTH_E_UNAUTHORIZED = 20,
    /** Portal answered with an unexpected HTTP status. Fields: http_status, body, retry_after. */
    PORTAL_AUTH_E_HTTP_STATUS = 21,
    /** No response came from Portal. Field: reason (which failure). */
    PORTAL_AUTH_E_NETWORK = 22,
    /** The session was invalidated. */
    PORTAL_AUTH_E_SESSION_INVALIDATED = 30,
    /** The call was cancelled. (portal_auth_call_cancel took.) */
    PORTAL_AUTH_E_CANCELLED = 31,
    /** The sign-in ended before the redirect came. The web SDK's POPUP_CLOSED. */
    PORTAL_AUTH_E_SIGN_IN_CLOSED = 40,
    /** The sign-in cannot start here. The web SDK's POPUP_UNAVAILABLE. Field: reason. */
    PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE = 41,
    /** Another sign-in of this client is running. The web SDK's SIGN_IN_ALREADY_IN_PROGRESS. */
    PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS = 42,
    /** The redirect carried neither a grant nor an error. The web SDK's CALLBACK_INCOMPLETE. */
    PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE = 43,
    /** The library failed inside. Anything else, and a QR code without libqrencode or libpng. */
    PORTAL_AUTH_E_INTERNAL = 99
};

/**
 * Which failure a PORTAL_AUTH_E_SESSION_STORAGE_FAILURE, _SIGN_IN_UNAVAILABLE, _NETWORK,
 * _SIGN_IN_CLOSED or _UNAUTHORIZED was (portal_auth_error_reason), so that an app can
 * choose what its user does next. portal_auth_reason_user_message gives a sentence to show
 * the user as it is, portal_auth_reason_name the name to key a translation by; the error's
 * own message is the developer's. A 32-bit integer with stable values, never reused, rather
 * than an enum: a later version may add reasons, and a program should treat one it does
 * not know as the error's code alone. docs/errors.md has the table.
 */
typedef int32_t portal_auth_reason;

/** The values of portal_auth_reason. */
enum {
    /** Every other error. */
    PORTAL_AUTH_REASON_NONE = 0,
    /* PORTAL_AUTH_E_SESSION_STORAGE_FAILURE: nothing stored was deleted, and the call may be
       repeated once the cause is gone. */
    /** The keyring is locked: ask the user to unlock it. */
    PORTAL_AUTH_REASON_KEYRING_LOCKED = 1,
    /** No Secret Service on the session bus, or no default (login) collection: install,
        start or set up a keyring (gnome-keyring, KeePassXC). */
    PORTAL_AUTH_REASON_NO_SECRET_SERVICE = 2,
    /** No D-Bus session bus to reach: the program runs outside a desktop session. */
    PORTAL_AUTH_REASON_NO_SESSION_BUS = 3,
    /** D-Bus or the Secret Service failed or did not answer in time: try again. */
    PORTAL_AUTH_REASON_DBUS_FAILURE = 4,
    /** libsecret could not be loaded: install it. */
    PORTAL_AUTH_REASON_LIBSECRET_MISSING = 5,
    /** A portal_auth_storage_callbacks function returned non-zero. */
    PORTAL_AUTH_REASON_HOST_STORAGE_FAILED = 6,
    /** The stored entry cannot be decoded and deleting it failed: it is still stored, and
        the user is not reported signed out. The message names the delete's own cause. */
    PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED = 7,
    /** The keyring asks the user to confirm the access in a dialog (KeePassXC's access
        confirmation) and the client does not show keyring prompts
        (portal_auth_options.keyring_prompt_timeout_ms), or nobody answered in time: let
        the app show them, or turn the confirmation off in the keyring. */
    PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION = 8,
    /** The user dismissed the keyring's dialog (a call cancelled while it waits is cancelled). */
    PORTAL_AUTH_REASON_KEYRING_PROMPT_DISMISSED = 9,
    /** The keyring could not set up the encrypted transfer of secrets (KWallet without
        its encryption plugins): the keyring's installation needs fixing. */
    PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED = 10,
    /** The file store's folder or file is not the user's alone (a symlink, another user's,
        mode open to others): fix its owner and mode (0700), or choose another folder. */
    PORTAL_AUTH_REASON_FILE_STORE_UNSAFE = 11,
    /** The file store could not read, write or remove its file (a full disk, a read-only
        folder); the message names the system's error. */
    PORTAL_AUTH_REASON_FILE_STORE_FAILED = 12,
    /* PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE: nothing was exchanged. */
    /** The redirect URL is not an http loopback URL (127.0.0.1, [::1] or localhost) with an
        explicit port; no request was made. */
    PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK = 20,
    /** Another program listens on the redirect URL's port; no request was made. */
    PORTAL_AUTH_REASON_PORT_IN_USE = 21,
    /** The loopback listener could not start; no request was made. */
    PORTAL_AUTH_REASON_LISTENER_FAILED = 22,
    /** The default opener found no browser ($BROWSER, xdg-open);
        portal_auth_login_with_google and _apple still give the URL to show. */
    PORTAL_AUTH_REASON_NO_BROWSER = 23,
    /** The host's opener returned non-zero; the message quotes the value. */
    PORTAL_AUTH_REASON_OPENER_FAILED = 24,
    /* PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE from the redirect channel (@ref forwarding): nothing
       was handed over. */
    /** $XDG_RUNTIME_DIR is unset, missing or not a folder (the desktop session sets it). */
    PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY = 25,
    /** $XDG_RUNTIME_DIR, or the channels' folder in it, is not the user's alone (mode 0700),
        or the process at the other end runs as another user. */
    PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE = 26,
    /** Another instance of the application already listens for this environment's redirects. */
    PORTAL_AUTH_REASON_CHANNEL_IN_USE = 27,
    /** The channel's socket failed, or the running instance did not answer in time (it may
        still handle the URL). */
    PORTAL_AUTH_REASON_CHANNEL_FAILED = 28,
    /* PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE from a one-call sign-in, numbered after the channel's:
       nothing was exchanged. */
    /** The redirect URL's loopback address does not exist on this machine (a [::1] redirect
        with IPv6 turned off); no request was made. Trying again cannot help: the app needs
        a 127.0.0.1 redirect. */
    PORTAL_AUTH_REASON_REDIRECT_ADDRESS_UNAVAILABLE = 29,
    /* PORTAL_AUTH_E_SIGN_IN_CLOSED: the wait ended before the redirect came; nothing was
       exchanged. */
    /** The call was cancelled (portal_auth_call_cancel, or a binding's own cancel): start
        again when the user asks. */
    PORTAL_AUTH_REASON_SIGN_IN_CANCELLED = 40,
    /** The sign-in's timeout passed before the browser or the email's link came back. */
    PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT = 41,
    /** The client was freed (portal_auth_free) during the sign-in. */
    PORTAL_AUTH_REASON_CLIENT_CLOSED = 42,
    /* PORTAL_AUTH_E_UNAUTHORIZED: the server refused; what the user does next. */
    /** A redirect's grant was refused (portal_auth_handle_redirect, the one-call sign-ins):
        the link was already used, has expired, or is not Portal's. Request a new link. */
    PORTAL_AUTH_REASON_LINK_USED = 50,
    /** portal_auth_verify_totp: the code was not accepted, the step had not expired by the
        server's clock, and this client had not used it. Ask for the code again and verify with
        the same step. (A step another process used is refused the same way.) */
    PORTAL_AUTH_REASON_TOTP_CODE_REJECTED = 51,
    /** portal_auth_verify_totp: the step's userJwt had expired by the server's clock
        (portal_auth_result_totp_expires_at). Sign in again. */
    PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED = 52,
    /** The last attempt with the same grant or TOTP step lost its answer
        (PORTAL_AUTH_REASON_CONNECTION_RESET, _REQUEST_TIMED_OUT, _RESPONSE_TOO_LARGE) or got a
        5xx, and may have completed: the server now refuses it as spent. The user did nothing
        wrong; sign in again. */
    PORTAL_AUTH_REASON_OUTCOME_UNKNOWN = 53,
    /** portal_auth_verify_totp: this client already signed in with the step (its code was
        accepted), and the server refuses it as spent. Sign in again. */
    PORTAL_AUTH_REASON_TOTP_STEP_USED = 54,
    /* PORTAL_AUTH_E_NETWORK: no usable answer came (docs/network.md). The message names the
       server and any proxy; nothing was retried. */
    /** The server's certificate leads to no trusted authority: a company CA that is not
        installed (see portal_auth_options.ca_file), or something intercepting the connection. */
    PORTAL_AUTH_REASON_CERTIFICATE_UNTRUSTED = 60,
    /** The server's certificate has expired, by this machine's clock. */
    PORTAL_AUTH_REASON_CERTIFICATE_EXPIRED = 61,
    /** The server's certificate is not valid yet, by this machine's clock. */
    PORTAL_AUTH_REASON_CERTIFICATE_NOT_YET_VALID = 62,
    /** The server's certificate was issued for another name. */
    PORTAL_AUTH_REASON_CERTIFICATE_WRONG_HOST = 63,
    /** The certificate authority file (ca_file, $CURL_CA_BUNDLE, $SSL_CERT_FILE) could not
        be read. */
    PORTAL_AUTH_REASON_CA_FILE_UNUSABLE = 64,
    /** The TLS handshake failed otherwise (nothing in common, a broken server). */
    PORTAL_AUTH_REASON_TLS_FAILED = 65,
    /** The proxy asked for credentials (HTTP 407): none were given, or they were refused. */
    PORTAL_AUTH_REASON_PROXY_AUTH_REQUIRED = 66,
    /** The proxy refused to connect to the server, or could not reach it. */
    PORTAL_AUTH_REASON_PROXY_REFUSED = 67,
    /** The proxy itself could not be reached: its name did not resolve, or it refused. */
    PORTAL_AUTH_REASON_PROXY_UNREACHABLE = 68,
    /** The server's name did not resolve. */
    PORTAL_AUTH_REASON_NAME_NOT_RESOLVED = 69,
    /** The connection was refused, or no route leads to the server. */
    PORTAL_AUTH_REASON_CONNECTION_REFUSED = 70,
    /** The connection was reset or closed before the whole answer came: the request may
        have reached the server. */
    PORTAL_AUTH_REASON_CONNECTION_RESET = 71,
    /** Connecting (the name lookup, TCP, TLS, a proxy's tunnel) took longer than
        portal_auth_options.connect_timeout_ms. */
    PORTAL_AUTH_REASON_CONNECT_TIMED_OUT = 72,
    /** The request took longer than portal_auth_options.request_timeout_ms once connected:
        it may have reached the server. */
    PORTAL_AUTH_REASON_REQUEST_TIMED_OUT = 73,
    /** The answer exceeded 1 MiB. */
    PORTAL_AUTH_REASON_RESPONSE_TOO_LARGE = 74,
    /** libcurl could not be loaded: install it. */
    PORTAL_AUTH_REASON_LIBCURL_MISSING = 75,
    /** Anything else: no thread or memory, or a libcurl that cannot honour a protection the
        library requires (the message names it). */
    PORTAL_AUTH_REASON_NETWORK_FAILED = 76
};

/**
 * A reason's name, as this header spells it after PORTAL_AUTH_REASON_ ("KEYRING_LOCKED"),
 * to log or to key an app's own translations by.
 *
 * @param reason A PORTAL_AUTH_REASON_* value.
 * @return Static storage, never freed; NULL for NONE and for a value this library does not
 *         know.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_reason_name(portal_auth_reason reason);

/**
 * A reason's one-line sentence for the user, in English, to show as it is ("Your keyring is
 * locked. Unlock it, then try again."). It never carries a detail of the error (an address,
 * a program, a status); those are in the error's message, for the developer.
 *
 * @param reason A PORTAL_AUTH_REASON_* value.
 * @return Static storage, never freed; NULL for NONE and for a value this library does not
 *         know.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_reason_user_message(portal_auth_reason reason);

/**
 * A code's name, as this header spells it after PORTAL_AUTH_E_ ("UNAUTHORIZED"; "OK" for
 * PORTAL_AUTH_OK), for a code with no error handle beside it: a call refused before it
 * made one, or a binding's own failure. Like curl_easy_strerror and sqlite3_errstr.
 *
 * @param code A portal_auth_code.
 * @return Static storage, never freed; NULL for a value this library does not know.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_code_name(portal_auth_code code);

/**
 * What a code means, in one English sentence for the developer ("Portal refused the request
 * (HTTP 401)."); an error's own message (portal_auth_error_message) says more of its case.
 *
 * @param code A portal_auth_code.
 * @return Static storage, never freed; NULL for a value this library does not know.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_code_message(portal_auth_code code);

/**
 * The error's code.
 *
 * @param error The error.
 * @return Its code; PORTAL_AUTH_E_INTERNAL for NULL.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_error_code(const portal_auth_error *error);

/**
 * A sentence for the user.
 *
 * @param error The error.
 * @return Owned by the error; never NULL for a non-NULL error.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_message(const portal_auth_error *error);

/**
 * INVALID_ARGUMENT: the argument or options field, as C spells it ("auth_environment_id",
 * "email", "options", ...).
 *
 * @param error The error.
 * @return Owned by the error; NULL for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_name(const portal_auth_error *error);

/**
 * MALFORMED_RESPONSE: the endpoint's path.
 *
 * @param error The error.
 * @return Owned by the error; NULL for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_path(const portal_auth_error *error);

/**
 * MALFORMED_RESPONSE: the missing field.
 *
 * @param error The error.
 * @return Owned by the error; NULL when the envelope itself was wrong, or for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_missing(const portal_auth_error *error);

/**
 * AUTHENTICATION_FAILED, INVALID_USER_JWT, ACCOUNT_ABSTRACTION_UNAVAILABLE: the case's text.
 *
 * @param error The error.
 * @return Owned by the error; NULL for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_detail(const portal_auth_error *error);

/**
 * AUTH_METHOD_UNAVAILABLE: the method.
 *
 * @param error The error.
 * @return "GOOGLE" or "APPLE", owned by the error; NULL for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_method(const portal_auth_error *error);

/**
 * UNAUTHORIZED and HTTP_STATUS: the HTTP status.
 *
 * @param error The error.
 * @return The status; 0 when no response arrived, or for another code.
 */
PORTAL_AUTH_EXTERN
int32_t portal_auth_error_http_status(const portal_auth_error *error);

/**
 * HTTP_STATUS: the server's reason, an excerpt of the response body for the developer,
 * such as {"error":"redirectUrl is not allow-listed"}. Show it to developers, in a log or a
 * debug view; it is not a sentence for the user.
 *
 * It holds at most the body's first 512 characters, as UTF-8: bytes that are not UTF-8
 * appear as U+FFFD, and control characters other than tab, line feed and carriage return
 * as a backslash, an x and two hex digits. It is what the server wrote, so it may repeat
 * what the request carried (the email address, the redirect URL, the environment id),
 * which is never a secret. There is no excerpt for an empty body, nor for any answer to a request that carried a secret (the
 * grant exchanges of portal_auth_handle_redirect and of the sign-ins, and
 * portal_auth_verify_totp), whose body might echo it.
 *
 * @param error The error.
 * @return Owned by the error; NULL when there is no excerpt, or for another code.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_body(const portal_auth_error *error);

/**
 * RATE_LIMITED and HTTP_STATUS: the delay the server asked for before a new attempt (its
 * Retry-After header, either form), in seconds. The library never retries by itself.
 *
 * @param error The error.
 * @return The delay in seconds, 0 or more; -1 when the server named none, or for another
 *         code.
 */
PORTAL_AUTH_EXTERN
int64_t portal_auth_error_retry_after(const portal_auth_error *error);

/**
 * SESSION_STORAGE_FAILURE, SIGN_IN_UNAVAILABLE, SIGN_IN_CLOSED, UNAUTHORIZED and NETWORK:
 * which failure it was.
 *
 * @param error The error.
 * @return A PORTAL_AUTH_REASON_* value; PORTAL_AUTH_REASON_NONE for another code, for an
 *         UNAUTHORIZED of a call that cannot tell (portal_auth_get_auth_methods, ...), and
 *         for NULL.
 */
PORTAL_AUTH_EXTERN
portal_auth_reason portal_auth_error_reason(const portal_auth_error *error);

/**
 * SIGN_IN_UNAVAILABLE with PORTAL_AUTH_REASON_NO_BROWSER from a browser sign-in: the
 * authorize URL no browser could open, to show the user (to open elsewhere; the redirect
 * can then be pasted into portal_auth_handle_redirect).
 *
 * @param error The error.
 * @return Owned by the error; NULL for another error.
 */
PORTAL_AUTH_EXTERN
const char *portal_auth_error_url(const portal_auth_error *error);

/** @} */

/**
 * @defgroup storage Storage
 * @brief The host's own session store, for PORTAL_AUTH_STORAGE_HOST.
 *
 * The store holds one opaque UTF-8 value per environment. The library encodes and decodes
 * the value, serialises the calls per environment, and applies the fault taxonomy: a
 * callback returning non-zero is a transient failure (PORTAL_AUTH_E_SESSION_STORAGE_FAILURE
 * with PORTAL_AUTH_REASON_HOST_STORAGE_FAILED; nothing is deleted for it). A value that does
 * not decode belongs to nobody and is deleted, by portal_auth_restore_session (which then
 * reports no session, and logs one warning line saying so) and by
 * portal_auth_session_invalidate; when that delete fails, the call fails with
 * PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED. Callbacks run on a library thread, one at a time
 * per environment.
 * @{
 */

/** The host's store, copied by portal_auth_new. */
struct portal_auth_storage_callbacks {
    /** sizeof(portal_auth_storage_callbacks): the struct may grow at its end. */
    size_t size;
    /** Stores in `*out_value` a malloc'd copy of the value (the library wipes it and frees
        it with free()), or NULL when nothing is stored. Returns 0 on success. */
    int (*get)(void *user_data, const char *environment_id, char **out_value);
    /** Stores `value`, replacing any. Returns 0 on success. */
    int (*set)(void *user_data, const char *environment_id, const char *value);
    /** Deletes the value; deleting nothing is a success. Returns 0 on success. */
    int (*remove)(void *user_data, const char *environment_id);
    /** Passed to every callback untouched. */
    void *user_data;
    /** Optional (may be NULL): tells the host it may free what user_data points to. Once
        portal_auth_new has read a struct of the right size, it is called exactly once, from
        any thread: before portal_auth_new returns when that fails, else when the client and
        every session it made are gone. */
    void (*release)(void *user_data);
};

/** @} */

/**
 * @defgroup logging Logging
 * @brief The library's log lines, for the host to receive. The library is silent by default.
 * @{
 */

/** Log levels, lowest first. */
typedef enum portal_auth_log_level {
    PORTAL_AUTH_LOG_DEBUG = 0,   /**< Detail for debugging. */
    PORTAL_AUTH_LOG_INFO = 1,    /**< What the library did. */
    PORTAL_AUTH_LOG_WARNING = 2, /**< Worth knowing, such as an undecodable entry cleared. */
    PORTAL_AUTH_LOG_ERROR = 3,   /**< A failure. */
    PORTAL_AUTH_LOG_NONE = 4     /**< For portal_auth_set_log_level only: no line at all. */
} portal_auth_log_level;

/**
 * Receives one log line. The lines name the endUserId where useful and never carry a
 * secret. `message` is borrowed for the call. Called from library threads, or, when
 * installed with portal_auth_set_queued_log_handler, from portal_auth_run_completions.
 */
typedef void (*portal_auth_log_fn)(void *user_data, portal_auth_log_level level,
                                   const char *message);

/**
 * Installs the process-wide log handler, called on the thread that logs: a library thread,
 * or for a call that the completion queue drives, the thread running the queue (inside
 * portal_auth_run_completions: a handler must not wait for a lock held around that call). It
 * replaces a handler of portal_auth_set_queued_log_handler. When this returns, the handler
 * it replaced is not running on any thread and is never called again, so its user_data may
 * be freed.
 *
 * @param handler The handler, or NULL to make the library silent again.
 * @param user_data Passed to handler untouched.
 * @retval PORTAL_AUTH_OK Always.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_log_handler(portal_auth_log_fn handler, void *user_data);

/**
 * Installs the process-wide log handler, called from portal_auth_run_completions on the
 * thread that runs it, never on a library thread: each line is queued as it is logged,
 * beside the completions, and makes the completion queue's descriptor readable. Lines still
 * queued when the handler is replaced are dropped. It replaces a handler of
 * portal_auth_set_log_handler; when this returns, the handler it replaced is not running on
 * any thread and is never called again.
 *
 * @param handler The handler, or NULL to make the library silent again.
 * @param user_data Passed to handler untouched.
 * @retval PORTAL_AUTH_OK Installed.
 * @retval PORTAL_AUTH_E_INTERNAL The completion queue has no descriptor; nothing changed.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_queued_log_handler(portal_auth_log_fn handler, void *user_data);

/**
 * Passes only the lines at level and above to the handler, from the next line on. A host
 * whose own filter drops the lower levels spares itself their calls.
 *
 * @param level The lowest level passed; PORTAL_AUTH_LOG_NONE passes none. The default is
 *              PORTAL_AUTH_LOG_DEBUG: every line.
 * @retval PORTAL_AUTH_OK Set.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A value that is not a portal_auth_log_level.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_set_log_level(portal_auth_log_level level);

/** @} */

/**
 * @defgroup totp TOTP enrollment
 * @brief The secret and the QR code of an enrollment link, for the user's authenticator app.
 *
 * The link is the `otpauth://` URI of a TOTP step (portal_auth_result_totp_link), or one the
 * host kept (docs/protocol.md section 8). These functions are synchronous: no network, no
 * keyring. The secret and every rendering of the code carry the TOTP secret: never log or
 * persist them. A NULL link or one that is not UTF-8 is PORTAL_AUTH_E_INVALID_ARGUMENT
 * ("otpauth_url").
 * @{
 */

/**
 * The base32 secret of an enrollment link, for manual entry in an authenticator app.
 *
 * @param otpauth_url The link; borrowed.
 * @param out_secret Receives a new string (free it with portal_auth_string_free), or NULL
 *                   when the link is unusable or carries no valid secret.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK `*out_secret` holds the secret, or NULL.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL or non-UTF-8 otpauth_url, or a NULL out_secret.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_totp_secret(const char *otpauth_url, char **out_secret,
                                         portal_auth_error **out_error);

/**
 * The QR code of an enrollment link as a PNG: byte mode, error correction M, a 4-module
 * quiet zone, pure black on opaque white (1-bit grayscale), `(modules + 8) * scale` pixels
 * square. The same link gives the same bytes.
 *
 * @param otpauth_url The link; borrowed.
 * @param scale Whole pixels a module, from 1; 10 is the usual size.
 * @param out_png Receives a new buffer (free it with portal_auth_bytes_free, which wipes it
 *                first; never with free()), or NULL on failure.
 * @param out_length Receives the buffer's size, or 0 on failure.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK The PNG is in `*out_png`.
 * @retval PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE A link that is not `otpauth://`, carries no valid
 *         secret or is too long for a QR code; or a scale under 1 or one that makes a side
 *         over 8192 pixels, whose message gives the range this link's code takes.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL or non-UTF-8 otpauth_url, or a NULL out_png
 *         or out_length.
 * @retval PORTAL_AUTH_E_INTERNAL libqrencode or libpng cannot be loaded (the message names it).
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_totp_qr_png(const char *otpauth_url, int32_t scale, uint8_t **out_png,
                                         size_t *out_length, portal_auth_error **out_error);

/**
 * The modules of an enrollment link's QR code, the code portal_auth_totp_qr_png draws, for a
 * toolkit that paints it itself, crisp at any scale (HiDPI, fractional scaling): each module
 * a square of the size the toolkit chooses, dark where its bit is set, on white.
 *
 * The buffer holds `side` rows of `(side + 7) / 8` bytes each, the top row first. The
 * leftmost module of a row is the most significant bit of the row's first byte; a set bit is
 * a dark module, and the bits that pad a row to whole bytes are clear. The 4-module quiet
 * zone is included: `side` is the code's modules plus 8.
 *
 * @param otpauth_url The link; borrowed.
 * @param out_side Receives the modules a side, or 0 on failure.
 * @param out_modules Receives a new buffer (free it with portal_auth_bytes_free), or NULL on
 *                    failure.
 * @param out_length Receives the buffer's size, side * ((side + 7) / 8), or 0 on failure.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK The modules are in `*out_modules`.
 * @retval PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE A link that is not `otpauth://`, carries no valid
 *         secret or is too long for a QR code.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL or non-UTF-8 otpauth_url, or a NULL out_side,
 *         out_modules or out_length.
 * @retval PORTAL_AUTH_E_INTERNAL libqrencode cannot be loaded (the message names it).
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_totp_qr_matrix(const char *otpauth_url, int32_t *out_side,
                                            uint8_t **out_modules, size_t *out_length,
                                            portal_auth_error **out_error);

/**
 * The QR code of an enrollment link as SVG text: a view box of one unit a module (for web
 * views and toolkits that scale it) and a nominal size of scale pixels a module.
 *
 * @param otpauth_url The link; borrowed.
 * @param scale Whole pixels a module, from 1, as for portal_auth_totp_qr_png.
 * @param out_svg Receives a new string (free it with portal_auth_string_free), or NULL on failure.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK The SVG is in `*out_svg`.
 * @retval PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE As for portal_auth_totp_qr_png: an unusable link,
 *         or a scale out of range (the message gives the range).
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL or non-UTF-8 otpauth_url, or a NULL out_svg.
 * @retval PORTAL_AUTH_E_INTERNAL libqrencode cannot be loaded.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_totp_qr_svg(const char *otpauth_url, int32_t scale, char **out_svg,
                                         portal_auth_error **out_error);

/**
 * The terminal a QR code is drawn for: its half blocks take the text's colour, and the
 * background shows through the spaces.
 */
typedef enum portal_auth_terminal_colors {
    PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK = 0, /**< Light text on a dark background, most terminals. */
    PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT = 1  /**< Dark text on a light background. */
} portal_auth_terminal_colors;

/**
 * The QR code of an enrollment link as UTF-8 text for a terminal: half blocks and spaces,
 * one column a module and two module rows a line, quiet zone included, each line ending in
 * a newline.
 *
 * @param otpauth_url The link; borrowed.
 * @param colors The terminal's colours.
 * @param out_text Receives a new string (free it with portal_auth_string_free), or NULL on failure.
 * @param out_error May be NULL. Receives an error on failure, else NULL.
 * @retval PORTAL_AUTH_OK The text is in `*out_text`.
 * @retval PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE An unusable link, as for portal_auth_totp_qr_png.
 * @retval PORTAL_AUTH_E_INVALID_ARGUMENT A NULL or non-UTF-8 otpauth_url, another colors
 *         ("colors"), or a NULL out_text.
 * @retval PORTAL_AUTH_E_INTERNAL libqrencode cannot be loaded.
 */
PORTAL_AUTH_EXTERN
portal_auth_code portal_auth_totp_qr_terminal(const char *otpauth_url,
                                              portal_auth_terminal_colors colors, char **out_text,
                                              portal_auth_error **out_error);

/** @} */

/**
 * @defgroup memory Ownership and freeing
 * @brief Who owns each pointer that crosses the interface, and the functions that free.
 *
 * Every pointer's owner is also stated where it crosses. The rules:
 * - strings passed in are UTF-8 and borrowed: the library copies what it keeps before the
 *   call returns;
 * - handles are opaque and made by the library. A client, an error, a call handle and a
 *   completion queue are each freed with their own function below; a session is reference
 *   counted instead (portal_auth_session_retain, portal_auth_session_release);
 * - everything a callback receives is borrowed for the duration of the callback, except a
 *   session, which the host may keep with portal_auth_session_retain;
 * - a string returned as `const char *` is owned by the handle it came from; a string or
 *   buffer stored through an `out_` argument belongs to the caller, who frees it with
 *   portal_auth_string_free or portal_auth_bytes_free, which wipe it first.
 *
 * Every function here ignores NULL, so a cleanup path may call it on what was never made.
 * @{
 */

/**
 * Frees a client. Its waits end at once, as PORTAL_AUTH_E_SIGN_IN_CLOSED with nothing
 * exchanged: a browser or magic-link sign-in waiting for its redirect, and listening for
 * forwarded redirects; their ports and sockets are released before this returns, so
 * another client may listen on them at once. A sign-in still fetching its authorize URL or
 * sending its email ends the same way: no email is sent that was not on the wire already
 * (one that is ends the sign-in when it returns, with no further step), and no browser
 * opener is called but one whose call had already begun (the sign-in checks just before
 * it calls; its callback comes after the opener returns, so its user_data must live until
 * then, as ever). Calls in flight still complete, each calling
 * back exactly once, the way it was started: on the I/O thread, through the dispatcher, or
 * from the completion queue, whose runs go on with them as before (the completions already
 * queued stay there) until portal_auth_run_completions has run them all (nothing they
 * receive refers to the freed client).
 *
 * @param client The client; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_free(portal_auth *client);

/**
 * Lets go of a queue; stop watching its descriptor first, which closes once nothing uses
 * the queue any more (its number may then be reused). Nothing of it is lost: its calls
 * still in flight, the completions it holds, and the calls of clients that still name it
 * are then done and completed, each exactly once, on the library's I/O thread (as in
 * completion model 1.), so their callbacks must be safe to run there. A component that
 * goes away cancels its calls and frees its clients first. It may be called from inside
 * a completion that this queue runs.
 *
 * @param queue The queue; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_completion_queue_free(portal_auth_completion_queue *queue);

/**
 * Frees a call handle. It does not cancel the call, whose callback still fires.
 *
 * @param call The handle; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_call_free(portal_auth_call *call);

/**
 * Frees an error and the strings it owns.
 *
 * @param error The error; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_error_free(portal_auth_error *error);

/**
 * Wipes and frees a string the library handed over (with explicit_bzero, which no
 * optimiser removes).
 *
 * @param string The string; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_string_free(char *string);

/**
 * Wipes and frees a buffer the library handed over (portal_auth_totp_qr_png,
 * portal_auth_totp_qr_matrix).
 *
 * @param bytes The buffer; NULL is ignored.
 */
PORTAL_AUTH_EXTERN
void portal_auth_bytes_free(uint8_t *bytes);

/** @} */

#ifdef __cplusplus
}
#endif

#endif
