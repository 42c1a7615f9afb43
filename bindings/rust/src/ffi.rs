//! The C ABI of libportalauth, declared by hand from `include/portal_auth.h` (whose
//! comments state the ownership of every pointer).
//! `tests/header.rs` fails when a function here and its prototype in the header disagree.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// Opaque handles: made by the library, never looked into.
macro_rules! opaque {
    ($($name:ident),*) => { $(#[repr(C)] pub struct $name { _opaque: [u8; 0] })* };
}
opaque!(portal_auth, portal_auth_error, portal_auth_call, portal_auth_methods, portal_auth_result, portal_auth_session);

pub type portal_auth_code = i32;

// The header's enum types, passed as C ints.
pub type portal_auth_bool = c_int;
pub type portal_auth_storage_kind = c_int;
pub type portal_auth_result_type = c_int;
pub type portal_auth_log_level = c_int;
pub type portal_auth_terminal_colors = c_int;
pub type portal_auth_forward_result = c_int;

pub const PORTAL_AUTH_RESULT_AUTHENTICATED: portal_auth_result_type = 1;
pub const PORTAL_AUTH_RESULT_TOTP_REQUIRED: portal_auth_result_type = 2;

pub const PORTAL_AUTH_OK: portal_auth_code = 0;
pub const PORTAL_AUTH_E_INVALID_ARGUMENT: portal_auth_code = 1;
pub const PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED: portal_auth_code = 2;
pub const PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE: portal_auth_code = 3;
pub const PORTAL_AUTH_E_AUTHENTICATION_FAILED: portal_auth_code = 4;
pub const PORTAL_AUTH_E_MALFORMED_RESPONSE: portal_auth_code = 5;
pub const PORTAL_AUTH_E_INVALID_GRANT_RESPONSE: portal_auth_code = 6;
pub const PORTAL_AUTH_E_INVALID_USER_JWT: portal_auth_code = 7;
pub const PORTAL_AUTH_E_SESSION_STORAGE_FAILURE: portal_auth_code = 8;
pub const PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE: portal_auth_code = 9;
pub const PORTAL_AUTH_E_RATE_LIMITED: portal_auth_code = 10;
pub const PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE: portal_auth_code = 11;
pub const PORTAL_AUTH_E_UNAUTHORIZED: portal_auth_code = 20;
pub const PORTAL_AUTH_E_HTTP_STATUS: portal_auth_code = 21;
pub const PORTAL_AUTH_E_NETWORK: portal_auth_code = 22;
pub const PORTAL_AUTH_E_SESSION_INVALIDATED: portal_auth_code = 30;
pub const PORTAL_AUTH_E_CANCELLED: portal_auth_code = 31;
pub const PORTAL_AUTH_E_SIGN_IN_CLOSED: portal_auth_code = 40;
pub const PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE: portal_auth_code = 41;
pub const PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS: portal_auth_code = 42;
pub const PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE: portal_auth_code = 43;
pub const PORTAL_AUTH_E_INTERNAL: portal_auth_code = 99;

pub type portal_auth_reason = i32;

pub const PORTAL_AUTH_REASON_NONE: portal_auth_reason = 0;
pub const PORTAL_AUTH_REASON_KEYRING_LOCKED: portal_auth_reason = 1;
pub const PORTAL_AUTH_REASON_NO_SECRET_SERVICE: portal_auth_reason = 2;
pub const PORTAL_AUTH_REASON_NO_SESSION_BUS: portal_auth_reason = 3;
pub const PORTAL_AUTH_REASON_DBUS_FAILURE: portal_auth_reason = 4;
pub const PORTAL_AUTH_REASON_LIBSECRET_MISSING: portal_auth_reason = 5;
pub const PORTAL_AUTH_REASON_HOST_STORAGE_FAILED: portal_auth_reason = 6;
pub const PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED: portal_auth_reason = 7;
pub const PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK: portal_auth_reason = 20;
pub const PORTAL_AUTH_REASON_PORT_IN_USE: portal_auth_reason = 21;
pub const PORTAL_AUTH_REASON_LISTENER_FAILED: portal_auth_reason = 22;
pub const PORTAL_AUTH_REASON_NO_BROWSER: portal_auth_reason = 23;
pub const PORTAL_AUTH_REASON_OPENER_FAILED: portal_auth_reason = 24;
pub const PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY: portal_auth_reason = 25;
pub const PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE: portal_auth_reason = 26;
pub const PORTAL_AUTH_REASON_CHANNEL_IN_USE: portal_auth_reason = 27;
pub const PORTAL_AUTH_REASON_CHANNEL_FAILED: portal_auth_reason = 28;

pub const PORTAL_AUTH_STORAGE_KEYRING: portal_auth_storage_kind = 0;
pub const PORTAL_AUTH_STORAGE_MEMORY: portal_auth_storage_kind = 1;

pub const PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK: portal_auth_terminal_colors = 0;
pub const PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT: portal_auth_terminal_colors = 1;

pub const PORTAL_AUTH_UNSET: portal_auth_bool = -1;
pub const PORTAL_AUTH_FALSE: portal_auth_bool = 0;
pub const PORTAL_AUTH_TRUE: portal_auth_bool = 1;

// Callbacks: every pointer they receive is borrowed for the call.
pub type portal_auth_done_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, error: *const portal_auth_error)>;
pub type portal_auth_methods_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, methods: *const portal_auth_methods, error: *const portal_auth_error),
>;
pub type portal_auth_url_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, url: *const c_char, error: *const portal_auth_error)>;
pub type portal_auth_result_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, result: *const portal_auth_result, error: *const portal_auth_error),
>;
pub type portal_auth_session_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, session: *mut portal_auth_session, error: *const portal_auth_error),
>;
pub type portal_auth_redirect_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        result: *const portal_auth_result,
        error: *const portal_auth_error,
        last: portal_auth_bool,
    ),
>;
pub type portal_auth_forward_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, outcome: portal_auth_forward_result, error: *const portal_auth_error),
>;
pub type portal_auth_job_fn = Option<unsafe extern "C" fn(job: *mut c_void)>;
pub type portal_auth_dispatch_fn =
    Option<unsafe extern "C" fn(dispatcher_data: *mut c_void, run: portal_auth_job_fn, job: *mut c_void)>;
pub type portal_auth_destroy_fn = Option<unsafe extern "C" fn(data: *mut c_void)>;
pub type portal_auth_opener_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, url: *const c_char, ephemeral: portal_auth_bool) -> c_int>;
pub type portal_auth_log_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, level: portal_auth_log_level, message: *const c_char)>;

#[repr(C)]
pub struct portal_auth_storage_callbacks {
    pub size: usize,
    pub get: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *mut *mut c_char) -> c_int>,
    pub set: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> c_int>,
    pub remove: Option<unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int>,
    pub user_data: *mut c_void,
    pub release: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// Fill with `portal_auth_options_init(&mut options, size_of::<portal_auth_options>())`.
#[repr(C)]
pub struct portal_auth_options {
    pub size: usize,
    pub auth_environment_id: *const c_char,
    pub redirect_url: *const c_char,
    pub api_host: *const c_char,
    pub magic_link_from_email: *const c_char,
    pub magic_link_template_id: *const c_char,
    pub is_account_abstracted: portal_auth_bool,
    pub storage: portal_auth_storage_kind,
    pub connect_timeout_ms: i32,
    pub request_timeout_ms: i32,
    pub host_storage: *const portal_auth_storage_callbacks,
    pub application_id: *const c_char,
}

extern "C" {
    pub fn portal_auth_bytes_free(bytes: *mut u8);
    pub fn portal_auth_call_cancel(call: *mut portal_auth_call);
    pub fn portal_auth_call_free(call: *mut portal_auth_call);
    pub fn portal_auth_clear_persisted_session(
        client: *mut portal_auth,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_completion_fd() -> i32;
    pub fn portal_auth_error_body(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_code(error: *const portal_auth_error) -> portal_auth_code;
    pub fn portal_auth_error_detail(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_free(error: *mut portal_auth_error);
    pub fn portal_auth_error_http_status(error: *const portal_auth_error) -> i32;
    pub fn portal_auth_error_message(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_method(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_missing(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_name(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_path(error: *const portal_auth_error) -> *const c_char;
    pub fn portal_auth_error_reason(error: *const portal_auth_error) -> portal_auth_reason;
    pub fn portal_auth_forward_redirect(
        options: *const portal_auth_options,
        url: *const c_char,
        done: portal_auth_forward_fn,
        user_data: *mut c_void,
    ) -> portal_auth_code;
    pub fn portal_auth_free(client: *mut portal_auth);
    pub fn portal_auth_get_methods(
        client: *mut portal_auth,
        done: portal_auth_methods_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_listen_for_redirects(
        client: *mut portal_auth,
        done: portal_auth_redirect_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_handle_redirect(
        client: *mut portal_auth,
        url: *const c_char,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_login_with_apple(
        client: *mut portal_auth,
        done: portal_auth_url_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_login_with_google(
        client: *mut portal_auth,
        done: portal_auth_url_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_methods_at(methods: *const portal_auth_methods, index: usize) -> *const c_char;
    pub fn portal_auth_methods_auto_create_wallet(methods: *const portal_auth_methods) -> portal_auth_bool;
    pub fn portal_auth_methods_count(methods: *const portal_auth_methods) -> usize;
    pub fn portal_auth_new(
        options: *const portal_auth_options,
        out_client: *mut *mut portal_auth,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_options_init(options: *mut portal_auth_options, size: usize);
    pub fn portal_auth_prefers_ephemeral_web_browser_session(client: *const portal_auth) -> portal_auth_bool;
    pub fn portal_auth_restore_session(
        client: *mut portal_auth,
        done: portal_auth_session_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_result_client_id(result: *const portal_auth_result) -> *const c_char;
    pub fn portal_auth_result_end_user_id(result: *const portal_auth_result) -> *const c_char;
    pub fn portal_auth_result_is_account_abstracted(result: *const portal_auth_result) -> portal_auth_bool;
    pub fn portal_auth_result_kind(result: *const portal_auth_result) -> portal_auth_result_type;
    pub fn portal_auth_result_session(result: *const portal_auth_result) -> *mut portal_auth_session;
    pub fn portal_auth_result_totp_link(result: *const portal_auth_result) -> *const c_char;
    pub fn portal_auth_result_user_jwt(result: *const portal_auth_result) -> *const c_char;
    pub fn portal_auth_run_completions() -> usize;
    pub fn portal_auth_send_magic_link(
        client: *mut portal_auth,
        email: *const c_char,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_session_copy_token(
        session: *const portal_auth_session,
        out_token: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_session_end_user_id(session: *const portal_auth_session) -> *const c_char;
    pub fn portal_auth_session_invalidate(
        session: *mut portal_auth_session,
        done: portal_auth_done_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_session_release(session: *mut portal_auth_session);
    pub fn portal_auth_session_retain(session: *mut portal_auth_session) -> *mut portal_auth_session;
    pub fn portal_auth_set_browser_opener(
        client: *mut portal_auth,
        opener: portal_auth_opener_fn,
        user_data: *mut c_void,
    ) -> portal_auth_code;
    pub fn portal_auth_set_completion_queue(client: *mut portal_auth, enabled: portal_auth_bool) -> portal_auth_code;
    pub fn portal_auth_set_dispatcher(
        client: *mut portal_auth,
        dispatch: portal_auth_dispatch_fn,
        dispatcher_data: *mut c_void,
        destroy: portal_auth_destroy_fn,
    ) -> portal_auth_code;
    pub fn portal_auth_set_log_handler(handler: portal_auth_log_fn, user_data: *mut c_void) -> portal_auth_code;
    pub fn portal_auth_set_log_level(level: portal_auth_log_level) -> portal_auth_code;
    pub fn portal_auth_set_prefers_ephemeral_web_browser_session(
        client: *mut portal_auth,
        prefers: portal_auth_bool,
    ) -> portal_auth_code;
    pub fn portal_auth_set_queued_log_handler(handler: portal_auth_log_fn, user_data: *mut c_void) -> portal_auth_code;
    pub fn portal_auth_sign_in_with_apple(
        client: *mut portal_auth,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_sign_in_with_magic_link(
        client: *mut portal_auth,
        email: *const c_char,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_sign_in_with_google(
        client: *mut portal_auth,
        timeout_ms: i32,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_string_free(string: *mut c_char);
    pub fn portal_auth_totp_qr_matrix(
        otpauth_url: *const c_char,
        out_side: *mut i32,
        out_modules: *mut *mut u8,
        out_length: *mut usize,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_totp_qr_png(
        otpauth_url: *const c_char,
        scale: i32,
        out_png: *mut *mut u8,
        out_length: *mut usize,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_totp_qr_svg(
        otpauth_url: *const c_char,
        scale: i32,
        out_svg: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_totp_qr_terminal(
        otpauth_url: *const c_char,
        colors: portal_auth_terminal_colors,
        out_text: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_totp_secret(
        otpauth_url: *const c_char,
        out_secret: *mut *mut c_char,
        out_error: *mut *mut portal_auth_error,
    ) -> portal_auth_code;
    pub fn portal_auth_verify_totp(
        client: *mut portal_auth,
        code: *const c_char,
        user_jwt: *const c_char,
        done: portal_auth_result_fn,
        user_data: *mut c_void,
        out_call: *mut *mut portal_auth_call,
    ) -> portal_auth_code;
    pub fn portal_auth_version() -> *const c_char;
    pub fn portal_auth_version_number() -> i32;
}
