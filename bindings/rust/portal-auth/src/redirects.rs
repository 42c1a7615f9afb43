//! Redirect forwarding: the running instance's [`Redirects`] (the outcomes of the URLs its
//! next instances forward, fed by the multi-shot C callback), and [`forward_redirect`], for
//! the URL handler the desktop starts.
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::call::{self, Call};
use crate::error::Error;
use crate::options::Options;
use crate::results::{internal, SignInResult};
use crate::strings::c_string;
use crate::sys;

/// The outcome of one forwarded redirect, as [`PortalAuth::handle_redirect`](crate::PortalAuth::handle_redirect)
/// has it: a result, `None` for a URL that is not a sign-in redirect, or an error.
pub type ForwardedRedirect = Result<Option<SignInResult>, Error>;

/// What the callback and the [`Redirects`] share: the outcomes not yet taken, and whether
/// listening has ended. The library holds one reference until its last call.
pub(crate) struct RedirectsState {
    queue: Mutex<Queue>,
    arrived: Condvar,
}

struct Queue {
    outcomes: VecDeque<ForwardedRedirect>,
    ended: bool,
    waker: Option<Waker>,
}

impl RedirectsState {
    pub(crate) fn new() -> Arc<RedirectsState> {
        Arc::new(RedirectsState {
            queue: Mutex::new(Queue { outcomes: VecDeque::new(), ended: false, waker: None }),
            arrived: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding the lock; a poisoned one still holds a consistent queue.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, change: impl FnOnce(&mut Queue)) {
        let waker = {
            let mut queue = self.lock();
            change(&mut queue);
            queue.waker.take()
        };
        self.arrived.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Listening has ended; `why` is the error the iteration ends with, if any.
    pub(crate) fn end(&self, why: Option<Error>) {
        self.push(|queue| {
            queue.outcomes.extend(why.map(Err));
            queue.ended = true;
        });
    }
}

/// The callback of `portal_auth_listen_for_redirects`: queues each outcome; on the last call,
/// ends the queue (with the error, unless listening was simply closed) and drops the
/// library's reference. Never unwinds into the library: a panic (of a waker) aborts.
pub(crate) unsafe extern "C" fn on_redirect(
    user_data: *mut c_void,
    result: *const sys::portal_auth_result,
    error: *const sys::portal_auth_error,
    last: sys::portal_auth_bool,
) {
    let handled = catch_unwind(AssertUnwindSafe(|| {
        let state = user_data as *const RedirectsState;
        if last == sys::PORTAL_AUTH_TRUE {
            let state = Arc::from_raw(state);
            let why = if error.is_null() { None } else { Some(Error::from_raw(error)) };
            state.end(why.filter(|error| !matches!(error, Error::SignInClosed { .. })));
        } else {
            let outcome = call::outcome(error, || SignInResult::read(result));
            (*state).push(|queue| queue.outcomes.push_back(outcome));
        }
    }));
    if handled.is_err() {
        std::process::abort();
    }
}

/// The redirects forwarded to this instance, from
/// [`PortalAuth::listen_for_redirects`](crate::PortalAuth::listen_for_redirects): iterate
/// (blocking the thread) or `.await` [`next_redirect`](Redirects::next_redirect) for each
/// outcome, in the order the URLs came. The iteration ends when listening does: after
/// [`cancel`](Redirects::cancel), or when the client is dropped; when the channel cannot
/// listen, it yields that error
/// ([`Error::SignInUnavailable`] with a reason such as
/// [`ChannelInUse`](crate::SignInUnavailableReason::ChannelInUse)) and then ends. Dropping
/// it stops listening.
#[must_use = "listening stops when this is dropped"]
pub struct Redirects {
    state: Arc<RedirectsState>,
    handle: *mut sys::portal_auth_call,
}

// SAFETY: the call handle may be used from any thread (every C function is thread-safe), and
// the outcomes move to whichever thread takes them.
unsafe impl Send for Redirects {}

impl Redirects {
    pub(crate) fn new(state: Arc<RedirectsState>, handle: *mut sys::portal_auth_call) -> Redirects {
        Redirects { state, handle }
    }

    /// Stops listening: the redirects already taken are still delivered, then the iteration
    /// ends.
    pub fn cancel(&self) {
        // SAFETY: the handle is the library's (or NULL, which it ignores) until drop.
        unsafe { sys::portal_auth_call_cancel(self.handle) };
    }

    /// The next outcome as a future: `None` once listening has ended and every outcome was
    /// taken. For async code, where the blocking [`Iterator::next`] is not.
    pub fn next_redirect(&mut self) -> NextRedirect<'_> {
        NextRedirect { redirects: self }
    }

}

/// The next outcome if one has come, without waiting: `Poll::Ready(None)` once the iteration
/// has ended.
fn take(queue: &mut Queue) -> Poll<Option<ForwardedRedirect>> {
    match queue.outcomes.pop_front() {
        Some(outcome) => Poll::Ready(Some(outcome)),
        None if queue.ended => Poll::Ready(None),
        None => Poll::Pending,
    }
}

impl Iterator for Redirects {
    type Item = ForwardedRedirect;

    /// Blocks the thread until the next outcome comes, or listening ends. Not for async code:
    /// there, `.await` [`next_redirect`](Redirects::next_redirect).
    fn next(&mut self) -> Option<ForwardedRedirect> {
        let mut queue = self.state.lock();
        loop {
            if let Poll::Ready(next) = take(&mut queue) {
                return next;
            }
            queue = self.state.arrived.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

impl fmt::Debug for Redirects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let queue = self.state.lock();
        f.debug_struct("Redirects").field("waiting", &queue.outcomes.len()).field("ended", &queue.ended).finish()
    }
}

impl Drop for Redirects {
    fn drop(&mut self) {
        if !self.state.lock().ended {
            self.cancel();
        }
        // SAFETY: freeing the handle does not end listening; the library's last call still
        // comes and drops its own reference to the state.
        unsafe { sys::portal_auth_call_free(self.handle) };
    }
}

/// The future of [`Redirects::next_redirect`].
#[must_use = "a future does nothing unless awaited"]
#[derive(Debug)]
pub struct NextRedirect<'a> {
    redirects: &'a mut Redirects,
}

impl Future for NextRedirect<'_> {
    type Output = Option<ForwardedRedirect>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let mut queue = self.redirects.state.lock();
        let next = take(&mut queue);
        if next.is_pending() {
            match &queue.waker {
                Some(waker) if waker.will_wake(context.waker()) => {}
                _ => queue.waker = Some(context.waker().clone()),
            }
        }
        next
    }
}

/// What became of a forwarded redirect ([`forward_redirect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Forwarded {
    /// The running instance took the URL and handles it: nothing more to do here.
    Taken,
    /// No instance listens: handle the URL here ([`PortalAuth::handle_redirect`](crate::PortalAuth::handle_redirect)).
    NoInstance,
    /// The URL does not target the redirect URL of the options: nothing was handed over, and
    /// `handle_redirect` would find nothing in it either.
    Refused,
}

/// In the URL handler the desktop started for a custom-scheme link: hands `url` to the
/// application's running instance (the one listening with
/// [`PortalAuth::listen_for_redirects`](crate::PortalAuth::listen_for_redirects) for the same
/// user, `application_id` and environment of `options`) and says whether one took it. No
/// request to Portal and no keyring access; each step waits at most 5 s.
///
/// [`Error::SignInUnavailable`] with
/// [`ChannelFailed`](crate::SignInUnavailableReason::ChannelFailed) means the instance did
/// not answer in time: it may still handle the URL, so do not handle it here too.
///
/// ```no_run
/// use portal_auth::{forward_redirect, Forwarded, Options, PortalAuth};
///
/// let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
/// options.application_id = Some("com.example.App".into());
/// let url = std::env::args().nth(1).unwrap_or_default(); // Exec=... %u
/// if forward_redirect(&options, &url).wait()? == Forwarded::NoInstance {
///     let signed_in = PortalAuth::new(&options)?.handle_redirect(&url).wait()?;
///     println!("{:?}", signed_in);
/// }
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub fn forward_redirect(options: &Options, url: &str) -> Call<Forwarded> {
    let url = match c_string(url, "url") {
        Ok(url) => url,
        Err(error) => return call::failed(error),
    };
    let started = options.with_raw(|raw| {
        // The call has no handle to cancel it: it ends by itself, in 15 s at most.
        call::start(None, |user_data, _| unsafe {
            sys::portal_auth_forward_redirect(raw, url.as_ptr(), Some(on_forwarded), user_data)
        })
    });
    started.unwrap_or_else(call::failed)
}

unsafe extern "C" fn on_forwarded(
    user_data: *mut c_void,
    outcome: sys::portal_auth_forward_result,
    error: *const sys::portal_auth_error,
) {
    call::complete(user_data, || {
        call::outcome(error, || match outcome {
            sys::PORTAL_AUTH_FORWARD_TAKEN => Ok(Forwarded::Taken),
            sys::PORTAL_AUTH_FORWARD_NO_INSTANCE => Ok(Forwarded::NoInstance),
            sys::PORTAL_AUTH_FORWARD_REFUSED => Ok(Forwarded::Refused),
            other => Err(internal(&format!("a forwarding outcome of a known kind (not {})", other))),
        })
    });
}
