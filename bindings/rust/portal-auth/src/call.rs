//! One asynchronous call of the library as a [`Call`]: a `Future` (for any executor) that can
//! also be waited for (blocking). The C callback completes a shared state: it stores the
//! outcome, wakes the waiting thread and the task's waker.
use std::any::Any;
use std::fmt;
use std::future::Future;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::error::Error;
use crate::sys;

/// What a call's callback and its [`Call`] share. The callback owns one reference (given to
/// the library as `user_data`), the `Call` another.
pub(crate) struct Shared<T> {
    state: Mutex<State<T>>,
    completed: Condvar,
    /// Kept alive until the callback has fired (a browser opener the library may still call).
    keep: Option<Arc<dyn Any + Send + Sync>>,
}

struct State<T> {
    outcome: Option<Result<T, Error>>,
    finished: bool,
    waker: Option<Waker>,
}

impl<T> Shared<T> {
    fn new(keep: Option<Arc<dyn Any + Send + Sync>>) -> Arc<Shared<T>> {
        Arc::new(Shared {
            state: Mutex::new(State { outcome: None, finished: false, waker: None }),
            completed: Condvar::new(),
            keep,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Nothing panics while holding the lock; a poisoned one still holds a consistent state.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn complete(&self, outcome: Result<T, Error>) {
        let waker = {
            let mut state = self.lock();
            state.outcome = Some(outcome);
            state.finished = true;
            state.waker.take()
        };
        self.completed.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Completes the call whose `user_data` a callback received, with what `read` makes of the
/// callback's borrowed arguments. Never unwinds into the library: a panic (of a waker) aborts.
///
/// # Safety
/// `user_data` is the pointer [`start`] gave the library for a `Shared<T>`, and the library
/// calls back exactly once.
pub(crate) unsafe fn complete<T>(user_data: *mut c_void, read: impl FnOnce() -> Result<T, Error>) {
    let completed = catch_unwind(AssertUnwindSafe(|| {
        let shared = Arc::from_raw(user_data as *const Shared<T>);
        shared.complete(read());
    }));
    if completed.is_err() {
        std::process::abort();
    }
}

/// As [`complete`], with what the call keeps alive (the openers of a browser sign-in) lent to
/// `read`.
///
/// # Safety
/// As for [`complete`].
pub(crate) unsafe fn complete_keeping<T>(
    user_data: *mut c_void,
    read: impl FnOnce(Option<&(dyn Any + Send + Sync)>) -> Result<T, Error>,
) {
    let completed = catch_unwind(AssertUnwindSafe(|| {
        let shared = Arc::from_raw(user_data as *const Shared<T>);
        let outcome = read(shared.keep.as_deref());
        shared.complete(outcome);
    }));
    if completed.is_err() {
        std::process::abort();
    }
}

/// Reads a callback's error, or its value when there is none.
///
/// # Safety
/// `error` is NULL or valid for the callback.
pub(crate) unsafe fn outcome<T>(
    error: *const sys::portal_auth_error,
    value: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    if error.is_null() {
        value()
    } else {
        Err(Error::from_raw(error))
    }
}

/// Starts a call: `begin(user_data, out_call)` calls the library's starting function. When
/// it refuses the call (no callback will come), the `Call` is ready with that error.
pub(crate) fn start<T>(
    keep: Option<Arc<dyn Any + Send + Sync>>,
    begin: impl FnOnce(*mut c_void, *mut *mut sys::portal_auth_call) -> sys::portal_auth_code,
) -> Call<T> {
    let shared = Shared::new(keep);
    let user_data = Arc::into_raw(Arc::clone(&shared)) as *mut c_void;
    let mut handle = ptr::null_mut();
    let code = begin(user_data, &mut handle);
    if code != sys::PORTAL_AUTH_OK {
        // SAFETY: the library did not take the reference it was offered.
        unsafe { drop(Arc::from_raw(user_data as *const Shared<T>)) };
        shared.complete(Err(Error::from_code(code)));
    }
    Call { shared, handle }
}

/// A call that failed before it could start.
pub(crate) fn failed<T>(error: Error) -> Call<T> {
    let shared = Shared::new(None);
    shared.complete(Err(error));
    Call { shared, handle: ptr::null_mut() }
}

/// An asynchronous call of the library: `.await` it on any executor, or [`wait`](Call::wait)
/// for it.
///
/// The call starts when it is made, not when it is first polled: its request may be on the
/// wire before the `Call` is awaited. It completes through the library's callback, which
/// stores the outcome and wakes the task that last polled it, so it needs no runtime.
/// Dropping it before it finishes cancels it (see [`cancel`](Call::cancel)).
///
/// ```
/// use portal_auth::{Call, Options, PortalAuth, Session, Storage};
///
/// let mut options = Options::new("YOUR_AUTH_ENVIRONMENT_ID", "myapp://auth/callback");
/// options.storage = Storage::Memory;
/// let auth = PortalAuth::new(&options)?;
/// let restoring: Call<Option<Session>> = auth.restore_session(); // started already
/// assert!(restoring.wait()?.is_none());
/// # Ok::<(), portal_auth::Error>(())
/// ```
#[must_use = "a call is cancelled when dropped: .await it or .wait() for it"]
pub struct Call<T> {
    shared: Arc<Shared<T>>,
    handle: *mut sys::portal_auth_call,
}

// SAFETY: the call handle may be used from any thread (every C function is thread-safe), and
// the outcome moves to whichever thread takes it.
unsafe impl<T: Send> Send for Call<T> {}

impl<T> fmt::Debug for Call<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call").field("finished", &self.shared.lock().finished).finish_non_exhaustive()
    }
}

impl<T> Call<T> {
    /// Blocks the thread until the call completes, and returns its outcome.
    ///
    /// It is not for async code: it blocks the thread, and with it an executor's other
    /// tasks (under tokio, a worker thread; on a current-thread runtime, everything). There,
    /// `.await` the call instead.
    pub fn wait(self) -> Result<T, Error> {
        let mut state = self.shared.lock();
        loop {
            if let Some(outcome) = state.outcome.take() {
                return outcome;
            }
            state = self.shared.completed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Asks the call to stop; it then completes with [`Error::Cancelled`] (or
    /// [`Error::SignInClosed`] for a browser sign-in). Honoured only before its request is on
    /// the wire: a grant already sent is spent, so that exchange completes, and its session is
    /// persisted (docs/protocol.md §5).
    pub fn cancel(&self) {
        // SAFETY: the handle is the library's (or NULL, which it ignores) until drop.
        unsafe { sys::portal_auth_call_cancel(self.handle) };
    }
}

impl<T> Future for Call<T> {
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.shared.lock();
        if let Some(outcome) = state.outcome.take() {
            return Poll::Ready(outcome);
        }
        match &state.waker {
            Some(waker) if waker.will_wake(context.waker()) => {}
            _ => state.waker = Some(context.waker().clone()),
        }
        Poll::Pending
    }
}

impl<T> Drop for Call<T> {
    fn drop(&mut self) {
        if !self.shared.lock().finished {
            self.cancel();
        }
        // SAFETY: freeing the handle does not cancel the call; the callback still fires and
        // owns its own reference to the shared state.
        unsafe { sys::portal_auth_call_free(self.handle) };
    }
}
