//! libportalauth's C ABI, as `include/portal_auth.h` declares it: the functions, the callback
//! types, the structs and every `PORTAL_AUTH_*` constant, under the header's names, and the
//! linking (`links = "portalauth"`). The header's comments state what each function does and
//! who owns every pointer; the safe API is the `portal-auth` crate.
//!
//! The library is found with pkg-config's `portal-auth` (or `PORTAL_AUTH_LIB_DIR`) and
//! linked as `-lportalauth`, so that a program loads it by its soname, libportalauth.so.0.
//! This crate exports the library's folder as build-script metadata: the build script of a
//! package that depends on it directly reads `DEP_PORTALAUTH_LIBDIR`, and puts the folder in
//! its programs' run path (the README shows the two lines).
//!
//! `tests/header.rs` compares every declaration, constant and struct layout here with the
//! header, as clang and a C compiler read it.
#![allow(non_camel_case_types)]
#![deny(missing_docs)]

use std::os::raw::{c_char, c_int, c_void};

/// Opaque handles: made by the library, never looked into.
macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident),*) => { $($(#[$doc])* #[repr(C)] pub struct $name { _opaque: [u8; 0] })* };
}
opaque!(
    /// A client of one auth environment (portal_auth_new, portal_auth_free).
    portal_auth,
    /// An error with its message and the case's fields (portal_auth_error_free).
    portal_auth_error,
    /// One asynchronous call, to cancel it (portal_auth_call_free).
    portal_auth_call,
    /// The sign-in methods an environment has enabled; lent to a callback only.
    portal_auth_methods,
    /// Where a redirect or a TOTP code left the user; lent to a callback only.
    portal_auth_result,
    /// A signed-in user, reference counted (portal_auth_session_retain, _release).
    portal_auth_session,
    /// A completion queue a component owns (portal_auth_completion_queue_new, _free).
    portal_auth_completion_queue
);

/// The outcome of a function: PORTAL_AUTH_OK or a PORTAL_AUTH_E_* code.
pub type portal_auth_code = i32;
/// A yes or no (PORTAL_AUTH_FALSE, _TRUE): the C enum, an int.
pub type portal_auth_bool = c_int;
/// A yes or no that may be left to the server (PORTAL_AUTH_UNSET, _YES, _NO): the C enum, an int.
pub type portal_auth_tristate = c_int;
/// Where a client keeps its session (PORTAL_AUTH_STORAGE_*): the C enum, an int.
pub type portal_auth_storage_kind = c_int;
/// The kind of a result (PORTAL_AUTH_RESULT_*): the C enum, an int.
pub type portal_auth_result_type = c_int;
/// Which failure an error was (PORTAL_AUTH_REASON_*).
pub type portal_auth_reason = i32;
/// A log level (PORTAL_AUTH_LOG_*): the C enum, an int.
pub type portal_auth_log_level = c_int;
/// The colours a terminal QR code is drawn for (PORTAL_AUTH_TERMINAL_*): the C enum, an int.
pub type portal_auth_terminal_colors = c_int;
/// What became of a forwarded redirect (PORTAL_AUTH_FORWARD_*): the C enum, an int.
pub type portal_auth_forward_result = c_int;

/// The major version of these declarations.
pub const PORTAL_AUTH_VERSION_MAJOR: i32 = 0;
/// The minor version of these declarations.
pub const PORTAL_AUTH_VERSION_MINOR: i32 = 1;
/// The patch version of these declarations.
pub const PORTAL_AUTH_VERSION_PATCH: i32 = 0;
/// The version of these declarations as text.
pub const PORTAL_AUTH_VERSION_STRING: &str = "0.1.0";
/// The version of these declarations as one number, to compare with portal_auth_version_number.
pub const PORTAL_AUTH_VERSION_NUMBER: i32 =
    PORTAL_AUTH_VERSION_MAJOR * 10000 + PORTAL_AUTH_VERSION_MINOR * 100 + PORTAL_AUTH_VERSION_PATCH;
/// The number in the library's soname, libportalauth.so.0.
pub const PORTAL_AUTH_SOVERSION: i32 = 0;

/// No.
pub const PORTAL_AUTH_FALSE: portal_auth_bool = 0;
/// Yes.
pub const PORTAL_AUTH_TRUE: portal_auth_bool = 1;

/// Not set: the server decides, or did not say.
pub const PORTAL_AUTH_UNSET: portal_auth_tristate = 0;
/// Yes.
pub const PORTAL_AUTH_YES: portal_auth_tristate = 1;
/// No.
pub const PORTAL_AUTH_NO: portal_auth_tristate = 2;

/// The desktop keyring (Secret Service), the default.
pub const PORTAL_AUTH_STORAGE_KEYRING: portal_auth_storage_kind = 0;
/// This process only, forgotten at exit.
pub const PORTAL_AUTH_STORAGE_MEMORY: portal_auth_storage_kind = 1;
/// The host's own, through portal_auth_storage_callbacks.
pub const PORTAL_AUTH_STORAGE_HOST: portal_auth_storage_kind = 2;
/// Plain files (not encrypted), for machines with no keyring.
pub const PORTAL_AUTH_STORAGE_FILE: portal_auth_storage_kind = 3;

/// Signed in: a session, already persisted.
pub const PORTAL_AUTH_RESULT_AUTHENTICATED: portal_auth_result_type = 1;
/// A TOTP code is needed: portal_auth_verify_totp.
pub const PORTAL_AUTH_RESULT_TOTP_REQUIRED: portal_auth_result_type = 2;

/// Declares the codes and the reasons, which scripts/generate-tables.py writes into codes.rs
/// from the header (tests/header.rs lists them with its own definition of this macro).
macro_rules! header_constants {
    ($($(#[$doc:meta])* $name:ident: $type:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $type = $value;)*
    };
}
include!("codes.rs");

/// The size of the buffer portal_auth_totp_code_normalize writes: six digits and a NUL.
pub const PORTAL_AUTH_TOTP_CODE_SIZE: usize = 7;

/// Detail for debugging.
pub const PORTAL_AUTH_LOG_DEBUG: portal_auth_log_level = 0;
/// What the library did.
pub const PORTAL_AUTH_LOG_INFO: portal_auth_log_level = 1;
/// Worth knowing, such as an undecodable entry cleared.
pub const PORTAL_AUTH_LOG_WARNING: portal_auth_log_level = 2;
/// A failure.
pub const PORTAL_AUTH_LOG_ERROR: portal_auth_log_level = 3;
/// For portal_auth_set_log_level only: no line at all.
pub const PORTAL_AUTH_LOG_NONE: portal_auth_log_level = 4;

/// Light text on a dark background, most terminals.
pub const PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK: portal_auth_terminal_colors = 0;
/// Dark text on a light background.
pub const PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT: portal_auth_terminal_colors = 1;

/// The running instance took the URL and handles it: nothing more to do here.
pub const PORTAL_AUTH_FORWARD_TAKEN: portal_auth_forward_result = 1;
/// No instance listens: handle the URL here (portal_auth_handle_redirect).
pub const PORTAL_AUTH_FORWARD_NO_INSTANCE: portal_auth_forward_result = 2;
/// The URL does not target the redirect URL of the options: nothing was handed over, and
/// portal_auth_handle_redirect would find nothing in it either.
pub const PORTAL_AUTH_FORWARD_REFUSED: portal_auth_forward_result = 3;

/// The callback of a call that has no value; every pointer is borrowed for the call.
pub type portal_auth_done_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, error: *const portal_auth_error)>;
/// The callback of portal_auth_get_methods.
pub type portal_auth_methods_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, methods: *const portal_auth_methods, error: *const portal_auth_error),
>;
/// The callback of the login calls: the authorize URL or an error.
pub type portal_auth_url_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, url: *const c_char, error: *const portal_auth_error)>;
/// The callback of the calls that sign a user in: a result or an error.
pub type portal_auth_result_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, result: *const portal_auth_result, error: *const portal_auth_error),
>;
/// The callback of portal_auth_restore_session: a session, nothing, or an error.
pub type portal_auth_session_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, session: *mut portal_auth_session, error: *const portal_auth_error),
>;
/// The callback of portal_auth_listen_for_redirects: once per forwarded redirect (`last`
/// PORTAL_AUTH_FALSE: a result, both NULL, or an error), then once with `last`
/// PORTAL_AUTH_TRUE and the error that ended listening. Both pointers are borrowed for the call.
pub type portal_auth_redirect_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        result: *const portal_auth_result,
        error: *const portal_auth_error,
        last: portal_auth_bool,
    ),
>;
/// The callback of portal_auth_forward_redirect: the outcome, or 0 and an error (borrowed).
pub type portal_auth_forward_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, outcome: portal_auth_forward_result, error: *const portal_auth_error),
>;
/// A completion a dispatcher receives, to run with its job.
pub type portal_auth_job_fn = Option<unsafe extern "C" fn(job: *mut c_void)>;
/// A dispatcher: runs completions where the host wants them.
pub type portal_auth_dispatch_fn =
    Option<unsafe extern "C" fn(dispatcher_data: *mut c_void, run: portal_auth_job_fn, job: *mut c_void)>;
/// Releases what the host passed with a dispatcher, once no job of it can run any more.
pub type portal_auth_destroy_fn = Option<unsafe extern "C" fn(data: *mut c_void)>;
/// Opens an authorize URL in a browser; 0 once the browser is launched,
/// PORTAL_AUTH_REASON_NO_BROWSER when there is no browser to open, any other value a failure.
pub type portal_auth_opener_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, url: *const c_char, ephemeral: portal_auth_bool) -> c_int>;
/// Receives one log line, borrowed for the call.
pub type portal_auth_log_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, level: portal_auth_log_level, message: *const c_char)>;

/// The host's own session store, for PORTAL_AUTH_STORAGE_HOST; copied by portal_auth_new.
#[repr(C)]
pub struct portal_auth_storage_callbacks {
    /// `size_of::<portal_auth_storage_callbacks>()`: the struct may grow at its end.
    pub size: usize,
    /// Stores in `*out_value` a malloc'd copy of the value (the library frees it), or NULL.
    pub get: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *mut *mut c_char) -> c_int>,
    /// Stores `value`, replacing any.
    pub set: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> c_int>,
    /// Deletes the value; deleting nothing is a success.
    pub remove: Option<unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int>,
    /// Passed to every callback untouched.
    pub user_data: *mut c_void,
    /// Optional: called exactly once when the library no longer needs `user_data`.
    pub release: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// A client's configuration: fill it with
/// `portal_auth_options_init(&mut options, size_of::<portal_auth_options>())` first.
#[repr(C)]
pub struct portal_auth_options {
    /// `size_of::<portal_auth_options>()`, set by portal_auth_options_init.
    pub size: usize,
    /// The auth environment's id (required).
    pub auth_environment_id: *const c_char,
    /// The redirect URL Portal sends the user back to (required).
    pub redirect_url: *const c_char,
    /// The API host; NULL means "api.portalhq.io".
    pub api_host: *const c_char,
    /// The magic-link sender's address, with magic_link_template_id.
    pub magic_link_from_email: *const c_char,
    /// The magic-link email template, with magic_link_from_email.
    pub magic_link_template_id: *const c_char,
    /// Whether the account is account-abstracted; PORTAL_AUTH_UNSET sends nothing.
    pub is_account_abstracted: portal_auth_tristate,
    /// Where the session is kept.
    pub storage: portal_auth_storage_kind,
    /// How long a connection may take to open; zero or less: 10,000 ms.
    pub connect_timeout_ms: i32,
    /// How long a whole request may take; zero or less: 30,000 ms.
    pub request_timeout_ms: i32,
    /// With PORTAL_AUTH_STORAGE_HOST: the host's callbacks.
    pub host_storage: *const portal_auth_storage_callbacks,
    /// The application's reverse-DNS name (`com.example.App`), which names its keyring item;
    /// NULL: none, and the item is shared by every program of the environment that names none.
    pub application_id: *const c_char,
    /// Zero or less: the keyring's dialogs are never shown; else the longest wait for one, in ms.
    pub keyring_prompt_timeout_ms: i32,
    /// With PORTAL_AUTH_STORAGE_FILE: the folder of the session files; NULL: the default.
    pub file_storage_path: *const c_char,
    /// The completion queue the client's calls complete through; NULL: the I/O thread.
    pub completion_queue: *mut portal_auth_completion_queue,
    /// A PEM file of the certificate authorities to trust in place of the system's; NULL:
    /// $CURL_CA_BUNDLE, else $SSL_CERT_FILE and $SSL_CERT_DIR, else the system's.
    pub ca_file: *const c_char,
}

extern "C" {
    /// Frees a buffer the library handed over (portal_auth_totp_qr_png).
    pub fn portal_auth_bytes_free(bytes: *mut u8);
    /// Asks a call to stop.
    pub fn portal_auth_call_cancel(call: *mut portal_auth_call);
    /// Frees a call handle.
    pub fn portal_auth_call_free(call: *mut portal_auth_call);
    /// Deletes the persisted session and forgets the client's memory of its last grant, once any exchange in flight has finished persisting.
    pub fn portal_auth_clear_persisted_session(
        client: *mut portal_auth,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// A code's name after PORTAL_AUTH_E_ ("UNAUTHORIZED"; "OK"); NULL for an unknown value. Static.
    pub fn portal_auth_code_name(code: portal_auth_code) -> *const c_char;
    /// What a code means, one sentence for the developer; NULL for an unknown value. Static.
    pub fn portal_auth_code_message(code: portal_auth_code) -> *const c_char;
    /// The completion queue's descriptor, for the host's event loop to watch: readable exactly while the queue has work for portal_auth_run_completions, that is completions queued and not yet taken, or its calls' work ready.
    pub fn portal_auth_completion_fd() -> i32;
    /// The descriptor of a component's own queue; -1 for NULL.
    pub fn portal_auth_completion_queue_fd(queue: *const portal_auth_completion_queue) -> i32;
    /// Lets go of a component's own queue; the I/O thread completes what it still holds.
    pub fn portal_auth_completion_queue_free(queue: *mut portal_auth_completion_queue);
    /// Makes a completion queue a component owns.
    pub fn portal_auth_completion_queue_new(out_queue: *mut *mut portal_auth_completion_queue) -> portal_auth_code;
    /// Does a component's queue's ready work and runs its pending completions on the calling thread.
    pub fn portal_auth_completion_queue_run(queue: *mut portal_auth_completion_queue) -> usize;
    /// HTTP_STATUS: the server's reason, an excerpt of the response body for the developer, such as {"error":"redirectUrl is not allow-listed"}.
    pub fn portal_auth_error_body(error: *const portal_auth_error) -> *const c_char;
    /// The error's code.
    pub fn portal_auth_error_code(error: *const portal_auth_error) -> portal_auth_code;
    /// AUTHENTICATION_FAILED, INVALID_USER_JWT, ACCOUNT_ABSTRACTION_UNAVAILABLE: the case's text.
    pub fn portal_auth_error_detail(error: *const portal_auth_error) -> *const c_char;
    /// Frees an error and the strings it owns.
    pub fn portal_auth_error_free(error: *mut portal_auth_error);
    /// UNAUTHORIZED and HTTP_STATUS: the HTTP status.
    pub fn portal_auth_error_http_status(error: *const portal_auth_error) -> i32;
    /// A sentence for the user.
    pub fn portal_auth_error_message(error: *const portal_auth_error) -> *const c_char;
    /// AUTH_METHOD_UNAVAILABLE: the method.
    pub fn portal_auth_error_method(error: *const portal_auth_error) -> *const c_char;
    /// MALFORMED_RESPONSE: the missing field.
    pub fn portal_auth_error_missing(error: *const portal_auth_error) -> *const c_char;
    /// INVALID_ARGUMENT: the argument or options field, as C spells it ("auth_environment_id", "email", "options", ...).
    pub fn portal_auth_error_name(error: *const portal_auth_error) -> *const c_char;
    /// MALFORMED_RESPONSE: the endpoint's path.
    pub fn portal_auth_error_path(error: *const portal_auth_error) -> *const c_char;
    /// SESSION_STORAGE_FAILURE, SIGN_IN_UNAVAILABLE, SIGN_IN_CLOSED, UNAUTHORIZED and NETWORK: which failure it was.
    pub fn portal_auth_error_reason(error: *const portal_auth_error) -> portal_auth_reason;
    /// RATE_LIMITED and HTTP_STATUS: the delay the server asked for (Retry-After), in seconds; -1 when none.
    pub fn portal_auth_error_retry_after(error: *const portal_auth_error) -> i64;
    /// SIGN_IN_UNAVAILABLE with PORTAL_AUTH_REASON_NO_BROWSER from a browser sign-in: the authorize URL no browser could open, to show the user.
    pub fn portal_auth_error_url(error: *const portal_auth_error) -> *const c_char;
    /// In the URL handler the desktop started: hands the URL to the application's running instance (listening for the same user, application_id and environment) and says whether one took it.
    pub fn portal_auth_forward_redirect(
        options: *const portal_auth_options,
        url: *const c_char,
        done: portal_auth_forward_fn,
        user_data: *mut c_void,
    ) -> portal_auth_code;
    /// Frees a client; its waits (sign-ins waiting for a redirect, listening for forwarded redirects) end at once.
    pub fn portal_auth_free(client: *mut portal_auth);
    /// Fetches the sign-in methods the environment has enabled.
    pub fn portal_auth_get_methods(
        client: *mut portal_auth,
        done: portal_auth_methods_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Exchanges the grant a redirect URL carries (docs/protocol.md section 3).
    pub fn portal_auth_handle_redirect(
        client: *mut portal_auth,
        url: *const c_char,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// In the running application: listens for the redirects its next instances forward, and handles each as portal_auth_handle_redirect would; `done` is called once per redirect, then a last time.
    pub fn portal_auth_listen_for_redirects(
        client: *mut portal_auth,
        done: portal_auth_redirect_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Fetches a fresh Apple authorize URL for the host to open; as portal_auth_login_with_google.
    pub fn portal_auth_login_with_apple(
        client: *mut portal_auth,
        done: portal_auth_url_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Fetches a fresh Google authorize URL for the host to open.
    pub fn portal_auth_login_with_google(
        client: *mut portal_auth,
        done: portal_auth_url_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// One method.
    pub fn portal_auth_methods_at(methods: *const portal_auth_methods, index: usize) -> *const c_char;
    /// Whether Portal suggests creating a wallet for a new user.
    pub fn portal_auth_methods_auto_create_wallet(methods: *const portal_auth_methods) -> portal_auth_bool;
    /// The number of methods.
    pub fn portal_auth_methods_count(methods: *const portal_auth_methods) -> usize;
    /// Creates a client from options.
    pub fn portal_auth_new(
        options: *const portal_auth_options,
        out_client: *mut *mut portal_auth,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// Fills options with the defaults and sets its size.
    pub fn portal_auth_options_init(options: *mut portal_auth_options, size: usize);
    /// The flag passed to the opener as ephemeral.
    pub fn portal_auth_prefers_ephemeral_web_browser_session(client: *const portal_auth) -> portal_auth_bool;
    /// A reason's name, as the header spells it after PORTAL_AUTH_REASON_ ("KEYRING_LOCKED"), to log or to key an app's own translations by; static storage, NULL for NONE and unknown values.
    pub fn portal_auth_reason_name(reason: portal_auth_reason) -> *const c_char;
    /// A reason's one-line sentence for the user, in English, to show as it is; static storage, NULL for NONE and unknown values.
    pub fn portal_auth_reason_user_message(reason: portal_auth_reason) -> *const c_char;
    /// Reads the persisted session, with no network.
    pub fn portal_auth_restore_session(
        client: *mut portal_auth,
        done: portal_auth_session_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// AUTHENTICATED: the Portal client id.
    pub fn portal_auth_result_client_id(result: *const portal_auth_result) -> *const c_char;
    /// TOTP_REQUIRED: the user's id.
    pub fn portal_auth_result_end_user_id(result: *const portal_auth_result) -> *const c_char;
    /// AUTHENTICATED: whether the account is account-abstracted.
    pub fn portal_auth_result_is_account_abstracted(result: *const portal_auth_result) -> portal_auth_tristate;
    /// The kind of a result.
    pub fn portal_auth_result_kind(result: *const portal_auth_result) -> portal_auth_result_type;
    /// AUTHENTICATED: the session.
    pub fn portal_auth_result_session(result: *const portal_auth_result) -> *mut portal_auth_session;
    /// TOTP_REQUIRED: when the step expires, by the userJwt's `exp` (ten minutes after the sign-in), in whole seconds since the Unix epoch; 0 when absent, or for another kind.
    pub fn portal_auth_result_totp_expires_at(result: *const portal_auth_result) -> i64;
    /// TOTP_REQUIRED: the enrollment link, present on the user's first sign-in only (see
    pub fn portal_auth_result_totp_link(result: *const portal_auth_result) -> *const c_char;
    /// TOTP_REQUIRED: the userJwt to pass to portal_auth_verify_totp.
    pub fn portal_auth_result_user_jwt(result: *const portal_auth_result) -> *const c_char;
    /// Runs, on the calling thread, every completion pending when it is called, one after another.
    pub fn portal_auth_run_completions() -> usize;
    /// Emails the user a sign-in link.
    pub fn portal_auth_send_magic_link(
        client: *mut portal_auth,
        email: *const c_char,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Copies the Client Session Token, the secret that authenticates the user to Portal.
    pub fn portal_auth_session_copy_token(
        session: *const portal_auth_session,
        out_token: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// The user's id: never secret, what to log and key per-user state on.
    pub fn portal_auth_session_end_user_id(session: *const portal_auth_session) -> *const c_char;
    /// Invalidates the session: the token is forgotten at once, in every session handle of its environment and token in the process (whichever call lent it: a sign-in, each restore), then the persisted copy is deleted if it is still this token's, or cannot be decoded; a newer sign-in's entry is spared.
    pub fn portal_auth_session_invalidate(
        session: *mut portal_auth_session,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Lets a retained session go.
    pub fn portal_auth_session_release(session: *mut portal_auth_session);
    /// Keeps a session beyond the callback that lent it.
    pub fn portal_auth_session_retain(session: *mut portal_auth_session) -> *mut portal_auth_session;
    /// Installs the opener the client's browser sign-ins use from now on.
    pub fn portal_auth_set_browser_opener(
        client: *mut portal_auth,
        opener: portal_auth_opener_fn,
        user_data: *mut c_void,
    ) -> portal_auth_code;
    /// Sends the completions of the client's calls started from now on to the completion queue, or back to the I/O thread.
    pub fn portal_auth_set_completion_queue(client: *mut portal_auth, enabled: portal_auth_bool) -> portal_auth_code;
    /// Installs the client's dispatcher for the calls started from now on.
    pub fn portal_auth_set_dispatcher(
        client: *mut portal_auth,
        dispatch: portal_auth_dispatch_fn,
        dispatcher_data: *mut c_void,
        destroy: portal_auth_destroy_fn,
    ) -> portal_auth_code;
    /// Installs the process-wide log handler, called on the library thread that logs.
    pub fn portal_auth_set_log_handler(handler: portal_auth_log_fn, user_data: *mut c_void) -> portal_auth_code;
    /// Passes only the lines at level and above to the handler, from the next line on.
    pub fn portal_auth_set_log_level(level: portal_auth_log_level) -> portal_auth_code;
    /// Sets the flag passed to the opener as ephemeral.
    pub fn portal_auth_set_prefers_ephemeral_web_browser_session(
        client: *mut portal_auth,
        prefers: portal_auth_bool,
    ) -> portal_auth_code;
    /// Installs the process-wide log handler, called from portal_auth_run_completions on the thread that runs it, never on a library thread: each line is queued as it is logged, beside the completions, and makes the completion queue's descriptor readable.
    pub fn portal_auth_set_queued_log_handler(handler: portal_auth_log_fn, user_data: *mut c_void) -> portal_auth_code;
    /// Signs in with Apple in the user's browser; as portal_auth_sign_in_with_google.
    pub fn portal_auth_sign_in_with_apple(
        client: *mut portal_auth,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Signs in by magic link with no URL to paste: emails the link with the loopback redirect URL, waits on a one-shot listener there for the browser to bring the redirect, and completes the sign-in as portal_auth_handle_redirect would.
    pub fn portal_auth_sign_in_with_magic_link(
        client: *mut portal_auth,
        email: *const c_char,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Signs in with Google in the user's browser: opens a fresh authorize URL through the client's opener, waits for the browser to come back to the loopback redirect URL, and completes the sign-in as portal_auth_handle_redirect would.
    pub fn portal_auth_sign_in_with_google(
        client: *mut portal_auth,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// Frees a string the library handed over, clearing its bytes first.
    pub fn portal_auth_string_free(string: *mut c_char);
    /// Tidies what the user typed for a TOTP code before portal_auth_verify_totp: removes the spaces and dashes authenticator apps show ("123 456", "123-456") and says whether exactly six digits remain; `out_code` (NULL, or PORTAL_AUTH_TOTP_CODE_SIZE bytes) receives them, or "".
    pub fn portal_auth_totp_code_normalize(typed: *const c_char, out_code: *mut c_char) -> portal_auth_bool;
    /// The QR code of an enrollment link as a PNG: byte mode, error correction M, a 4-module quiet zone, pure black on opaque white (1-bit grayscale), (modules + 8) * scale pixels square.
    pub fn portal_auth_totp_qr_png(
        otpauth_url: *const c_char,
        scale: i32,
        out_png: *mut *mut u8,
        out_length: *mut usize,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// The modules of an enrollment link's QR code, a bit each (set where dark), side rows of (side + 7) / 8 bytes from the top, the leftmost module a row's first byte's top bit, the quiet zone included; free the buffer with portal_auth_bytes_free.
    pub fn portal_auth_totp_qr_matrix(
        otpauth_url: *const c_char,
        out_side: *mut i32,
        out_modules: *mut *mut u8,
        out_length: *mut usize,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// The QR code of an enrollment link as SVG text: a view box of one unit a module (for web views and toolkits that scale it) and a nominal size of scale pixels a module.
    pub fn portal_auth_totp_qr_svg(
        otpauth_url: *const c_char,
        scale: i32,
        out_svg: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// The QR code of an enrollment link as UTF-8 text for a terminal: half blocks and spaces, one column a module and two module rows a line, quiet zone included, each line ending in a newline.
    pub fn portal_auth_totp_qr_terminal(
        otpauth_url: *const c_char,
        colors: portal_auth_terminal_colors,
        out_text: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// The base32 secret of an enrollment link, for manual entry in an authenticator app.
    pub fn portal_auth_totp_secret(
        otpauth_url: *const c_char,
        out_secret: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    /// Submits the user's code for a TOTP step.
    pub fn portal_auth_verify_totp(
        client: *mut portal_auth,
        code: *const c_char,
        user_jwt: *const c_char,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    /// The version of the library that was loaded, as text, such as "0.1.0".
    pub fn portal_auth_version() -> *const c_char;
    /// The version of the library that was loaded, counted as PORTAL_AUTH_VERSION_NUMBER, to compare with the macro a program was compiled against.
    pub fn portal_auth_version_number() -> i32;
}
