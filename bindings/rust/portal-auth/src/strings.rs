//! Strings across the boundary: Rust strings into borrowed C strings for one call, and the
//! library's UTF-8 (borrowed or owned) back into `String`s.
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

use crate::error::Error;
use crate::sys;

/// `text` as a C string; a NUL byte inside is an invalid argument named `name`.
pub(crate) fn c_string(text: &str, name: &str) -> Result<CString, Error> {
    CString::new(text).map_err(|_| Error::InvalidArgument {
        name: name.to_string(),
        message: format!("Invalid argument: {} contains a NUL byte.", name),
    })
}

/// A copy of a borrowed C string; None for NULL.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn borrowed(text: *const c_char) -> Option<String> {
    if text.is_null() {
        None
    } else {
        Some(CStr::from_ptr(text).to_string_lossy().into_owned())
    }
}

/// A string of the library's static storage (a reason's name or sentence); None for NULL or
/// text that is not UTF-8.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string in static storage.
pub(crate) unsafe fn static_text(text: *const c_char) -> Option<&'static str> {
    if text.is_null() {
        None
    } else {
        CStr::from_ptr(text).to_str().ok()
    }
}

/// A copy of a string the library gave the caller, which is then freed; None for NULL.
///
/// # Safety
/// `text` is NULL or a string the library allocated for the caller.
pub(crate) unsafe fn owned(text: *mut c_char) -> Option<String> {
    let copy = borrowed(text);
    sys::portal_auth_string_free(text);
    copy
}
