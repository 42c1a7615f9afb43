//! `PortalAuth`: a client of one auth environment, over the library's client handle.
use std::any::Any;
use std::fmt;
use std::io;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::call::{self, Call};
use crate::error::{Cause, Error, SignInUnavailableReason};
use crate::options::{milliseconds, Options};
use crate::redirects::{on_redirect, Redirects, RedirectsState};
use crate::results::{internal, AuthMethods, Authenticated, SignInResult};
use crate::session::{on_done, Session};
use crate::strings::{borrowed, c_string};
use crate::sys;

/// Opens an authorize URL in the user's browser: `(url, ephemeral)`, where `ephemeral` asks
/// for a private window if the opener can. Return once the browser is launched; an error
/// ends the sign-in at once as [`Error::SignInUnavailable`], whose `cause` is that error
/// (also its [`source()`](std::error::Error::source)):
/// - an error of kind [`io::ErrorKind::NotFound`] says there is no browser to open (a
///   terminal over SSH, no desktop; `Command::status()` gives it when the program is not
///   installed): the reason is [`NoBrowser`](SignInUnavailableReason::NoBrowser), and the
///   error's `url` is the URL, to show the user;
/// - any other error (or a panic) is [`OpenerFailed`](SignInUnavailableReason::OpenerFailed).
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
        options.with_raw(|raw_options| {
            let (mut client, mut error) = (ptr::null_mut(), ptr::null_mut());
            // SAFETY: the options are valid for the call, which copies what it keeps.
            let code = unsafe { sys::portal_auth_new(raw_options, &mut client, &mut error) };
            match NonNull::new(client) {
                Some(raw) if code == sys::PORTAL_AUTH_OK => Ok(PortalAuth { raw, openers: Arc::default() }),
                // SAFETY: the error handle is the caller's.
                _ => Err(unsafe { Error::take(code, error) }),
            }
        })?
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
    /// [`MagicLinkConfig`](crate::MagicLinkConfig); [`Error::RateLimited`] when Portal sends no more now.
    pub fn send_magic_link(&self, email: &str) -> Call<()> {
        let email = match c_string(email, "email") {
            Ok(email) => email,
            Err(error) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_send_magic_link(self.raw(), email.as_ptr(), Some(on_done), user_data, out_call)
        })
    }

    /// Signs in by magic link with no URL to paste, in one call: emails `email` the link
    /// with the loopback redirect URL Portal allow-lists (`http://127.0.0.1:PORT/PATH`),
    /// waits there (`timeout`; None or zero: the library's 15 minutes) for the browser the
    /// user opens the email in, and completes as `handle_redirect`, TOTP step included; the
    /// browser is then told the user can go back to the app.
    ///
    /// One sign-in (this or a browser one) runs at a time per client
    /// ([`Error::SignInInProgress`]). A redirect URL that is not loopback, or a port in use,
    /// is [`Error::SignInUnavailable`] before any email is sent: then
    /// [`send_magic_link`](Self::send_magic_link) and a pasted or forwarded link are the
    /// way. While it waits, [`handle_redirect`](Self::handle_redirect) with the email's link
    /// (pasted by a user who opened it on another device, or forwarded) completes it too,
    /// with the same outcome, exchanged once. A timeout, [`Call::cancel`] or dropping the
    /// call end the wait as [`Error::SignInClosed`], with nothing exchanged.
    ///
    /// ```
    /// use portal_auth::{Error, MagicLinkConfig, Options, PortalAuth, SignInUnavailableReason, Storage};
    ///
    /// let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
    /// options.magic_link = Some(MagicLinkConfig::new("hello@yourapp.example", "sign-in"));
    /// options.storage = Storage::Memory;
    /// let auth = PortalAuth::new(&options)?;
    /// // A custom scheme: no listener can take the redirect, and no email is sent.
    /// match auth.sign_in_with_magic_link("user@example.com", None).wait() {
    ///     // send_magic_link instead, then handle_redirect with the link pasted or forwarded
    ///     Err(Error::SignInUnavailable { reason: SignInUnavailableReason::RedirectNotLoopback, .. }) => {}
    ///     other => panic!("{:?}", other),
    /// }
    /// # Ok::<(), portal_auth::Error>(())
    /// ```
    pub fn sign_in_with_magic_link(&self, email: &str, timeout: Option<Duration>) -> Call<SignInResult> {
        let (email, timeout_ms) = match (c_string(email, "email"), milliseconds(timeout, "timeout")) {
            (Ok(email), Ok(timeout_ms)) => (email, timeout_ms),
            (Err(error), _) | (_, Err(error)) => return call::failed(error),
        };
        call::start(None, |user_data, out_call| unsafe {
            sys::portal_auth_sign_in_with_magic_link(
                self.raw(),
                email.as_ptr(),
                timeout_ms,
                Some(on_result::<SignInResult>),
                user_data,
                out_call,
            )
        })
    }

    /// Listens for the redirects the application's next instances forward with
    /// [`forward_redirect`](crate::forward_redirect) (the desktop starts a new process for a
    /// custom-scheme link such as `myapp://auth/callback?...`), and handles each as
    /// [`handle_redirect`](Self::handle_redirect) would; a forwarded magic link also
    /// completes a [`sign_in_with_magic_link`](Self::sign_in_with_magic_link) that waits
    /// for it. The channel listens once this returns; the outcomes come through the
    /// [`Redirects`] returned, until it is cancelled or dropped (or the client is).
    ///
    /// ```
    /// use portal_auth::{Error, Options, PortalAuth, Storage};
    ///
    /// let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
    /// options.storage = Storage::Memory;
    /// let auth = PortalAuth::new(&options)?;
    /// let mut redirects = auth.listen_for_redirects();
    /// redirects.cancel(); // the app is done signing in
    /// match redirects.next() {
    ///     None => {}                                             // listening ended
    ///     Some(Err(Error::SignInUnavailable { reason, .. })) => { // it could not listen
    ///         println!("no redirect channel: {:?}", reason)
    ///     }
    ///     Some(other) => panic!("no redirect was forwarded: {:?}", other),
    /// }
    /// # Ok::<(), portal_auth::Error>(())
    /// ```
    pub fn listen_for_redirects(&self) -> Redirects {
        let state = RedirectsState::new();
        let user_data = Arc::into_raw(Arc::clone(&state)) as *mut std::os::raw::c_void;
        let mut handle = ptr::null_mut();
        // SAFETY: the library owns the reference it was given until its last call.
        let code = unsafe { sys::portal_auth_listen_for_redirects(self.raw(), Some(on_redirect), user_data, &mut handle) };
        if code != sys::PORTAL_AUTH_OK {
            // SAFETY: the library did not take the reference it was offered.
            unsafe { drop(Arc::from_raw(user_data as *const RedirectsState)) };
            state.end(Some(Error::from_code(code)));
        }
        Redirects::new(state, handle)
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

    /// Submits the user's code for a TOTP step; the session, persisted. The code is posted
    /// verbatim: tidy what the user typed with [`normalize_totp_code`](crate::normalize_totp_code)
    /// first. A code the server refuses is [`Error::Unauthorized`] with a reason:
    /// [`TotpCodeRejected`](crate::UnauthorizedReason::TotpCodeRejected) asks for the code
    /// again, for the same step; [`TotpStepUsed`](crate::UnauthorizedReason::TotpStepUsed) says
    /// this client already signed in with the step; [`TotpStepExpired`](crate::UnauthorizedReason::TotpStepExpired)
    /// says the step had expired by the server's clock
    /// ([`TotpRequired::expires_at`](crate::TotpRequired::expires_at)), so the user signs in
    /// again. An expired step is still sent: the server decides.
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

/// The callback of the browser sign-ins: as `handle_redirect`'s, and an opener's failure (no
/// browser, or another) is the error's cause.
unsafe extern "C" fn on_sign_in(
    user_data: *mut c_void,
    result: *const sys::portal_auth_result,
    error: *const sys::portal_auth_error,
) {
    call::complete_keeping(user_data, |keep| {
        let outcome = call::outcome(error, || SignInResult::read(result).and_then(SignInResult::from_result));
        match outcome {
            Err(Error::SignInUnavailable {
                reason: reason @ (SignInUnavailableReason::OpenerFailed | SignInUnavailableReason::NoBrowser),
                message,
                url,
                ..
            }) => {
                let openers = keep.and_then(|keep| keep.downcast_ref::<Openers>());
                let cause = openers.and_then(Openers::take_failure).map(Cause::new);
                Err(Error::SignInUnavailable { reason, message, url, cause })
            }
            other => other,
        }
    });
}

/// Calls a host's opener, keeping its error: `NotFound` tells the library there is no browser
/// (PORTAL_AUTH_REASON_NO_BROWSER), any other error is a failure. A panic in it fails the
/// sign-in instead of unwinding into C.
unsafe extern "C" fn open_browser(user_data: *mut c_void, url: *const c_char, ephemeral: sys::portal_auth_bool) -> c_int {
    let opener = &*(user_data as *const Opener);
    let url = borrowed(url).unwrap_or_default();
    let failure = match catch_unwind(AssertUnwindSafe(|| (opener.open)(&url, ephemeral == sys::PORTAL_AUTH_TRUE))) {
        Ok(Ok(())) => return 0,
        Ok(Err(error)) => error,
        Err(_) => io::Error::new(io::ErrorKind::Other, "the browser opener panicked"),
    };
    let answer = if failure.kind() == io::ErrorKind::NotFound { sys::PORTAL_AUTH_REASON_NO_BROWSER } else { 1 };
    *opener.failure.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(failure);
    answer
}
