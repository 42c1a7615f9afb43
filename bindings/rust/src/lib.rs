//! Portal Client Auth sign-in for Linux desktops: a safe Rust API over libportalauth's C ABI
//! (magic links, Google and Apple sign-in in the browser, redirects, TOTP, a persisted
//! session in the desktop keyring).
//!
//! Every call that touches the network or the keyring returns a [`Call`], which is a
//! `std::future::Future` driven by the library's callback (no runtime needed: any executor
//! polls it) and can also be waited for on the current thread:
//!
//! ```no_run
//! use portal_auth::{Options, PortalAuth, SignInResult};
//!
//! let auth = PortalAuth::new(&Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback"))?;
//! if let Some(session) = auth.restore_session().wait()? {
//!     println!("signed in as {}", session.end_user_id());
//! }
//! # Ok::<(), portal_auth::Error>(())
//! ```
//!
//! Dropping a `Call` before it completes cancels it; a request already on the wire still
//! completes in the library and persists its session (docs/protocol.md §5).

mod call;
mod client;
mod error;
pub mod ffi;
mod results;
mod session;
mod strings;

pub use call::Call;
pub use client::{BrowserOpener, MagicLinkConfig, Options, PortalAuth, Storage};
pub use error::{Error, SignInUnavailableReason, StorageFailureReason};
pub use results::{
    totp_qr_png, totp_qr_svg, totp_qr_terminal, totp_secret, AuthMethod, AuthMethods, Authenticated, SignInResult,
    TerminalColors, TotpRequired,
};
pub use session::Session;

/// The library's version, e.g. "0.1.0".
pub fn version() -> String {
    // SAFETY: static storage.
    unsafe { strings::borrowed(ffi::portal_auth_version()) }.unwrap_or_default()
}
