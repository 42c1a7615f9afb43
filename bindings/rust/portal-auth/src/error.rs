//! The library's errors (docs/protocol.md §10, transport, sign-in): one case a code, with the
//! case's fields and the library's message, which never carries a secret.
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::strings::{borrowed, static_text};
use crate::sys;

/// What went wrong. `Display` gives the library's message, a sentence for the developer,
/// which never carries a secret; each case has its fields, and `message` is that sentence.
/// The reasons of the cases that have one say what the user does next, with a sentence to
/// show the user as it is (`user_message()`) and a name to key a translation by (`Display`).
///
/// ```
/// use portal_auth::{Error, Options, PortalAuth};
///
/// match PortalAuth::new(&Options::new(" ", "myapp://auth/callback")) {
///     Err(Error::InvalidArgument { name, .. }) => assert_eq!(name, "auth_environment_id"),
///     other => panic!("{:?}", other),
/// }
/// ```
///
/// Every reason enum prints as its name and has the library's sentence for the user:
///
/// ```
/// use portal_auth::StorageFailureReason;
///
/// let reason = StorageFailureReason::KeyringLocked;
/// assert_eq!(reason.to_string(), "KEYRING_LOCKED"); // to log, or to key a translation by
/// assert_eq!(reason.user_message(), "Your keyring is locked. Unlock it, then try again.");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields: each case's documentation names them, `message` is Display's
pub enum Error {
    /// An argument or options field that cannot be used, as C spells its name
    /// (`"auth_environment_id"`, `"email"`, …).
    InvalidArgument { name: String, message: String },
    /// `send_magic_link` without a [`MagicLinkConfig`](crate::MagicLinkConfig).
    MagicLinkNotConfigured { message: String },
    /// `"GOOGLE"` or `"APPLE"` is not enabled for the environment.
    AuthMethodUnavailable { method: String, message: String },
    /// The redirect carried an error: `detail` is its text.
    AuthenticationFailed { detail: String, message: String },
    /// A response of the endpoint at `path` lacked `missing` (None: the envelope was wrong).
    MalformedResponse { path: String, missing: Option<String>, message: String },
    /// The grant exchange answered neither a session nor a TOTP step.
    InvalidGrantResponse { message: String },
    /// The userJwt cannot be read: `detail` says why.
    InvalidUserJwt { detail: String, message: String },
    /// The session store failed: `reason` says which failure it was (to choose what to tell
    /// the user), the message what to do. Nothing stored was deleted for it.
    SessionStorageFailure { reason: StorageFailureReason, message: String },
    /// Portal refused account abstraction: `detail` is its text.
    AccountAbstractionUnavailable { detail: String, message: String },
    /// Portal sends no more magic links now: wait before sending another, `retry_after` when
    /// Portal named the delay (its `Retry-After`). Nothing is resent.
    RateLimited { retry_after: Option<Duration>, message: String },
    /// No QR code can be made of this link.
    TotpQrUnavailable { message: String },
    /// HTTP 401: a spent or expired grant, a wrong TOTP code, an expired TOTP step. `reason`
    /// says what the user does next where the call can tell (a redirect's grant, a TOTP
    /// code); None for a call that cannot (`get_methods`, …).
    Unauthorized { reason: Option<UnauthorizedReason>, message: String },
    /// Another HTTP error status. `body` is the server's reason, for the developer (such as
    /// `{"error":"redirectUrl is not allow-listed"}`): the response body's first 512
    /// characters, bytes that are not UTF-8 as U+FFFD and control characters other than tab
    /// and line breaks escaped as `\xHH`. It may repeat what the request carried (the email
    /// address, the redirect URL, the environment id), which is never a secret; it is `None`
    /// for an empty body and for every answer to a request that carried a secret (the grant
    /// exchanges of `handle_redirect` and the browser sign-in, `verify_totp`), whose body
    /// might echo it. It is not part of the message. `retry_after` is the delay the server
    /// asked for before another attempt (its `Retry-After`, such as a 503's); the library
    /// never retries by itself.
    HttpStatus { status: u16, body: Option<String>, retry_after: Option<Duration>, message: String },
    /// No usable answer came: `reason` says why (an untrusted certificate, a proxy that wants
    /// credentials, a refused connection, a timeout…; docs/network.md), so that the app can
    /// tell "fix the settings" from "try again later". The message names the server and any
    /// proxy. Nothing was retried.
    Network { reason: NetworkFailureReason, message: String },
    /// The session, or another of its token, was invalidated: sign in again.
    SessionInvalidated { message: String },
    /// The call was cancelled before its request was sent.
    Cancelled { message: String },
    /// Browser or magic-link sign-in: its wait ended before the redirect came (POPUP_CLOSED);
    /// `reason` says how. Nothing was exchanged.
    SignInClosed { reason: SignInClosedReason, message: String },
    /// Browser sign-in is not possible (POPUP_UNAVAILABLE): `reason` says why. When the
    /// opener of [`set_browser_opener`](crate::PortalAuth::set_browser_opener) failed
    /// ([`OpenerFailed`](SignInUnavailableReason::OpenerFailed), or
    /// [`NoBrowser`](SignInUnavailableReason::NoBrowser) for its `NotFound`), `cause` is the
    /// error it returned, also [`source()`](std::error::Error::source). For `NoBrowser` from a
    /// browser sign-in, `url` is the authorize URL no browser could open, to show the user
    /// (to open elsewhere; the redirect can then be pasted into
    /// [`handle_redirect`](crate::PortalAuth::handle_redirect)); it is not part of the message.
    SignInUnavailable { reason: SignInUnavailableReason, message: String, url: Option<String>, cause: Option<Cause> },
    /// Browser sign-in: another one of this client is running (SIGN_IN_ALREADY_IN_PROGRESS).
    SignInInProgress { message: String },
    /// Browser sign-in: the browser came back without a usable answer (CALLBACK_INCOMPLETE).
    SignInCallbackIncomplete { message: String },
    /// A library fault, or a code this crate does not know yet.
    Internal { code: i32, message: String },
}

/// The application's own error behind an [`Error`]: what a browser opener returned. Two are
/// equal when they are the same error.
#[derive(Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    pub(crate) fn new(error: impl std::error::Error + Send + Sync + 'static) -> Cause {
        Cause(Arc::new(error))
    }

    /// The error itself.
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Cause) -> bool {
        // The data's addresses: a trait object's vtable address is not unique.
        std::ptr::eq(Arc::as_ptr(&self.0) as *const u8, Arc::as_ptr(&other.0) as *const u8)
    }
}

impl Eq for Cause {}

impl Error {
    /// The library's stable code (`PORTAL_AUTH_E_*`).
    pub fn code(&self) -> i32 {
        use Error::*;
        match self {
            InvalidArgument { .. } => sys::PORTAL_AUTH_E_INVALID_ARGUMENT,
            MagicLinkNotConfigured { .. } => sys::PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED,
            AuthMethodUnavailable { .. } => sys::PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE,
            AuthenticationFailed { .. } => sys::PORTAL_AUTH_E_AUTHENTICATION_FAILED,
            MalformedResponse { .. } => sys::PORTAL_AUTH_E_MALFORMED_RESPONSE,
            InvalidGrantResponse { .. } => sys::PORTAL_AUTH_E_INVALID_GRANT_RESPONSE,
            InvalidUserJwt { .. } => sys::PORTAL_AUTH_E_INVALID_USER_JWT,
            SessionStorageFailure { .. } => sys::PORTAL_AUTH_E_SESSION_STORAGE_FAILURE,
            AccountAbstractionUnavailable { .. } => sys::PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE,
            RateLimited { .. } => sys::PORTAL_AUTH_E_RATE_LIMITED,
            TotpQrUnavailable { .. } => sys::PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE,
            Unauthorized { .. } => sys::PORTAL_AUTH_E_UNAUTHORIZED,
            HttpStatus { .. } => sys::PORTAL_AUTH_E_HTTP_STATUS,
            Network { .. } => sys::PORTAL_AUTH_E_NETWORK,
            SessionInvalidated { .. } => sys::PORTAL_AUTH_E_SESSION_INVALIDATED,
            Cancelled { .. } => sys::PORTAL_AUTH_E_CANCELLED,
            SignInClosed { .. } => sys::PORTAL_AUTH_E_SIGN_IN_CLOSED,
            SignInUnavailable { .. } => sys::PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE,
            SignInInProgress { .. } => sys::PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS,
            SignInCallbackIncomplete { .. } => sys::PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE,
            Internal { code, .. } => *code,
        }
    }

    /// The library's message.
    pub fn message(&self) -> &str {
        use Error::*;
        match self {
            InvalidArgument { message, .. }
            | MagicLinkNotConfigured { message }
            | AuthMethodUnavailable { message, .. }
            | AuthenticationFailed { message, .. }
            | MalformedResponse { message, .. }
            | InvalidGrantResponse { message }
            | InvalidUserJwt { message, .. }
            | SessionStorageFailure { message, .. }
            | AccountAbstractionUnavailable { message, .. }
            | RateLimited { message, .. }
            | TotpQrUnavailable { message }
            | Unauthorized { message, .. }
            | HttpStatus { message, .. }
            | Network { message, .. }
            | SessionInvalidated { message }
            | Cancelled { message }
            | SignInClosed { message, .. }
            | SignInUnavailable { message, .. }
            | SignInInProgress { message }
            | SignInCallbackIncomplete { message }
            | Internal { message, .. } => message,
        }
    }

    /// The delay the server asked for before another attempt (its `Retry-After`), for
    /// `RateLimited` and `HttpStatus`; None when it named none, and for the other cases.
    ///
    /// ```
    /// use std::time::Duration;
    /// use portal_auth::Error;
    ///
    /// let error = Error::RateLimited { retry_after: Some(Duration::from_secs(120)), message: String::new() };
    /// assert_eq!(error.retry_after(), Some(Duration::from_secs(120)));
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::RateLimited { retry_after, .. } | Error::HttpStatus { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error a callback or an out-parameter lends.
    ///
    /// # Safety
    /// `error` is a valid, non-NULL error handle for the call.
    pub(crate) unsafe fn from_raw(error: *const sys::portal_auth_error) -> Error {
        let code = sys::portal_auth_error_code(error);
        let message = borrowed(sys::portal_auth_error_message(error)).unwrap_or_default();
        let text = |field: *const std::os::raw::c_char| borrowed(field).unwrap_or_default();
        Error::with_fields(code, message, Fields {
            name: text(sys::portal_auth_error_name(error)),
            method: text(sys::portal_auth_error_method(error)),
            detail: text(sys::portal_auth_error_detail(error)),
            path: text(sys::portal_auth_error_path(error)),
            missing: borrowed(sys::portal_auth_error_missing(error)),
            status: u16::try_from(sys::portal_auth_error_http_status(error)).unwrap_or(0),
            body: borrowed(sys::portal_auth_error_body(error)),
            reason: sys::portal_auth_error_reason(error),
            url: borrowed(sys::portal_auth_error_url(error)),
            // -1 (none) is no u64.
            retry_after: u64::try_from(sys::portal_auth_error_retry_after(error)).ok().map(Duration::from_secs),
        })
    }

    /// An argument whose value the C ABI's integer cannot hold, refused before any call.
    pub(crate) fn out_of_range(name: &str) -> Error {
        Error::InvalidArgument { name: name.to_string(), message: format!("Invalid argument: {} is out of range.", name) }
    }

    /// An error the library returned from a starting call, which has no error handle.
    pub(crate) fn from_code(code: i32) -> Error {
        let message = format!("The library refused the call (error {}).", code);
        Error::with_fields(code, message, Fields::default())
    }

    /// Frees an out-parameter error after reading it; `code` when there is none.
    ///
    /// # Safety
    /// `error` is NULL or an error the library gave the caller.
    pub(crate) unsafe fn take(code: i32, error: *mut sys::portal_auth_error) -> Error {
        if error.is_null() {
            return Error::from_code(code);
        }
        let taken = Error::from_raw(error);
        sys::portal_auth_error_free(error);
        taken
    }

    fn with_fields(code: i32, message: String, f: Fields) -> Error {
        match code {
            sys::PORTAL_AUTH_E_INVALID_ARGUMENT => Error::InvalidArgument { name: f.name, message },
            sys::PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED => Error::MagicLinkNotConfigured { message },
            sys::PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE => Error::AuthMethodUnavailable { method: f.method, message },
            sys::PORTAL_AUTH_E_AUTHENTICATION_FAILED => Error::AuthenticationFailed { detail: f.detail, message },
            sys::PORTAL_AUTH_E_MALFORMED_RESPONSE => {
                Error::MalformedResponse { path: f.path, missing: f.missing, message }
            }
            sys::PORTAL_AUTH_E_INVALID_GRANT_RESPONSE => Error::InvalidGrantResponse { message },
            sys::PORTAL_AUTH_E_INVALID_USER_JWT => Error::InvalidUserJwt { detail: f.detail, message },
            sys::PORTAL_AUTH_E_SESSION_STORAGE_FAILURE => {
                Error::SessionStorageFailure { reason: StorageFailureReason::from_raw(f.reason), message }
            }
            sys::PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE => {
                Error::AccountAbstractionUnavailable { detail: f.detail, message }
            }
            sys::PORTAL_AUTH_E_RATE_LIMITED => Error::RateLimited { retry_after: f.retry_after, message },
            sys::PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE => Error::TotpQrUnavailable { message },
            sys::PORTAL_AUTH_E_UNAUTHORIZED => Error::Unauthorized {
                reason: (f.reason != sys::PORTAL_AUTH_REASON_NONE).then(|| UnauthorizedReason::from_raw(f.reason)),
                message,
            },
            sys::PORTAL_AUTH_E_HTTP_STATUS => {
                Error::HttpStatus { status: f.status, body: f.body, retry_after: f.retry_after, message }
            }
            sys::PORTAL_AUTH_E_NETWORK => Error::Network { reason: NetworkFailureReason::from_raw(f.reason), message },
            sys::PORTAL_AUTH_E_SESSION_INVALIDATED => Error::SessionInvalidated { message },
            sys::PORTAL_AUTH_E_CANCELLED => Error::Cancelled { message },
            sys::PORTAL_AUTH_E_SIGN_IN_CLOSED => Error::SignInClosed { reason: SignInClosedReason::from_raw(f.reason), message },
            sys::PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE => {
                let reason = SignInUnavailableReason::from_raw(f.reason);
                Error::SignInUnavailable { reason, message, url: f.url, cause: None }
            }
            sys::PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS => Error::SignInInProgress { message },
            sys::PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE => Error::SignInCallbackIncomplete { message },
            code => Error::Internal { code, message },
        }
    }
}

/// The fields an error handle may carry; each case keeps its own.
#[derive(Default)]
struct Fields {
    name: String,
    method: String,
    detail: String,
    path: String,
    missing: Option<String>,
    status: u16,
    body: Option<String>,
    reason: sys::portal_auth_reason,
    url: Option<String>,
    retry_after: Option<Duration>,
}

/// Declares a reason enum from its table of `PORTAL_AUTH_REASON_*` constants, which
/// scripts/generate-tables.py writes into reasons.rs from the header: its variants, `Other`
/// for a number this crate does not know, the conversions, `Display` as the library's name of
/// the reason, and the library's sentence for the user. The names and the sentences are the
/// library's (portal_auth_reason_name, portal_auth_reason_user_message): this crate only
/// passes them on.
macro_rules! reason {
    ($(#[$doc:meta])* $name:ident { $($(#[$variant_doc:meta])* $variant:ident = $constant:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$variant_doc])* $variant,)*
            /// A reason of a newer library than this crate knows, by its number.
            Other(i32),
        }

        impl $name {
            fn from_raw(reason: sys::portal_auth_reason) -> $name {
                match reason {
                    $(sys::$constant => $name::$variant,)*
                    other => $name::Other(other),
                }
            }

            /// The C ABI's stable `PORTAL_AUTH_REASON_*` number.
            fn raw(self) -> sys::portal_auth_reason {
                match self {
                    $($name::$variant => sys::$constant,)*
                    $name::Other(other) => other,
                }
            }

            /// A one-line sentence for the user, in English, to show as it is: what to do
            /// next ("Your keyring is locked. Unlock it, then try again."). It never carries a
            /// detail of the error (those are in the error's message, for the developer);
            /// `Display` gives the reason's name, to key an app's own translations by. Empty
            /// for a number the library does not know.
            pub fn user_message(&self) -> &'static str {
                // SAFETY: a plain number in; static storage or NULL out.
                unsafe { static_text(sys::portal_auth_reason_user_message(self.raw())) }.unwrap_or_default()
            }
        }

        /// The reason's name as the C ABI spells it after `PORTAL_AUTH_REASON_`
        /// (`KEYRING_LOCKED`), to log or to key a translation by; the number, for one the
        /// library does not know. Width and alignment apply (`{:>16}`).
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // SAFETY: a plain number in; static storage or NULL out.
                match unsafe { static_text(sys::portal_auth_reason_name(self.raw())) } {
                    Some(name) => f.pad(name),
                    None => f.pad(&self.raw().to_string()),
                }
            }
        }
    };
}

include!("reasons.rs");

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {
    /// The application's error behind this one: what a failed browser opener returned
    /// (`SignInUnavailable`'s `cause`).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::SignInUnavailable { cause: Some(cause), .. } => Some(cause.error()),
            _ => None,
        }
    }
}
