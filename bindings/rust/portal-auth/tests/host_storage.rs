//! A store of the application's through the `SessionStore` trait, with the rules of
//! docs/protocol.md §3 and §6 as the C and Python tests hold them: the session kept there and
//! restored; an error (or a panic) of the store is a transient failure that deletes nothing
//! and quotes nothing of it; a value that does not decode is deleted and reads as no session,
//! with one warning line; a failed delete of it keeps it and fails with `EntryNotCleared`;
//! `invalidate` deletes an undecodable value and spares a newer sign-in's; the library lets
//! the store go once the client and its sessions are gone, and at once for a refused client.
mod support;

use std::io;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use portal_auth::{
    set_log_handler, set_log_level, Error, LogLevel, Options, PortalAuth, Session, SessionStore, SignInResult, Storage,
    StorageFailureReason,
};
use support::*;

/// One value, the calls made to it, and switches that make a method fail or panic.
#[derive(Default)]
struct Store {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    value: Option<String>,
    calls: Vec<&'static str>,
    failing: Vec<&'static str>,
    panicking: Vec<&'static str>,
    threads: Vec<thread::ThreadId>,
}

impl Store {
    fn holding(value: &str) -> Arc<Store> {
        let store = Arc::new(Store::default());
        store.state().value = Some(value.to_string());
        store
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn enter(&self, name: &'static str) -> io::Result<()> {
        let mut state = self.state();
        state.calls.push(name);
        state.threads.push(thread::current().id());
        if state.panicking.contains(&name) {
            drop(state);
            panic!("the store panics");
        }
        if state.failing.contains(&name) {
            return Err(io::Error::new(io::ErrorKind::Other, format!("disk full while holding {:?}", state.value)));
        }
        Ok(())
    }
}

impl SessionStore for Store {
    fn get(&self) -> io::Result<Option<String>> {
        self.enter("get")?;
        Ok(self.state().value.clone())
    }

    fn set(&self, raw: &str) -> io::Result<()> {
        self.enter("set")?;
        self.state().value = Some(raw.to_string());
        Ok(())
    }

    fn delete(&self) -> io::Result<()> {
        self.enter("delete")?;
        self.state().value = None;
        Ok(())
    }
}

fn client(environment: &str, store: &Arc<Store>) -> PortalAuth {
    let mut options = options(environment, APP_REDIRECT);
    options.storage = Storage::Host(store.clone());
    PortalAuth::new(&options).unwrap()
}

fn signed_in(auth: &PortalAuth, environment: &str, email: &str) -> Session {
    match auth.handle_redirect(&grant_redirect(environment, email)).wait().unwrap() {
        Some(SignInResult::Authenticated(authenticated)) => authenticated.session,
        other => panic!("expected a session, got {:?}", other),
    }
}

fn storage_failure(outcome: Result<impl std::fmt::Debug, Error>) -> (StorageFailureReason, String) {
    match outcome {
        Err(Error::SessionStorageFailure { reason, message }) => (reason, message),
        other => panic!("expected SessionStorageFailure, got {:?}", other),
    }
}

#[test]
fn a_store_keeps_the_session_and_another_client_restores_it() {
    let environment = environment(false, APP_REDIRECT);
    let store = Arc::new(Store::default());
    let session = signed_in(&client(&environment, &store), &environment, "host-rust@example.com");
    let stored = store.state().value.clone().unwrap();
    assert!(stored.contains(&session.token().unwrap()) && stored.contains(&session.end_user_id()));
    assert!(!store.state().threads.contains(&thread::current().id()), "called on the library's threads");

    let restored = client(&environment, &store).restore_session().wait().unwrap().expect("the stored session");
    assert_eq!(restored.token().unwrap(), session.token().unwrap());
    client(&environment, &store).clear_persisted_session().wait().unwrap();
    assert_eq!(store.state().value, None);
    assert_eq!(store.state().calls.last(), Some(&"delete"));
}

#[test]
fn an_error_or_a_panic_of_the_store_is_a_transient_failure() {
    let environment = environment(false, APP_REDIRECT);
    for method in ["get", "set", "delete"] {
        for panics in [false, true] {
            let store = Arc::new(Store::default());
            let auth = client(&environment, &store);
            signed_in(&auth, &environment, "fail-rust@example.com");
            let kept = store.state().value.clone().unwrap();
            if panics {
                store.state().panicking.push(method);
            } else {
                store.state().failing.push(method);
            }
            let (reason, message) = storage_failure(match method {
                "get" => auth.restore_session().wait().map(|_| ()),
                "set" => auth.handle_redirect(&grant_redirect(&environment, "fail-rust@example.com")).wait().map(|_| ()),
                _ => auth.clear_persisted_session().wait(),
            });
            assert_eq!(reason, StorageFailureReason::HostStorageFailed, "{} {}", method, panics);
            // The library's own message: nothing of the store's error, which quoted the value.
            assert!(!message.contains("disk full") && !message.contains(&kept), "{}", message);
            assert_eq!(store.state().value.as_deref(), Some(kept.as_str()), "nothing deleted");
        }
    }
}

/// The warnings of the log handler naming `environment` and a cleared entry, while `run` runs.
fn cleared_warnings(environment: &str, run: impl FnOnce()) -> Vec<String> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    set_log_level(Some(LogLevel::Debug)).unwrap();
    set_log_handler(Some(Box::new(move |level, line| kept.lock().unwrap().push((level, line.to_string())))));
    run();
    set_log_handler(None);
    let lines = lines.lock().unwrap();
    lines
        .iter()
        .filter(|(level, line)| *level == LogLevel::Warning && line.contains(environment) && line.contains("cleared"))
        .map(|(_, line)| line.clone())
        .collect()
}

#[test]
fn undecodable_values_and_their_failed_deletes() {
    // One test, since the log handler belongs to the process.
    let environment = environment(false, APP_REDIRECT);
    for stored in ["", "garbage", "{\"clientSessionToken\": \"\"}", "a\0b"] {
        let store = Store::holding(stored);
        let warnings = cleared_warnings(&environment, || {
            assert!(client(&environment, &store).restore_session().wait().unwrap().is_none(), "{:?}", stored);
        });
        assert_eq!(store.state().value, None);
        assert_eq!(store.state().calls, ["get", "delete"]);
        assert_eq!(warnings, [format!("An undecodable stored session of environment {} was cleared.", environment)]);
    }

    // The self-heal's delete fails: a failure, the value kept, no warning; then it heals.
    let store = Store::holding("garbage");
    store.state().failing.push("delete");
    let auth = client(&environment, &store);
    let warnings = cleared_warnings(&environment, || {
        let (reason, message) = storage_failure(auth.restore_session().wait());
        assert_eq!(reason, StorageFailureReason::EntryNotCleared);
        assert!(message.contains("could not be cleared") && !message.contains("garbage"), "{}", message);
    });
    assert!(warnings.is_empty());
    assert_eq!(store.state().value.as_deref(), Some("garbage"));
    store.state().failing.clear();
    let warnings = cleared_warnings(&environment, || assert!(auth.restore_session().wait().unwrap().is_none()));
    assert_eq!((warnings.len(), store.state().value.clone()), (1, None));
}

#[test]
fn invalidate_deletes_an_undecodable_value_and_spares_a_newer_sign_in() {
    let environment = environment(false, APP_REDIRECT);
    let store = Arc::new(Store::default());
    let auth = client(&environment, &store);
    let session = signed_in(&auth, &environment, "undecodable-rust@example.com");
    store.state().value = Some("garbage".to_string());
    store.state().failing.push("delete");
    assert_eq!(storage_failure(session.invalidate().wait()).0, StorageFailureReason::EntryNotCleared);
    assert_eq!(store.state().value.as_deref(), Some("garbage"));
    store.state().failing.clear();
    session.invalidate().wait().unwrap();
    assert_eq!(store.state().value, None);

    let older = signed_in(&auth, &environment, "cas-rust@example.com");
    let newer = signed_in(&auth, &environment, "cas-rust@example.com");
    let kept = store.state().value.clone();
    store.state().calls.clear();
    older.invalidate().wait().unwrap();
    assert_eq!(store.state().value, kept);
    assert!(!store.state().calls.contains(&"delete"));
    newer.invalidate().wait().unwrap();
    assert_eq!(store.state().value, None);
}

/// A store that says when it is dropped: when the library has let its last reference go.
struct Watched {
    store: Store,
    dropped: Mutex<mpsc::Sender<()>>,
}

impl SessionStore for Watched {
    fn get(&self) -> io::Result<Option<String>> {
        self.store.get()
    }
    fn set(&self, raw: &str) -> io::Result<()> {
        self.store.set(raw)
    }
    fn delete(&self) -> io::Result<()> {
        self.store.delete()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.dropped.lock().unwrap().send(());
    }
}

#[test]
fn the_library_lets_the_store_go_once_done_and_at_once_for_a_refused_client() {
    let environment = environment(false, APP_REDIRECT);
    let (dropped, released) = mpsc::channel();
    let mut with_store = options(&environment, APP_REDIRECT);
    with_store.storage = Storage::Host(Arc::new(Watched { store: Store::default(), dropped: Mutex::new(dropped) }));
    let auth = PortalAuth::new(&with_store).unwrap();
    drop(with_store); // the library's reference is the only one left
    let session = signed_in(&auth, &environment, "release-rust@example.com");
    drop(auth);
    assert!(released.try_recv().is_err(), "the session can still reach the store (invalidate)");
    drop(session);
    // Released on one of the library's threads, once its last reference is gone.
    released.recv_timeout(Duration::from_secs(60)).expect("the library let the store go");

    let store: Arc<dyn SessionStore> = Arc::new(Store::default());
    let mut refused = Options::new("env", "");
    refused.storage = Storage::Host(Arc::clone(&store));
    assert!(matches!(PortalAuth::new(&refused), Err(Error::InvalidArgument { .. })));
    assert_eq!(Arc::strong_count(&store), 2, "this test's and the options': the library let its own go");
    assert_eq!(format!("{:?}", refused.storage), "Host(..)");
}
