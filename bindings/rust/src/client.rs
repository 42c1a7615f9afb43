//! `PortalAuth`: a client of one auth environment, over the library's client handle.
use std::any::Any;
use std::ffi::CString;
use std::io;
use std::mem;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::call::{self, Call};
use crate::error::Error;
use crate::ffi;
use crate::results::{internal, AuthMethods, Authenticated, SignInResult};
use crate::session::{on_done, Session};
use crate::strings::{borrowed, c_string};

/// The sender and template of magic-link emails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagicLinkConfig {
    pub from_email: String,
    pub template_id: String,
}

/// Where a client keeps the session of its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// The desktop keyring (Secret Service), the default.
    Keyring,
    /// This process only, forgotten at exit.
    Memory,
}

/// A client's configuration. `Options::new(environment, redirect_url)` has the defaults.
#[derive(Debug, Clone)]
pub struct Options {
    pub auth_environment_id: String,
    pub redirect_url: String,
    /// None: "api.portalhq.io". A host name, or a base URL (`http://127.0.0.1:8790`).
    pub api_host: Option<String>,
    pub magic_link: Option<MagicLinkConfig>,
    pub is_account_abstracted: Option<bool>,
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
}

impl Options {
    pub fn new(auth_environment_id: &str, redirect_url: &str) -> Options {
        Options {
            auth_environment_id: auth_environment_id.to_string(),
            redirect_url: redirect_url.to_string(),
            api_host: None,
            magic_link: None,
            is_account_abstracted: None,
            storage: Storage::Keyring,
            connect_timeout: None,
            request_timeout: None,
            application_id: None,
        }
    }
}

/// Opens an authorize URL in the user's browser: `(url, ephemeral)`, where `ephemeral` asks
/// for a private window if the opener can. Return once the browser is launched; an error
/// ends the sign-in as [`Error::SignInUnavailable`].
pub type BrowserOpener = Box<dyn Fn(&str, bool) -> io::Result<()> + Send + Sync>;

/// Every opener ever installed on a client: the library may call one until each sign-in
/// started with it has called back, which may be after it was replaced or the client dropped,
/// so each sign-in holds this list.
type Openers = Arc<Mutex<Vec<Box<BrowserOpener>>>>;

/// A client of one auth environment. Every method that touches the network or the keyring
/// returns a [`Call`]: `.await` it, or `.wait()` for it.
///
/// `PortalAuth` is `Send` and `Sync`: every function of the C ABI is safe to call from any
/// thread, dropping the client with calls in flight is safe (each still completes), and the
/// openers it keeps are behind a mutex.
pub struct PortalAuth {
    raw: NonNull<ffi::portal_auth>,
    openers: Openers,
}

unsafe impl Send for PortalAuth {}
unsafe impl Sync for PortalAuth {}

impl PortalAuth {
    /// Checks the options and makes the client (no network or keyring I/O).
    pub fn new(options: &Options) -> Result<PortalAuth, Error> {
        let text = |value: &str, name: &str| c_string(value, name);
        let optional = |value: Option<&str>, name: &str| value.map(|value| text(value, name)).transpose();
        let environment = text(&options.auth_environment_id, "auth_environment_id")?;
        let redirect_url = text(&options.redirect_url, "redirect_url")?;
        let api_host = optional(options.api_host.as_deref(), "api_host")?;
        let magic_link = options.magic_link.as_ref();
        let from_email = optional(magic_link.map(|m| m.from_email.as_str()), "magic_link_from_email")?;
        let template_id = optional(magic_link.map(|m| m.template_id.as_str()), "magic_link_template_id")?;
        let connect_timeout_ms = milliseconds(options.connect_timeout, "connect_timeout")?;
        let request_timeout_ms = milliseconds(options.request_timeout, "request_timeout")?;
        let application_id = optional(options.application_id.as_deref(), "application_id")?;
        let pointer = |value: &Option<CString>| value.as_ref().map_or(ptr::null(), |value| value.as_ptr());

        // SAFETY: options_init fills the struct this crate knows; every string outlives the
        // call, which copies what it keeps.
        unsafe {
            let mut raw_options: ffi::portal_auth_options = mem::zeroed();
            ffi::portal_auth_options_init(&mut raw_options, mem::size_of::<ffi::portal_auth_options>());
            raw_options.auth_environment_id = environment.as_ptr();
            raw_options.redirect_url = redirect_url.as_ptr();
            raw_options.api_host = pointer(&api_host);
            raw_options.magic_link_from_email = pointer(&from_email);
            raw_options.magic_link_template_id = pointer(&template_id);
            raw_options.is_account_abstracted = match options.is_account_abstracted {
                None => ffi::PORTAL_AUTH_UNSET,
                Some(true) => ffi::PORTAL_AUTH_TRUE,
                Some(false) => ffi::PORTAL_AUTH_FALSE,
            };
            raw_options.storage = match options.storage {
                Storage::Keyring => ffi::PORTAL_AUTH_STORAGE_KEYRING,
                Storage::Memory => ffi::PORTAL_AUTH_STORAGE_MEMORY,
            };
            raw_options.connect_timeout_ms = connect_timeout_ms;
            raw_options.request_timeout_ms = request_timeout_ms;
            raw_options.application_id = pointer(&application_id);
            let (mut client, mut error) = (ptr::null_mut(), ptr::null_mut());
            let code = ffi::portal_auth_new(&raw_options, &mut client, &mut error);
            match NonNull::new(client) {
                Some(raw) if code == ffi::PORTAL_AUTH_OK => Ok(PortalAuth { raw, openers: Arc::default() }),
                _ => Err(Error::take(code, error)),
            }
        }
    }

    fn raw(&self) -> *mut ffi::portal_auth {
        self.raw.as_ptr()
    }

    /// Which sign-in methods the environment has enabled.
    pub fn get_methods(&self) -> Call<AuthMethods> {
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_get_methods(self.raw(), Some(on_methods), user_data, out_call)
        })
    }

    /// Emails the user a sign-in link (needs a [`MagicLinkConfig`]).
    pub fn send_magic_link(&self, email: &str) -> Call<()> {
        let email = match c_string(email, "email") {
            Ok(email) => email,
            Err(error) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_send_magic_link(self.raw(), email.as_ptr(), Some(on_done), user_data, out_call)
        })
    }

    /// A fresh Google authorize URL, for a host that opens the browser and handles the
    /// redirect itself.
    pub fn login_with_google(&self) -> Call<String> {
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_login_with_google(self.raw(), Some(on_url), user_data, out_call)
        })
    }

    /// A fresh Apple authorize URL.
    pub fn login_with_apple(&self) -> Call<String> {
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_login_with_apple(self.raw(), Some(on_url), user_data, out_call)
        })
    }

    /// Signs in with Google in the user's browser: opens a fresh authorize URL through the
    /// opener, waits (`timeout`; None or zero: the library's 300 s) for the browser to come back to the loopback
    /// redirect URL (`http://127.0.0.1:PORT/PATH`), and completes as `handle_redirect`.
    pub fn sign_in_with_google(&self, timeout: Option<Duration>) -> Call<SignInResult> {
        self.sign_in_with_browser(timeout, ffi::portal_auth_sign_in_with_google)
    }

    /// Signs in with Apple in the user's browser, as [`sign_in_with_google`](Self::sign_in_with_google).
    pub fn sign_in_with_apple(&self, timeout: Option<Duration>) -> Call<SignInResult> {
        self.sign_in_with_browser(timeout, ffi::portal_auth_sign_in_with_apple)
    }

    fn sign_in_with_browser(
        &self,
        timeout: Option<Duration>,
        begin: unsafe extern "C" fn(
            *mut ffi::portal_auth,
            i32,
            ffi::portal_auth_result_fn,
            *mut c_void,
            *mut *mut ffi::portal_auth_call,
        ) -> ffi::portal_auth_code,
    ) -> Call<SignInResult> {
        let timeout_ms = match milliseconds(timeout, "timeout") {
            Ok(timeout_ms) => timeout_ms,
            Err(error) => return call::failed(error),
        };
        let keep: Arc<dyn Any + Send + Sync> = Arc::clone(&self.openers) as _;
        call::start(Some(keep), |user_data, out_call| unsafe {
            begin(self.raw(), timeout_ms, Some(on_result::<SignInResult>), user_data, out_call)
        })
    }

    /// Exchanges the grant a redirect URL carries (docs/protocol.md §3); `Ok(None)` when the
    /// URL is not a sign-in redirect of this client (nothing was sent).
    pub fn handle_redirect(&self, url: &str) -> Call<Option<SignInResult>> {
        let url = match c_string(url, "url") {
            Ok(url) => url,
            Err(error) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_handle_redirect(self.raw(), url.as_ptr(), Some(on_result::<Option<SignInResult>>), user_data, out_call)
        })
    }

    /// Submits the user's code for a TOTP step (posted verbatim).
    pub fn verify_totp(&self, code: &str, user_jwt: &str) -> Call<Authenticated> {
        let (code, user_jwt) = match (c_string(code, "code"), c_string(user_jwt, "user_jwt")) {
            (Ok(code), Ok(user_jwt)) => (code, user_jwt),
            (Err(error), _) | (_, Err(error)) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_verify_totp(
                self.raw(),
                code.as_ptr(),
                user_jwt.as_ptr(),
                Some(on_result::<Authenticated>),
                user_data,
                out_call,
            )
        })
    }

    /// The persisted session (no network); `Ok(None)` when none is stored.
    pub fn restore_session(&self) -> Call<Option<Session>> {
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_restore_session(self.raw(), Some(on_session), user_data, out_call)
        })
    }

    /// Deletes the persisted session and forgets the client's memory of its last grant.
    pub fn clear_persisted_session(&self) -> Call<()> {
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_clear_persisted_session(self.raw(), Some(on_done), user_data, out_call)
        })
    }

    /// The flag browser sign-ins pass to the opener as `ephemeral`.
    pub fn prefers_ephemeral_web_browser_session(&self) -> bool {
        unsafe { ffi::portal_auth_prefers_ephemeral_web_browser_session(self.raw()) == ffi::PORTAL_AUTH_TRUE }
    }

    pub fn set_prefers_ephemeral_web_browser_session(&self, prefers: bool) {
        let value = if prefers { ffi::PORTAL_AUTH_TRUE } else { ffi::PORTAL_AUTH_FALSE };
        // Only a NULL client or another value fail: neither can happen here.
        let _ = unsafe { ffi::portal_auth_set_prefers_ephemeral_web_browser_session(self.raw(), value) };
    }

    /// Installs the opener browser sign-ins use from now on; None restores the default
    /// (`$BROWSER`, else `xdg-open`). It is called on a thread the library starts for each
    /// sign-in: it may block (`Command::status()`), and may call this client and wait.
    pub fn set_browser_opener(&self, opener: Option<BrowserOpener>) {
        let mut openers = self.openers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let user_data = match opener {
            None => ptr::null_mut(),
            Some(opener) => {
                // Boxed again: a thin pointer, stable while the list grows.
                let boxed = Box::new(opener);
                let user_data = &*boxed as *const BrowserOpener as *mut c_void;
                openers.push(boxed);
                user_data
            }
        };
        let callback: ffi::portal_auth_opener_fn = if user_data.is_null() { None } else { Some(open_browser) };
        // Fails only for a NULL client.
        let _ = unsafe { ffi::portal_auth_set_browser_opener(self.raw(), callback, user_data) };
    }
}

impl Drop for PortalAuth {
    fn drop(&mut self) {
        // Calls in flight still complete; sign-ins keep the openers alive.
        unsafe { ffi::portal_auth_free(self.raw()) }
    }
}

/// A timeout as the C ABI's int32 of milliseconds, rounded up; None is 0. What zero means
/// (the library's default) is the library's to decide, so it goes through unchanged; only a
/// duration no int32 of milliseconds holds is refused.
fn milliseconds(timeout: Option<Duration>, name: &str) -> Result<i32, Error> {
    let nanoseconds = timeout.map_or(0, |timeout| timeout.as_nanos());
    i32::try_from((nanoseconds + 999_999) / 1_000_000).map_err(|_| Error::out_of_range(name))
}

/// The result callback's outcome as each call wants it.
trait FromResult: Sized {
    fn from_result(result: Option<SignInResult>) -> Result<Self, Error>;
}

impl FromResult for Option<SignInResult> {
    fn from_result(result: Option<SignInResult>) -> Result<Self, Error> {
        Ok(result)
    }
}

impl FromResult for SignInResult {
    fn from_result(result: Option<SignInResult>) -> Result<Self, Error> {
        result.ok_or_else(|| internal("a result"))
    }
}

impl FromResult for Authenticated {
    fn from_result(result: Option<SignInResult>) -> Result<Self, Error> {
        match result {
            Some(SignInResult::Authenticated(authenticated)) => Ok(authenticated),
            _ => Err(internal("a session")),
        }
    }
}

unsafe extern "C" fn on_result<T: FromResult>(
    user_data: *mut c_void,
    result: *const ffi::portal_auth_result,
    error: *const ffi::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || SignInResult::read(result).and_then(T::from_result)));
}

unsafe extern "C" fn on_methods(
    user_data: *mut c_void,
    methods: *const ffi::portal_auth_methods,
    error: *const ffi::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || Ok(AuthMethods::read(methods))));
}

unsafe extern "C" fn on_url(user_data: *mut c_void, url: *const c_char, error: *const ffi::portal_auth_error) {
    call::complete(user_data, || call::outcome(error, || borrowed(url).ok_or_else(|| internal("a URL"))));
}

unsafe extern "C" fn on_session(
    user_data: *mut c_void,
    session: *mut ffi::portal_auth_session,
    error: *const ffi::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || Ok(Session::retain(session))));
}

/// Calls a host's opener; a panic in it fails the sign-in instead of unwinding into C.
unsafe extern "C" fn open_browser(user_data: *mut c_void, url: *const c_char, ephemeral: ffi::portal_auth_bool) -> c_int {
    let opener = &*(user_data as *const BrowserOpener);
    let url = borrowed(url).unwrap_or_default();
    match catch_unwind(AssertUnwindSafe(|| opener(&url, ephemeral == ffi::PORTAL_AUTH_TRUE))) {
        Ok(Ok(())) => 0,
        _ => 1,
    }
}
