//! A signed-in user: a reference-counted session handle of the library.
use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::call::{self, Call};
use crate::error::Error;
use crate::ffi;
use crate::strings::{borrowed, owned};

/// A signed-in user. Holds one reference of the library's session (retained when made,
/// released on drop; `clone` retains another). One session is always one handle: a redirect
/// replayed from the client's memory gives back the same session ([`Session::same`]).
pub struct Session {
    raw: NonNull<ffi::portal_auth_session>,
}

// SAFETY: the session is reference counted by the library, and every session function is
// safe to call from any thread, concurrently.
unsafe impl Send for Session {}
unsafe impl Sync for Session {}

impl Session {
    /// Retains a session a callback lends; None for NULL.
    ///
    /// # Safety
    /// `session` is NULL or valid for the call.
    pub(crate) unsafe fn retain(session: *mut ffi::portal_auth_session) -> Option<Session> {
        NonNull::new(ffi::portal_auth_session_retain(session)).map(|raw| Session { raw })
    }

    /// The user's id: never secret, what to log and key per-user state on.
    pub fn end_user_id(&self) -> String {
        // SAFETY: the session is alive; the string is owned by it and copied at once.
        unsafe { borrowed(ffi::portal_auth_session_end_user_id(self.raw.as_ptr())) }.unwrap_or_default()
    }

    /// The Client Session Token (a secret); [`Error::SessionInvalidated`] once invalidated.
    /// The library wipes its own copy; the `String` returned is the caller's, which Rust
    /// does not wipe when it is dropped.
    pub fn token(&self) -> Result<String, Error> {
        let mut token = ptr::null_mut();
        let mut error = ptr::null_mut();
        // SAFETY: the session is alive; the out-parameters are the caller's to free.
        unsafe {
            let code = ffi::portal_auth_session_copy_token(self.raw.as_ptr(), &mut token, &mut error);
            if code != ffi::PORTAL_AUTH_OK {
                return Err(Error::take(code, error));
            }
            Ok(owned(token).unwrap_or_default())
        }
    }

    /// Invalidates the session: the token is forgotten at once, then the persisted copy is
    /// deleted if it is still this session's. Completes with a keyring failure, if any (the
    /// session stays invalidated; invalidating again retries the delete).
    pub fn invalidate(&self) -> Call<()> {
        let session = self.raw.as_ptr();
        call::start(None, |user_data, out_call| unsafe {
            ffi::portal_auth_session_invalidate(session, Some(on_done), user_data, out_call)
        })
    }

    /// Whether both are the same session (the same handle).
    pub fn same(&self, other: &Session) -> bool {
        self.raw == other.raw
    }
}

/// The callback of calls that complete with nothing but an error.
pub(crate) unsafe extern "C" fn on_done(user_data: *mut c_void, error: *const ffi::portal_auth_error) {
    call::complete(user_data, || call::outcome(error, || Ok(())));
}

impl Clone for Session {
    fn clone(&self) -> Session {
        // SAFETY: retaining a live session returns the same, non-NULL pointer.
        unsafe { ffi::portal_auth_session_retain(self.raw.as_ptr()) };
        Session { raw: self.raw }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: this value holds one reference.
        unsafe { ffi::portal_auth_session_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("end_user_id", &self.end_user_id()).finish_non_exhaustive()
    }
}
