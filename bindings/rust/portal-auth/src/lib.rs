//! Portal Client Auth sign-in for Linux desktops: a safe Rust API over libportalauth's C ABI
//! (magic links, Google and Apple sign-in in the browser, redirects, TOTP, a session
//! persisted in the desktop keyring or a store of the application's, and redirects forwarded
//! to the running instance).
//!
//! Every call that touches the network or the keyring returns a [`Call`], which is a
//! `std::future::Future` completed by the library's callback (no runtime needed: any
//! executor polls it) and can also be waited for on the current thread. A call starts when
//! it is made, not when it is first polled:
//!
//! ```
//! use portal_auth::{Options, PortalAuth, Storage};
//!
//! let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
//! options.storage = Storage::Memory; // the desktop keyring by default
//! let auth = PortalAuth::new(&options)?;
//! match auth.restore_session().wait()? {
//!     Some(session) => println!("signed in as {}", session.end_user_id()),
//!     None => println!("not signed in"),
//! }
//! # Ok::<(), portal_auth::Error>(())
//! ```
//!
//! A magic link signs in in one call with a loopback redirect URL
//! ([`PortalAuth::sign_in_with_magic_link`]). With a custom scheme, the desktop starts the
//! app's URL handler with the redirect, which hands it to the running instance
//! ([`forward_redirect`]), listening with [`PortalAuth::listen_for_redirects`].
//!
//! Dropping a `Call` before it completes cancels it; a request already on the wire still
//! completes in the library and persists its session (docs/protocol.md §5).
//!
//! The crate's one dependency is `portal-auth-sys`, the C declarations and the linking,
//! re-exported as [`sys`]. A program finds the library at run time through its run path:
//! see that crate's documentation for the two lines of a build script that set it.
#![deny(missing_docs)]

mod call;
mod client;
mod error;
mod log;
mod options;
mod redirects;
mod results;
mod session;
mod storage;
mod strings;

pub use call::Call;
pub use client::{BrowserOpener, PortalAuth};
pub use error::{
    Cause, Error, NetworkFailureReason, SignInClosedReason, SignInUnavailableReason, StorageFailureReason,
    UnauthorizedReason,
};
pub use log::{set_log_handler, set_log_level, LogHandler, LogLevel};
pub use options::{MagicLinkConfig, Options};
pub use portal_auth_sys as sys;
pub use redirects::{forward_redirect, Forwarded, ForwardedRedirect, NextRedirect, Redirects};
pub use results::{
    normalize_totp_code, totp_qr_matrix, totp_qr_png, totp_qr_svg, totp_qr_terminal, totp_secret, AuthMethod, AuthMethods,
    Authenticated, SignInResult, TerminalColors, TotpRequired,
};
pub use session::Session;
pub use storage::{SessionStore, Storage};

/// The version of the library that was loaded, such as "0.1.0".
///
/// ```
/// assert_eq!(portal_auth::version(), portal_auth::sys::PORTAL_AUTH_VERSION_STRING);
/// ```
pub fn version() -> String {
    // SAFETY: static storage.
    unsafe { strings::borrowed(sys::portal_auth_version()) }.unwrap_or_default()
}

/// The version of the library that was loaded as one number, MAJOR * 10000 + MINOR * 100 +
/// PATCH, to compare with [`sys::PORTAL_AUTH_VERSION_NUMBER`], the version of the
/// declarations this crate was built with: a library of the same soname runs a program built
/// against any older version.
///
/// ```
/// assert!(portal_auth::version_number() >= portal_auth::sys::PORTAL_AUTH_VERSION_NUMBER);
/// ```
pub fn version_number() -> i32 {
    // SAFETY: no argument, a plain number.
    unsafe { sys::portal_auth_version_number() }
}
