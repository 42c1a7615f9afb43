//! Where a sign-in left the user, the enabled methods, and TOTP enrollment (the secret and
//! QR codes of an enrollment link, which need no network).
use std::fmt;
use std::os::raw::c_char;
use std::ptr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Error;
use crate::sys;
use crate::session::Session;
use crate::strings::{borrowed, c_string, owned};

/// The outcome of a redirect, a browser sign-in or a TOTP code.
#[derive(Debug, Clone)]
pub enum SignInResult {
    /// Signed in; the session is already persisted.
    Authenticated(Authenticated),
    /// Call [`PortalAuth::verify_totp`](crate::PortalAuth::verify_totp) with the user's code.
    TotpRequired(TotpRequired),
}

/// A signed-in user: the session is already persisted when this is returned.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// The user's session.
    pub session: Session,
    /// The Portal Client id, when the server sent it.
    pub client_id: Option<String>,
    /// None when the server did not say.
    pub is_account_abstracted: Option<bool>,
}

/// A TOTP step: call [`PortalAuth::verify_totp`](crate::PortalAuth::verify_totp) with the
/// user's code and `user_jwt`. `user_jwt` and `totp_link` are secrets: `Debug` redacts them.
/// A host may make one of a link it kept, to draw its QR code again:
///
/// ```
/// use portal_auth::TotpRequired;
///
/// let step = TotpRequired {
///     user_jwt: String::new(),
///     totp_link: Some("otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP".into()),
///     end_user_id: String::new(),
///     expires_at: None,
/// };
/// assert_eq!(step.totp_secret().as_deref(), Some("JBSWY3DPEHPK3PXP"));
/// assert!(step.qr_code_svg(4)?.starts_with("<svg"));
/// assert!(!format!("{:?}", step).contains("JBSW"));
/// # Ok::<(), portal_auth::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TotpRequired {
    /// The step's userJwt, for verify_totp. A secret.
    pub user_jwt: String,
    /// The enrollment link, on the user's first sign-in only.
    pub totp_link: Option<String>,
    /// Empty when the server did not send it.
    pub end_user_id: String,
    /// When the step expires: the userJwt's expiry, ten minutes after the sign-in (compare
    /// with `SystemTime::now()`); None when it carries none. A code verified later fails with
    /// [`Error::Unauthorized`] and
    /// [`TotpStepExpired`](crate::UnauthorizedReason::TotpStepExpired): sign in again.
    pub expires_at: Option<SystemTime>,
}

impl TotpRequired {
    /// The enrollment link's base32 secret, for entry by hand in an authenticator app.
    pub fn totp_secret(&self) -> Option<String> {
        self.totp_link.as_deref().and_then(totp_secret)
    }

    /// The enrollment link's QR code as a PNG (see [`totp_qr_png`]).
    pub fn qr_code_png(&self, scale: u32) -> Result<Vec<u8>, Error> {
        totp_qr_png(self.link()?, scale)
    }

    /// The enrollment link's QR code as SVG text (see [`totp_qr_svg`]).
    pub fn qr_code_svg(&self, scale: u32) -> Result<String, Error> {
        totp_qr_svg(self.link()?, scale)
    }

    /// The enrollment link's QR code for a terminal (see [`totp_qr_terminal`]).
    pub fn qr_code_terminal(&self, colors: TerminalColors) -> Result<String, Error> {
        totp_qr_terminal(self.link()?, colors)
    }

    fn link(&self) -> Result<&str, Error> {
        self.totp_link.as_deref().ok_or_else(|| Error::TotpQrUnavailable {
            message: "This TOTP step carries no enrollment link: the user has enrolled already.".to_string(),
        })
    }
}

impl fmt::Debug for TotpRequired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TotpRequired")
            .field("user_jwt", &"<redacted>")
            .field("totp_link", &self.totp_link.as_ref().map(|_| "<redacted>"))
            .field("end_user_id", &self.end_user_id)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl SignInResult {
    /// Reads a result a callback lends; None for NULL.
    ///
    /// # Safety
    /// `result` is NULL or valid for the call.
    pub(crate) unsafe fn read(result: *const sys::portal_auth_result) -> Result<Option<SignInResult>, Error> {
        if result.is_null() {
            return Ok(None);
        }
        match sys::portal_auth_result_kind(result) {
            sys::PORTAL_AUTH_RESULT_AUTHENTICATED => {
                let session = Session::retain(sys::portal_auth_result_session(result)).ok_or_else(|| internal("a session"))?;
                Ok(Some(SignInResult::Authenticated(Authenticated {
                    session,
                    client_id: borrowed(sys::portal_auth_result_client_id(result)),
                    is_account_abstracted: match sys::portal_auth_result_is_account_abstracted(result) {
                        sys::PORTAL_AUTH_YES => Some(true),
                        sys::PORTAL_AUTH_NO => Some(false),
                        _ => None,
                    },
                })))
            }
            sys::PORTAL_AUTH_RESULT_TOTP_REQUIRED => Ok(Some(SignInResult::TotpRequired(TotpRequired {
                user_jwt: borrowed(sys::portal_auth_result_user_jwt(result)).ok_or_else(|| internal("a userJwt"))?,
                totp_link: borrowed(sys::portal_auth_result_totp_link(result)),
                end_user_id: borrowed(sys::portal_auth_result_end_user_id(result)).unwrap_or_default(),
                expires_at: u64::try_from(sys::portal_auth_result_totp_expires_at(result))
                    .ok()
                    .filter(|&seconds| seconds > 0)
                    .map(|seconds| UNIX_EPOCH + Duration::from_secs(seconds)),
            }))),
            kind => Err(internal(&format!("a result of a known kind (not {})", kind))),
        }
    }
}

pub(crate) fn internal(what: &str) -> Error {
    Error::Internal { code: sys::PORTAL_AUTH_E_INTERNAL, message: format!("The library's answer lacked {}.", what) }
}

/// A sign-in method of an environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// A sign-in link sent by email.
    EmailMagicLink,
    /// Google sign-in.
    Google,
    /// Apple sign-in.
    Apple,
    /// A method this crate does not know yet, as the server spells it.
    Other(String),
}

impl AuthMethod {
    fn from_wire(text: String) -> AuthMethod {
        match text.as_str() {
            "EMAIL_MAGIC_LINK" => AuthMethod::EmailMagicLink,
            "GOOGLE" => AuthMethod::Google,
            "APPLE" => AuthMethod::Apple,
            _ => AuthMethod::Other(text),
        }
    }
}

/// What `get_methods` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthMethods {
    /// The methods the environment has enabled.
    pub allowed_auth_methods: Vec<AuthMethod>,
    /// Whether Portal suggests creating a wallet for a new user.
    pub auto_create_wallet: bool,
}

impl AuthMethods {
    /// # Safety
    /// `methods` is valid for the call.
    pub(crate) unsafe fn read(methods: *const sys::portal_auth_methods) -> AuthMethods {
        let count = sys::portal_auth_methods_count(methods);
        AuthMethods {
            allowed_auth_methods: (0..count)
                .filter_map(|index| borrowed(sys::portal_auth_methods_at(methods, index)))
                .map(AuthMethod::from_wire)
                .collect(),
            auto_create_wallet: sys::portal_auth_methods_auto_create_wallet(methods) == sys::PORTAL_AUTH_TRUE,
        }
    }
}

/// The terminal a QR code is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalColors {
    /// Light text on a dark background, as most terminals.
    LightOnDark,
    /// Dark text on a light background.
    DarkOnLight,
}

/// The base32 secret of an enrollment link, for entry by hand in an authenticator app; None
/// when it carries no valid secret. A secret: show it to the user, never log it.
///
/// ```
/// let link = "otpauth://totp/Portal:ada@example.com?secret=jbswy3dpehpk3pxp";
/// assert_eq!(portal_auth::totp_secret(link).as_deref(), Some("JBSWY3DPEHPK3PXP"));
/// assert_eq!(portal_auth::totp_secret("https://example.com/"), None);
/// ```
pub fn totp_secret(otpauth_url: &str) -> Option<String> {
    let link = c_string(otpauth_url, "otpauth_url").ok()?;
    let mut secret = ptr::null_mut();
    // SAFETY: borrowed input; the out-string is ours to free (NULL on failure).
    unsafe {
        sys::portal_auth_totp_secret(link.as_ptr(), &mut secret, ptr::null_mut());
        owned(secret)
    }
}

/// What the user typed for a TOTP code, tidied for
/// [`PortalAuth::verify_totp`](crate::PortalAuth::verify_totp): the six digits once the spaces
/// and dashes authenticator apps show (`"123 456"`, `"123-456"`) are removed, or None when
/// anything else is left or not exactly six digits remain (ask the user again; nothing was
/// sent). The library decides (portal_auth_totp_code_normalize); `verify_totp` itself posts
/// exactly what it is given.
///
/// ```
/// use portal_auth::normalize_totp_code;
///
/// assert_eq!(normalize_totp_code("123 456").as_deref(), Some("123456"));
/// assert_eq!(normalize_totp_code("12345"), None);
/// ```
pub fn normalize_totp_code(typed: &str) -> Option<String> {
    let typed = c_string(typed, "typed").ok()?; // a NUL byte: not a code
    let mut code: [c_char; sys::PORTAL_AUTH_TOTP_CODE_SIZE] = [0; sys::PORTAL_AUTH_TOTP_CODE_SIZE];
    // SAFETY: borrowed input; the buffer is the PORTAL_AUTH_TOTP_CODE_SIZE bytes the library
    // writes, NUL-terminated.
    unsafe {
        if sys::portal_auth_totp_code_normalize(typed.as_ptr(), code.as_mut_ptr()) != sys::PORTAL_AUTH_TRUE {
            return None;
        }
        borrowed(code.as_ptr())
    }
}

/// The QR code of an enrollment link as a PNG: `scale` pixels a module (10 is usual),
/// `(modules + 8) × scale` pixels square, black on white. [`Error::TotpQrUnavailable`] for
/// an unusable link, and for a scale of 0 or a side over 8192 pixels, its message giving the
/// range.
///
/// ```
/// let png = portal_auth::totp_qr_png("otpauth://totp/Portal:ada?secret=JBSWY3DPEHPK3PXP", 10)?;
/// assert!(png.starts_with(b"\x89PNG"));
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub fn totp_qr_png(otpauth_url: &str, scale: u32) -> Result<Vec<u8>, Error> {
    let link = c_string(otpauth_url, "otpauth_url")?;
    let scale = c_scale(scale);
    let (mut png, mut length, mut error) = (ptr::null_mut(), 0usize, ptr::null_mut());
    // SAFETY: the buffer is ours to copy and free.
    unsafe {
        let code = sys::portal_auth_totp_qr_png(link.as_ptr(), scale, &mut png, &mut length, &mut error);
        if code != sys::PORTAL_AUTH_OK {
            return Err(Error::take(code, error));
        }
        let bytes = std::slice::from_raw_parts(png, length).to_vec();
        sys::portal_auth_bytes_free(png);
        Ok(bytes)
    }
}

/// The QR code of an enrollment link as SVG text, `scale` pixels a module.
pub fn totp_qr_svg(otpauth_url: &str, scale: u32) -> Result<String, Error> {
    let scale = c_scale(scale);
    text_out("otpauth_url", otpauth_url, |link, out, error| unsafe { sys::portal_auth_totp_qr_svg(link, scale, out, error) })
}

/// The modules of an enrollment link's QR code (the code [`totp_qr_png`] draws), for a toolkit
/// that paints it itself, crisp at any scale: rows from the top, `true` where a module is
/// dark, the 4-module quiet zone included. [`Error::TotpQrUnavailable`] for an unusable link.
///
/// ```
/// let modules = portal_auth::totp_qr_matrix("otpauth://totp/Portal:ada?secret=JBSWY3DPEHPK3PXP")?;
/// assert!(modules.iter().all(|row| row.len() == modules.len()) && !modules[0].contains(&true));
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub fn totp_qr_matrix(otpauth_url: &str) -> Result<Vec<Vec<bool>>, Error> {
    let link = c_string(otpauth_url, "otpauth_url")?;
    let (mut side, mut packed, mut length, mut error) = (0i32, ptr::null_mut(), 0usize, ptr::null_mut());
    // SAFETY: the buffer is ours to read and free; its rows are (side + 7) / 8 bytes each.
    unsafe {
        let code = sys::portal_auth_totp_qr_matrix(link.as_ptr(), &mut side, &mut packed, &mut length, &mut error);
        if code != sys::PORTAL_AUTH_OK {
            return Err(Error::take(code, error));
        }
        let bytes = std::slice::from_raw_parts(packed, length);
        let side = usize::try_from(side).unwrap_or(0);
        let stride = (side + 7) / 8;
        let rows = (0..side)
            .map(|row| (0..side).map(|column| bytes[row * stride + column / 8] & (0x80 >> (column % 8)) != 0).collect())
            .collect();
        sys::portal_auth_bytes_free(packed);
        Ok(rows)
    }
}

/// A scale as the C ABI's int32 of whole pixels. The library decides the range: a scale
/// beyond int32 is passed as its largest, which it refuses too, with the range.
fn c_scale(scale: u32) -> i32 {
    i32::try_from(scale).unwrap_or(i32::MAX)
}

/// The QR code of an enrollment link as half blocks for a terminal, each line ending in "\n".
pub fn totp_qr_terminal(otpauth_url: &str, colors: TerminalColors) -> Result<String, Error> {
    let colors = match colors {
        TerminalColors::LightOnDark => sys::PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK,
        TerminalColors::DarkOnLight => sys::PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT,
    };
    text_out("otpauth_url", otpauth_url, |link, out, error| unsafe {
        sys::portal_auth_totp_qr_terminal(link, colors, out, error)
    })
}

/// Calls a function that makes a string from `input`, or fails with an error.
fn text_out(
    name: &str,
    input: &str,
    make: impl FnOnce(*const c_char, *mut *mut c_char, *mut *mut sys::portal_auth_error) -> sys::portal_auth_code,
) -> Result<String, Error> {
    let input = c_string(input, name)?;
    let (mut text, mut error) = (ptr::null_mut(), ptr::null_mut());
    let code = make(input.as_ptr(), &mut text, &mut error);
    // SAFETY: the out-parameters are the library's, for the caller to free.
    unsafe {
        if code != sys::PORTAL_AUTH_OK {
            owned(text);
            return Err(Error::take(code, error));
        }
        owned(text).ok_or_else(|| internal("a text"))
    }
}
