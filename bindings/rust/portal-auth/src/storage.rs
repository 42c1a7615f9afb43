//! Where a client keeps its session: the keyring, memory, or a store of the application's
//! ([`SessionStore`]), reached by the library through the C ABI's host storage callbacks.
//! The library applies the fault mapping itself; this module only carries values across,
//! and turns an error or a panic of the store into a failure code.
use std::fmt;
use std::io;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use crate::strings::borrowed;
use crate::sys;

/// A store of the application's for the session of one environment: one opaque string.
///
/// The library calls it on a thread of its own, one call at a time per environment, keeps
/// the string opaque, and applies the fault mapping itself (docs/protocol.md §3 and §6): an
/// error (or a panic) from a method is a transient
/// [`Error::SessionStorageFailure`](crate::Error::SessionStorageFailure) with reason
/// [`HostStorageFailed`](crate::StorageFailureReason::HostStorageFailed), and nothing is
/// deleted for it; a value that does not decode, an empty string or one with a NUL byte
/// included, belongs to nobody: `restore_session` deletes it and reports no session, and
/// `invalidate` deletes it too; when that delete fails, the call fails with reason
/// [`EntryNotCleared`](crate::StorageFailureReason::EntryNotCleared) and the value stays.
///
/// ```
/// use std::io;
/// use std::sync::{Arc, Mutex};
/// use portal_auth::{Options, PortalAuth, SessionStore, Storage};
///
/// #[derive(Default)]
/// struct InMemory(Mutex<Option<String>>);
///
/// impl SessionStore for InMemory {
///     fn get(&self) -> io::Result<Option<String>> {
///         Ok(self.0.lock().unwrap().clone())
///     }
///     fn set(&self, raw: &str) -> io::Result<()> {
///         *self.0.lock().unwrap() = Some(raw.to_string());
///         Ok(())
///     }
///     fn delete(&self) -> io::Result<()> {
///         *self.0.lock().unwrap() = None;
///         Ok(())
///     }
/// }
///
/// let store = Arc::new(InMemory::default());
/// *store.0.lock().unwrap() = Some("not a session".to_string());
/// let mut options = Options::new("env", "myapp://auth/callback");
/// options.storage = Storage::Host(store.clone());
/// let auth = PortalAuth::new(&options)?;
/// assert!(auth.restore_session().wait()?.is_none()); // undecodable: deleted, no session
/// assert_eq!(*store.0.lock().unwrap(), None);
/// # Ok::<(), portal_auth::Error>(())
/// ```
pub trait SessionStore: Send + Sync {
    /// The stored string, or `None` when nothing is stored.
    fn get(&self) -> io::Result<Option<String>>;
    /// Stores `raw`, replacing what was stored.
    fn set(&self, raw: &str) -> io::Result<()>;
    /// Deletes what is stored; deleting nothing is a success.
    fn delete(&self) -> io::Result<()>;
}

/// Where a client keeps the session of its environment.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Storage {
    /// The desktop keyring (Secret Service), the default.
    #[default]
    Keyring,
    /// This process only, forgotten at exit.
    Memory,
    /// A store of the application's, shared with the client (and kept by the library until
    /// the client and every session it made are gone).
    Host(Arc<dyn SessionStore>),
    /// A plain file per application and environment (not encrypted), for machines with no
    /// keyring, in a folder of the user's alone: the folder (an absolute path), or None for
    /// `$XDG_STATE_HOME/portal-auth` (by default `~/.local/state/portal-auth`).
    File(Option<String>),
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Storage::Keyring => f.write_str("Keyring"),
            Storage::Memory => f.write_str("Memory"),
            Storage::Host(_) => f.write_str("Host(..)"), // the store may hold a session
            Storage::File(folder) => f.debug_tuple("File").field(folder).finish(),
        }
    }
}

impl PartialEq for Storage {
    /// The same kind; two host stores are equal when they are the same store.
    fn eq(&self, other: &Storage) -> bool {
        match (self, other) {
            (Storage::Keyring, Storage::Keyring) | (Storage::Memory, Storage::Memory) => true,
            (Storage::File(a), Storage::File(b)) => a == b,
            // The data's addresses: a trait object's vtable address is not unique.
            (Storage::Host(a), Storage::Host(b)) => std::ptr::eq(Arc::as_ptr(a) as *const u8, Arc::as_ptr(b) as *const u8),
            _ => false,
        }
    }
}

impl Storage {
    /// The options' storage kind, and the callbacks of a host store (whose `user_data` the
    /// library owns once portal_auth_new has read them: it releases it exactly once).
    pub(crate) fn to_raw(&self) -> (sys::portal_auth_storage_kind, Option<sys::portal_auth_storage_callbacks>) {
        match self {
            Storage::Keyring => (sys::PORTAL_AUTH_STORAGE_KEYRING, None),
            Storage::Memory => (sys::PORTAL_AUTH_STORAGE_MEMORY, None),
            Storage::File(_) => (sys::PORTAL_AUTH_STORAGE_FILE, None),
            Storage::Host(store) => {
                let user_data = Box::into_raw(Box::new(Arc::clone(store))) as *mut c_void;
                (sys::PORTAL_AUTH_STORAGE_HOST, Some(sys::portal_auth_storage_callbacks {
                    size: std::mem::size_of::<sys::portal_auth_storage_callbacks>(),
                    get: Some(get),
                    set: Some(set),
                    remove: Some(remove),
                    user_data,
                    release: Some(release),
                }))
            }
        }
    }
}

extern "C" {
    // The C library's own, which frees what `get` hands over.
    fn malloc(size: usize) -> *mut c_void;
}

const FAILED: c_int = 1;

/// Runs `call` on the store behind `user_data`; a failure code for an error or a panic.
///
/// # Safety
/// `user_data` is the pointer [`Storage::to_raw`] made, not yet released.
unsafe fn with_store(user_data: *mut c_void, call: impl FnOnce(&dyn SessionStore) -> io::Result<()>) -> c_int {
    let store = &*(user_data as *const Arc<dyn SessionStore>);
    match catch_unwind(AssertUnwindSafe(|| call(store.as_ref()))) {
        Ok(Ok(())) => 0,
        _ => FAILED,
    }
}

unsafe extern "C" fn get(user_data: *mut c_void, _environment: *const c_char, out_value: *mut *mut c_char) -> c_int {
    *out_value = ptr::null_mut();
    with_store(user_data, |store| {
        if let Some(value) = store.get()? {
            // A value C cannot carry (a NUL inside) reads as "": it does not decode, so the
            // library deletes it, as any other undecodable value.
            let bytes = if value.contains('\0') { &[][..] } else { value.as_bytes() };
            let copy = malloc(bytes.len() + 1) as *mut u8;
            if copy.is_null() {
                return Err(io::ErrorKind::OutOfMemory.into());
            }
            ptr::copy_nonoverlapping(bytes.as_ptr(), copy, bytes.len());
            *copy.add(bytes.len()) = 0;
            *out_value = copy as *mut c_char;
        }
        Ok(())
    })
}

unsafe extern "C" fn set(user_data: *mut c_void, _environment: *const c_char, value: *const c_char) -> c_int {
    match borrowed(value) {
        Some(value) => with_store(user_data, |store| store.set(&value)),
        None => FAILED,
    }
}

unsafe extern "C" fn remove(user_data: *mut c_void, _environment: *const c_char) -> c_int {
    with_store(user_data, |store| store.delete())
}

unsafe extern "C" fn release(user_data: *mut c_void) {
    // A panic in the store's drop must not unwind into C.
    let _ = catch_unwind(|| drop(Box::from_raw(user_data as *mut Arc<dyn SessionStore>)));
}
