//! A client's configuration ([`Options`], [`MagicLinkConfig`]) and its C struct, which both
//! `portal_auth_new` and `portal_auth_forward_redirect` read.
use std::ffi::CString;
use std::mem;
use std::ptr;
use std::time::Duration;

use crate::error::Error;
use crate::storage::Storage;
use crate::strings::c_string;
use crate::sys;

/// The sender and template of magic-link emails.
///
/// ```
/// let config = portal_auth::MagicLinkConfig::new("hello@yourapp.example", "sign-in");
/// assert_eq!(config.template_id, "sign-in");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MagicLinkConfig {
    /// The address the emails come from.
    pub from_email: String,
    /// The email template, in Portal's dashboard.
    pub template_id: String,
}

impl MagicLinkConfig {
    /// The sender `from_email` and the template `template_id`.
    pub fn new(from_email: &str, template_id: &str) -> MagicLinkConfig {
        MagicLinkConfig { from_email: from_email.to_string(), template_id: template_id.to_string() }
    }
}

/// A client's configuration: [`Options::new`] (or `Default`, then the two required fields)
/// sets the defaults, and each field may then be changed. Fields are added over versions, so
/// the struct is not built literally outside the crate.
///
/// ```
/// use std::time::Duration;
/// use portal_auth::{MagicLinkConfig, Options, Storage};
///
/// let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
/// options.magic_link = Some(MagicLinkConfig::new("hello@yourapp.example", "sign-in"));
/// options.request_timeout = Some(Duration::from_secs(10));
/// assert_eq!(options.storage, Storage::Keyring);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// The auth environment's id (required: blank is [`Error::InvalidArgument`]).
    pub auth_environment_id: String,
    /// The redirect URL Portal sends the user back to (required), stored trimmed.
    pub redirect_url: String,
    /// None: "api.portalhq.io". A host name, or a base URL (`http://127.0.0.1:8790`).
    pub api_host: Option<String>,
    /// The sender and template of `send_magic_link`; None: no magic links.
    pub magic_link: Option<MagicLinkConfig>,
    /// Sent to Portal when not None.
    pub is_account_abstracted: Option<bool>,
    /// Where the session is kept: the desktop keyring by default.
    pub storage: Storage,
    /// None or zero: the library's default, 10 s.
    pub connect_timeout: Option<Duration>,
    /// None or zero: the library's default, 30 s.
    pub request_timeout: Option<Duration>,
    /// With [`Storage::Keyring`]: the application's reverse-DNS name, as its desktop file's
    /// (`com.example.App`). The keyring item is the application's own (an attribute beside
    /// the environment id, and its label): two applications of one environment never share
    /// a session, the instances of one do. None: no name, and the item is shared by every
    /// program of the environment that names none.
    pub application_id: Option<String>,
    /// With [`Storage::Keyring`]: how long to wait for the user to answer the keyring's
    /// dialog (an unlock, KeePassXC's access confirmation). None or zero: never show one;
    /// the call fails with
    /// [`KeyringNeedsConfirmation`](crate::StorageFailureReason::KeyringNeedsConfirmation)
    /// (or `KeyringLocked` for an unlock).
    pub keyring_prompt_timeout: Option<Duration>,
    /// A PEM file of the certificate authorities to trust in place of the system's (a
    /// company's own CA). It must be a readable file when the client is made, else
    /// [`Error::InvalidArgument`] names `ca_file`. None: `$CURL_CA_BUNDLE`, else
    /// `$SSL_CERT_FILE` and `$SSL_CERT_DIR`, else the system's (docs/network.md).
    pub ca_file: Option<String>,
}

impl Options {
    /// The options of environment `auth_environment_id` with `redirect_url`, and every
    /// other field at its default.
    pub fn new(auth_environment_id: &str, redirect_url: &str) -> Options {
        Options {
            auth_environment_id: auth_environment_id.to_string(),
            redirect_url: redirect_url.to_string(),
            ..Options::default()
        }
    }
}

impl Options {
    /// Runs `use_raw` with these options as the C struct, whose strings live for the call;
    /// an invalid argument (a NUL byte, a timeout out of range) before any is made. A host
    /// store's callbacks are made last: their `user_data` is the library's once it has read
    /// them (it releases it exactly once).
    pub(crate) fn with_raw<R>(&self, use_raw: impl FnOnce(&sys::portal_auth_options) -> R) -> Result<R, Error> {
        let optional = |value: Option<&str>, name: &str| value.map(|value| c_string(value, name)).transpose();
        let environment = c_string(&self.auth_environment_id, "auth_environment_id")?;
        let redirect_url = c_string(&self.redirect_url, "redirect_url")?;
        let api_host = optional(self.api_host.as_deref(), "api_host")?;
        let magic_link = self.magic_link.as_ref();
        let from_email = optional(magic_link.map(|m| m.from_email.as_str()), "magic_link_from_email")?;
        let template_id = optional(magic_link.map(|m| m.template_id.as_str()), "magic_link_template_id")?;
        let connect_timeout_ms = milliseconds(self.connect_timeout, "connect_timeout")?;
        let request_timeout_ms = milliseconds(self.request_timeout, "request_timeout")?;
        let application_id = optional(self.application_id.as_deref(), "application_id")?;
        let keyring_prompt_timeout_ms = milliseconds(self.keyring_prompt_timeout, "keyring_prompt_timeout")?;
        let ca_file = optional(self.ca_file.as_deref(), "ca_file")?;
        let file_storage_path = match &self.storage {
            Storage::File(folder) => optional(folder.as_deref(), "file_storage_path")?,
            _ => None,
        };
        let pointer = |value: &Option<CString>| value.as_ref().map_or(ptr::null(), |value| value.as_ptr());

        // SAFETY: options_init fills the struct this crate knows.
        let mut raw: sys::portal_auth_options = unsafe { mem::zeroed() };
        unsafe { sys::portal_auth_options_init(&mut raw, mem::size_of::<sys::portal_auth_options>()) };
        raw.auth_environment_id = environment.as_ptr();
        raw.redirect_url = redirect_url.as_ptr();
        raw.api_host = pointer(&api_host);
        raw.magic_link_from_email = pointer(&from_email);
        raw.magic_link_template_id = pointer(&template_id);
        raw.is_account_abstracted = match self.is_account_abstracted {
            None => sys::PORTAL_AUTH_UNSET,
            Some(true) => sys::PORTAL_AUTH_YES,
            Some(false) => sys::PORTAL_AUTH_NO,
        };
        raw.connect_timeout_ms = connect_timeout_ms;
        raw.request_timeout_ms = request_timeout_ms;
        raw.application_id = pointer(&application_id);
        raw.keyring_prompt_timeout_ms = keyring_prompt_timeout_ms;
        raw.file_storage_path = pointer(&file_storage_path);
        raw.ca_file = pointer(&ca_file);
        let (storage, host) = self.storage.to_raw();
        raw.storage = storage;
        raw.host_storage = host.as_ref().map_or(ptr::null(), |host| host as *const _);
        Ok(use_raw(&raw))
    }
}

/// A timeout as the C ABI's int32 of milliseconds, rounded up; None is 0. What zero means
/// (the library's default) is the library's to decide, so it goes through unchanged; only a
/// duration no int32 of milliseconds holds is refused.
pub(crate) fn milliseconds(timeout: Option<Duration>, name: &str) -> Result<i32, Error> {
    let nanoseconds = timeout.map_or(0, |timeout| timeout.as_nanos());
    i32::try_from((nanoseconds + 999_999) / 1_000_000).map_err(|_| Error::out_of_range(name))
}
