//! The library's completion queue under tokio: an `AsyncFd` over `portal_auth_completion_fd`
//! runs the completions of calls started through the C ABI on the runtime's own thread (the
//! crate's own `Call`s keep the library thread; this is what a tokio host can do instead).
mod support;

use std::ffi::CString;
use std::mem;
use std::os::raw::c_void;
use std::ptr;
use std::sync::Mutex;
use std::thread::{self, ThreadId};

use portal_auth::sys;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

const CALLS: usize = 100;

/// What the completions saw: how often each call's ran, and on which threads.
struct Completions {
    runs: Mutex<(Vec<usize>, Vec<ThreadId>, usize)>,
}

/// One call's user_data: the shared record and the call's index in it.
struct Slot<'a> {
    completions: &'a Completions,
    index: usize,
}

unsafe extern "C" fn on_methods(
    user_data: *mut c_void,
    methods: *const sys::portal_auth_methods,
    error: *const sys::portal_auth_error,
) {
    let slot = &*(user_data as *const Slot);
    let mut runs = slot.completions.runs.lock().unwrap();
    runs.0[slot.index] += 1;
    runs.1.push(thread::current().id());
    if !error.is_null() || sys::portal_auth_methods_count(methods) == 0 {
        runs.2 += 1;
    }
}

#[test]
fn a_tokio_async_fd_over_the_completion_descriptor_runs_every_completion_on_the_runtime_thread() {
    let environment = CString::new(support::environment(false, support::APP_REDIRECT)).unwrap();
    let redirect = CString::new(support::APP_REDIRECT).unwrap();
    let api_host = CString::new(support::api_host()).unwrap();
    let mut client = ptr::null_mut();
    // SAFETY: the strings outlive portal_auth_new, which copies them; the client is freed below.
    unsafe {
        let mut options: sys::portal_auth_options = mem::zeroed();
        sys::portal_auth_options_init(&mut options, mem::size_of::<sys::portal_auth_options>());
        options.auth_environment_id = environment.as_ptr();
        options.redirect_url = redirect.as_ptr();
        options.api_host = api_host.as_ptr();
        options.storage = sys::PORTAL_AUTH_STORAGE_MEMORY;
        assert_eq!(sys::portal_auth_new(&options, &mut client, ptr::null_mut()), sys::PORTAL_AUTH_OK);
        assert_eq!(sys::portal_auth_set_completion_queue(client, sys::PORTAL_AUTH_TRUE), sys::PORTAL_AUTH_OK);
    }

    let completions = Completions { runs: Mutex::new((vec![0; CALLS], Vec::new(), 0)) };
    let slots: Vec<Slot> = (0..CALLS).map(|index| Slot { completions: &completions, index }).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let runtime_thread = runtime.block_on(async {
        // SAFETY: the process's descriptor, open until it exits; polled only.
        let fd = unsafe { sys::portal_auth_completion_fd() };
        assert!(fd >= 0);
        let watched = AsyncFd::with_interest(fd, Interest::READABLE).unwrap();
        for slot in &slots {
            // SAFETY: each slot outlives its completion, which runs inside this block.
            let code = unsafe {
                sys::portal_auth_get_methods(client, Some(on_methods), slot as *const Slot as *mut c_void, ptr::null_mut())
            };
            assert_eq!(code, sys::PORTAL_AUTH_OK);
        }
        // Nothing runs until the runtime runs the queue.
        assert!(completions.runs.lock().unwrap().0.iter().all(|&runs| runs == 0));
        while completions.runs.lock().unwrap().1.len() < CALLS {
            let mut ready = watched.readable().await.unwrap();
            // SAFETY: runs the pending completions here, on the runtime's thread.
            unsafe { sys::portal_auth_run_completions() };
            // A completion queued after the run signals the descriptor anew: none is missed.
            ready.clear_ready();
        }
        thread::current().id()
    });

    let (counts, threads, failures) = &*completions.runs.lock().unwrap();
    assert!(counts.iter().all(|&runs| runs == 1), "each call completes exactly once");
    assert!(threads.iter().all(|&thread| thread == runtime_thread), "every completion ran on the runtime's thread");
    assert_eq!(*failures, 0);
    // SAFETY: the client is not used after this; nothing of it is pending.
    unsafe {
        assert_eq!(sys::portal_auth_run_completions(), 0);
        sys::portal_auth_free(client);
    }
}
