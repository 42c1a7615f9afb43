//! The library's log lines, for the application to receive: one handler for the process, and
//! the lowest level passed to it. The library is silent until a handler is installed; its
//! lines name the endUserId where useful and never carry a secret.
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Mutex;

use crate::error::Error;
use crate::strings::borrowed;
use crate::sys;

/// A log line's level, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What the library did.
    Info,
    /// Worth knowing, such as an undecodable stored entry cleared.
    Warning,
    /// A failure.
    Error,
}

impl LogLevel {
    fn to_raw(self) -> sys::portal_auth_log_level {
        match self {
            LogLevel::Debug => sys::PORTAL_AUTH_LOG_DEBUG,
            LogLevel::Info => sys::PORTAL_AUTH_LOG_INFO,
            LogLevel::Warning => sys::PORTAL_AUTH_LOG_WARNING,
            LogLevel::Error => sys::PORTAL_AUTH_LOG_ERROR,
        }
    }

    fn from_raw(level: sys::portal_auth_log_level) -> LogLevel {
        match level {
            sys::PORTAL_AUTH_LOG_DEBUG => LogLevel::Debug,
            sys::PORTAL_AUTH_LOG_INFO => LogLevel::Info,
            sys::PORTAL_AUTH_LOG_WARNING => LogLevel::Warning,
            _ => LogLevel::Error, // a level of a newer library
        }
    }
}

/// Receives one log line: its level and its text. Called on a library thread, so it must be
/// `Send + Sync` and return promptly; a panic in it is caught (the line is lost).
pub type LogHandler = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

/// The installed handler. Boxed again for a thin pointer, which is the C handler's
/// user_data; replaced (and dropped) only under this lock, once the library has let it go.
static HANDLER: Mutex<Option<Box<LogHandler>>> = Mutex::new(None);

/// Installs the process's log handler, replacing any; `None` makes the library silent
/// again. When this returns, the handler it replaced is not running and is never called
/// again. A handler must not install a handler itself.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use portal_auth::{set_log_handler, set_log_level, LogLevel, Options, PortalAuth, Storage};
///
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let kept = Arc::clone(&lines);
/// set_log_handler(Some(Box::new(move |level, line| kept.lock().unwrap().push((level, line.to_string())))));
/// set_log_level(Some(LogLevel::Debug))?;
/// let mut options = Options::new("env", "myapp://auth/callback");
/// options.storage = Storage::Memory;
/// PortalAuth::new(&options)?.restore_session().wait()?;
/// set_log_handler(None);
/// assert!(lines.lock().unwrap().iter().all(|(_, line)| !line.is_empty()));
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub fn set_log_handler(handler: Option<LogHandler>) {
    let mut installed = HANDLER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let replacement = handler.map(Box::new);
    let user_data = replacement.as_deref().map_or(ptr::null_mut(), |handler| handler as *const LogHandler as *mut c_void);
    let callback: sys::portal_auth_log_fn = if user_data.is_null() { None } else { Some(on_log) };
    // SAFETY: the handler stays in HANDLER until the library has let it go (below, next time).
    unsafe { sys::portal_auth_set_log_handler(callback, user_data) };
    *installed = replacement; // the old handler is dropped: the library called back its last
}

/// Passes only the lines at `level` and above to the handler, from the next line on; `None`
/// passes none. The default is [`LogLevel::Debug`]: every line.
///
/// ```
/// portal_auth::set_log_level(Some(portal_auth::LogLevel::Warning))?;
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub fn set_log_level(level: Option<LogLevel>) -> Result<(), Error> {
    let raw = level.map_or(sys::PORTAL_AUTH_LOG_NONE, LogLevel::to_raw);
    // SAFETY: a plain number the library checks.
    match unsafe { sys::portal_auth_set_log_level(raw) } {
        sys::PORTAL_AUTH_OK => Ok(()),
        code => Err(Error::from_code(code)),
    }
}

unsafe extern "C" fn on_log(user_data: *mut c_void, level: sys::portal_auth_log_level, message: *const c_char) {
    let handler = &*(user_data as *const LogHandler);
    let line = borrowed(message).unwrap_or_default();
    let _ = catch_unwind(AssertUnwindSafe(|| handler(LogLevel::from_raw(level), &line)));
}
