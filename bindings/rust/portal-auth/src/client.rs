//! `PortalAuth`: a client of one auth environment, over the library's client handle.
use std::any::Any;
use std::ffi::CString;
use std::fmt;
use std::io;
use std::mem;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::call::{self, Call};
use crate::error::Error;
use crate::sys;
use crate::results::{internal, AuthMethods, Authenticated, SignInResult};
use crate::error::{Cause, SignInUnavailableReason};
use crate::session::{on_done, Session};
use crate::storage::Storage;
use crate::strings::{borrowed, c_string};

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

/// Opens an authorize URL in the user's browser: `(url, ephemeral)`, where `ephemeral` asks
/// for a private window if the opener can. Return once the browser is launched; an error
/// ends the sign-in as [`Error::SignInUnavailable`], whose `cause` is that error.
pub type BrowserOpener = Box<dyn Fn(&str, bool) -> io::Result<()> + Send + Sync>;

/// One opener installed on a client, and what it last failed with (for the sign-in's error).
struct Opener {
    open: BrowserOpener,
    failure: Mutex<Option<io::Error>>,
}

/// Every opener ever installed on a client: the library may call one until each sign-in
/// started with it has called back, which may be after it was replaced or the client dropped,
/// so each sign-in holds this list.
#[derive(Default)]
#[allow(clippy::vec_box)] // boxed: the library holds each opener's address while the list grows
struct Openers(Mutex<Vec<Box<Opener>>>);

impl Openers {
    #[allow(clippy::vec_box)]
    fn lock(&self) -> MutexGuard<'_, Vec<Box<Opener>>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The error an opener failed with, taken: one sign-in runs at a time per client.
    fn take_failure(&self) -> Option<io::Error> {
        self.lock().iter().find_map(|opener| opener.failure.lock().unwrap_or_else(|p| p.into_inner()).take())
    }
}

/// A client of one auth environment. Every method that touches the network or the keyring
/// returns a [`Call`], which has started already: `.await` it, or `.wait()` for it.
///
/// `PortalAuth` is `Send` and `Sync`: every function of the C ABI is safe to call from any
/// thread, dropping the client with calls in flight is safe (each still completes), and the
/// openers it keeps are behind a mutex.
///
/// ```
/// use portal_auth::{Options, PortalAuth};
///
/// let auth = PortalAuth::new(&Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback"))?;
/// // Not a sign-in redirect of this client: nothing is sent.
/// assert!(auth.handle_redirect("otherapp://x?token=t&authMethod=EMAIL_MAGIC_LINK").wait()?.is_none());
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub struct PortalAuth {
    raw: NonNull<sys::portal_auth>,
    openers: Arc<Openers>,
}

unsafe impl Send for PortalAuth {}
unsafe impl Sync for PortalAuth {}

impl fmt::Debug for PortalAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortalAuth").field("prefers_ephemeral_web_browser_session", &self.prefers_ephemeral_web_browser_session()).finish_non_exhaustive()
    }
}

impl PortalAuth {
    /// Checks the options and makes the client (no network or keyring I/O).
    pub fn new(options: &Options) -> Result<PortalAuth, Error> {
        let optional = |value: Option<&str>, name: &str| value.map(|value| c_string(value, name)).transpose();
        let environment = c_string(&options.auth_environment_id, "auth_environment_id")?;
        let redirect_url = c_string(&options.redirect_url, "redirect_url")?;
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
            let mut raw_options: sys::portal_auth_options = mem::zeroed();
            sys::portal_auth_options_init(&mut raw_options, mem::size_of::<sys::portal_auth_options>());
            raw_options.auth_environment_id = environment.as_ptr();
            raw_options.redirect_url = redirect_url.as_ptr();
            raw_options.api_host = pointer(&api_host);
            raw_options.magic_link_from_email = pointer(&from_email);
            raw_options.magic_link_template_id = pointer(&template_id);
            raw_options.is_account_abstracted = match options.is_account_abstracted {
                None => sys::PORTAL_AUTH_UNSET,
                Some(true) => sys::PORTAL_AUTH_TRUE,
                Some(false) => sys::PORTAL_AUTH_FALSE,
            };
            // A host store's callbacks: their user_data is the library's once it has read them.
            let (storage, host) = options.storage.to_raw();
            raw_options.storage = storage;
            raw_options.host_storage = host.as_ref().map_or(ptr::null(), |host| host as *const _);
            raw_options.connect_timeout_ms = connect_timeout_ms;
            raw_options.request_timeout_ms = request_timeout_ms;
            raw_options.application_id = pointer(&application_id);
            let (mut client, mut error) = (ptr::null_mut(), ptr::null_mut());
            let code = sys::portal_auth_new(&raw_options, &mut client, &mut error);
            match NonNull::new(client) {
                Some(raw) if code == sys::PORTAL_AUTH_OK => Ok(PortalAuth { raw, openers: Arc::default() }),
                _ => Err(Error::take(code, error)),
            }
        }
    }

    fn raw(&self) -> *mut sys::portal_auth {
        self.raw.as_ptr()
    }

    /// Which sign-in methods the environment has enabled, fetched from Portal.
    pub fn get_methods(&self) -> Call<AuthMethods> {
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_get_methods(self.raw(), Some(on_methods), user_data, out_call)
        })
    }

    /// Emails `email` (trimmed and lowercased) a sign-in link; the redirect it leads to
    /// completes with [`handle_redirect`](Self::handle_redirect). Needs a
    /// [`MagicLinkConfig`]; [`Error::RateLimited`] when Portal sends no more now.
    pub fn send_magic_link(&self, email: &str) -> Call<()> {
        let email = match c_string(email, "email") {
            Ok(email) => email,
            Err(error) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_send_magic_link(self.raw(), email.as_ptr(), Some(on_done), user_data, out_call)
        })
    }

    /// A fresh, single-use Google authorize URL, for a host that opens the browser and
    /// handles the redirect itself; [`Error::AuthMethodUnavailable`] without Google sign-in.
    pub fn login_with_google(&self) -> Call<String> {
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_login_with_google(self.raw(), Some(on_url), user_data, out_call)
        })
    }

    /// A fresh Apple authorize URL, as [`login_with_google`](Self::login_with_google).
    pub fn login_with_apple(&self) -> Call<String> {
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_login_with_apple(self.raw(), Some(on_url), user_data, out_call)
        })
    }

    /// Signs in with Google in the user's browser: opens a fresh authorize URL through the
    /// opener, waits (`timeout`; None or zero: the library's 300 s) for the browser to come
    /// back to the loopback redirect URL (`http://127.0.0.1:PORT/PATH`), and completes as
    /// `handle_redirect`. One browser sign-in runs at a time per client; cancelling (or
    /// dropping) the call ends the wait as [`Error::SignInClosed`].
    pub fn sign_in_with_google(&self, timeout: Option<Duration>) -> Call<SignInResult> {
        self.sign_in_with_browser(timeout, sys::portal_auth_sign_in_with_google)
    }

    /// Signs in with Apple in the user's browser, as [`sign_in_with_google`](Self::sign_in_with_google).
    pub fn sign_in_with_apple(&self, timeout: Option<Duration>) -> Call<SignInResult> {
        self.sign_in_with_browser(timeout, sys::portal_auth_sign_in_with_apple)
    }

    fn sign_in_with_browser(
        &self,
        timeout: Option<Duration>,
        begin: unsafe extern "C" fn(
            *mut sys::portal_auth,
            i32,
            sys::portal_auth_result_fn,
            *mut c_void,
            *mut *mut sys::portal_auth_call,
        ) -> sys::portal_auth_code,
    ) -> Call<SignInResult> {
        let timeout_ms = match milliseconds(timeout, "timeout") {
            Ok(timeout_ms) => timeout_ms,
            Err(error) => return call::failed(error),
        };
        let keep: Arc<dyn Any + Send + Sync> = Arc::clone(&self.openers) as _;
        call::start(Some(keep), |user_data, out_call| unsafe {
            begin(self.raw(), timeout_ms, Some(on_sign_in), user_data, out_call)
        })
    }

    /// Exchanges the grant a redirect URL carries (docs/protocol.md §3), persists the session
    /// and returns it, or the TOTP step that remains; `Ok(None)` when the URL is not a
    /// sign-in redirect of this client (nothing was sent). The same redirect handled again
    /// returns the same result with no request.
    pub fn handle_redirect(&self, url: &str) -> Call<Option<SignInResult>> {
        let url = match c_string(url, "url") {
            Ok(url) => url,
            Err(error) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_handle_redirect(self.raw(), url.as_ptr(), Some(on_result::<Option<SignInResult>>), user_data, out_call)
        })
    }

    /// Submits the user's code for a TOTP step (posted verbatim); the session, persisted. A
    /// wrong code is [`Error::Unauthorized`] and leaves the step usable.
    pub fn verify_totp(&self, code: &str, user_jwt: &str) -> Call<Authenticated> {
        let (code, user_jwt) = match (c_string(code, "code"), c_string(user_jwt, "user_jwt")) {
            (Ok(code), Ok(user_jwt)) => (code, user_jwt),
            (Err(error), _) | (_, Err(error)) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_verify_totp(
                self.raw(),
                code.as_ptr(),
                user_jwt.as_ptr(),
                Some(on_result::<Authenticated>),
                user_data,
                out_call,
            )
        })
    }

    /// The persisted session (no network); `Ok(None)` when none is stored, or when the
    /// stored value does not decode (it is then deleted).
    pub fn restore_session(&self) -> Call<Option<Session>> {
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_restore_session(self.raw(), Some(on_session), user_data, out_call)
        })
    }

    /// Deletes the persisted session and forgets the client's memory of its last grant.
    pub fn clear_persisted_session(&self) -> Call<()> {
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_clear_persisted_session(self.raw(), Some(on_done), user_data, out_call)
        })
    }

    /// The flag browser sign-ins pass to the opener as `ephemeral`.
    pub fn prefers_ephemeral_web_browser_session(&self) -> bool {
        unsafe { sys::portal_auth_prefers_ephemeral_web_browser_session(self.raw()) == sys::PORTAL_AUTH_TRUE }
    }

    /// Sets the flag browser sign-ins pass to the opener as `ephemeral` (true: ask for a
    /// private window).
    pub fn set_prefers_ephemeral_web_browser_session(&self, prefers: bool) {
        let value = if prefers { sys::PORTAL_AUTH_TRUE } else { sys::PORTAL_AUTH_FALSE };
        // Only a NULL client or another value fail: neither can happen here.
        let _ = unsafe { sys::portal_auth_set_prefers_ephemeral_web_browser_session(self.raw(), value) };
    }

    /// Installs the opener browser sign-ins use from now on; None restores the default
    /// (`$BROWSER`, else `xdg-open`). It is called on a thread the library starts for each
    /// sign-in: it may block (`Command::status()`), and may call this client and wait.
    pub fn set_browser_opener(&self, opener: Option<BrowserOpener>) {
        let mut openers = self.openers.lock();
        let user_data = match opener {
            None => ptr::null_mut(),
            Some(open) => {
                // Boxed: a thin pointer, stable while the list grows.
                let boxed = Box::new(Opener { open, failure: Mutex::new(None) });
                let user_data = &*boxed as *const Opener as *mut c_void;
                openers.push(boxed);
                user_data
            }
        };
        let callback: sys::portal_auth_opener_fn = if user_data.is_null() { None } else { Some(open_browser) };
        // Fails only for a NULL client.
        let _ = unsafe { sys::portal_auth_set_browser_opener(self.raw(), callback, user_data) };
    }
}

impl Drop for PortalAuth {
    fn drop(&mut self) {
        // Calls in flight still complete; sign-ins keep the openers alive.
        unsafe { sys::portal_auth_free(self.raw()) }
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
    result: *const sys::portal_auth_result,
    error: *const sys::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || SignInResult::read(result).and_then(T::from_result)));
}

unsafe extern "C" fn on_methods(
    user_data: *mut c_void,
    methods: *const sys::portal_auth_methods,
    error: *const sys::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || Ok(AuthMethods::read(methods))));
}

unsafe extern "C" fn on_url(user_data: *mut c_void, url: *const c_char, error: *const sys::portal_auth_error) {
    call::complete(user_data, || call::outcome(error, || borrowed(url).ok_or_else(|| internal("a URL"))));
}

unsafe extern "C" fn on_session(
    user_data: *mut c_void,
    session: *mut sys::portal_auth_session,
    error: *const sys::portal_auth_error,
) {
    call::complete(user_data, || call::outcome(error, || Ok(Session::retain(session))));
}

/// The callback of the browser sign-ins: as `handle_redirect`'s, and an opener's failure is
/// the error's cause.
unsafe extern "C" fn on_sign_in(
    user_data: *mut c_void,
    result: *const sys::portal_auth_result,
    error: *const sys::portal_auth_error,
) {
    call::complete_keeping(user_data, |keep| {
        let outcome = call::outcome(error, || SignInResult::read(result).and_then(SignInResult::from_result));
        match outcome {
            Err(Error::SignInUnavailable { reason: SignInUnavailableReason::OpenerFailed, message, .. }) => {
                let openers = keep.and_then(|keep| keep.downcast_ref::<Openers>());
                let cause = openers.and_then(Openers::take_failure).map(Cause::new);
                Err(Error::SignInUnavailable { reason: SignInUnavailableReason::OpenerFailed, message, cause })
            }
            other => other,
        }
    });
}

/// Calls a host's opener, keeping its error; a panic in it fails the sign-in instead of
/// unwinding into C.
unsafe extern "C" fn open_browser(user_data: *mut c_void, url: *const c_char, ephemeral: sys::portal_auth_bool) -> c_int {
    let opener = &*(user_data as *const Opener);
    let url = borrowed(url).unwrap_or_default();
    let failure = match catch_unwind(AssertUnwindSafe(|| (opener.open)(&url, ephemeral == sys::PORTAL_AUTH_TRUE))) {
        Ok(Ok(())) => return 0,
        Ok(Err(error)) => error,
        Err(_) => io::Error::new(io::ErrorKind::Other, "the browser opener panicked"),
    };
    *opener.failure.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(failure);
    1
}
