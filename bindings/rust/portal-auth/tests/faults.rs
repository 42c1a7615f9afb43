//! Tests that inject faults at the emulator, which apply to every client of it: one at a
//! time (this binary's tests hold a lock; cargo runs test binaries one after another).
mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use portal_auth::{Error, PortalAuth, SignInResult, Storage, StorageFailureReason, UnauthorizedReason};
use support::*;

static FAULTS: Mutex<()> = Mutex::new(());

fn faults() -> MutexGuard<'static, ()> {
    let guard = FAULTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    control("DELETE", "faults", None);
    guard
}

fn fault(json: &str) {
    control("POST", "faults", Some(json));
}

/// Blocks until the emulator has received `count` requests to `path` since the last clear.
fn wait_for_request(path: &str, count: usize) {
    control("GET", &format!("wait?path={}&count={}&timeout=60", path, count), None);
}

#[test]
fn the_waker_drives_a_future_that_was_pending() {
    let _faults = faults();
    control("DELETE", "requests", None);
    fault(r#"{"path":"/methods","kind":"hold"}"#);
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    let mut call = auth.get_methods();
    // Held at the emulator: the first poll cannot be ready.
    let wakes = Arc::new(Wakes::default());
    let waker = Waker::from(Arc::clone(&wakes));
    let mut context = Context::from_waker(&waker);
    assert!(Pin::new(&mut call).poll(&mut context).is_pending());
    wait_for_request("/methods", 1);
    control("POST", "release", Some("{}"));
    // The callback wakes the waker of the last poll, once; then the call is ready.
    wakes.wait_for(1);
    match Pin::new(&mut call).poll(&mut context) {
        Poll::Ready(methods) => assert!(methods.unwrap().auto_create_wallet),
        Poll::Pending => panic!("woken, yet pending"),
    }
    assert_eq!(wakes.count(), 1);
}

#[test]
fn dropping_a_future_after_its_request_was_sent_still_persists_the_session() {
    let _faults = faults();
    control("DELETE", "requests", None);
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    let url = grant_redirect(&environment, "rust-dropped@example.com");
    fault(r#"{"path":"/magic-links/validations","kind":"hold"}"#);
    let call = auth.handle_redirect(&url);
    wait_for_request("/magic-links/validations", 1);
    drop(call); // cancels, too late: the grant is on the wire (docs/protocol.md §5)
    control("POST", "release", Some("{}"));
    // The same redirect waits for the exchange in flight and replays its session.
    let replayed = match auth.handle_redirect(&url).wait().unwrap() {
        Some(SignInResult::Authenticated(authenticated)) => authenticated.session,
        other => panic!("expected the session, got {:?}", other),
    };
    let restored = auth.restore_session().wait().unwrap().expect("the session was persisted");
    assert_eq!(restored.end_user_id(), replayed.end_user_id());
    assert_eq!(wait_count("/magic-links/validations"), 1);
}

#[test]
fn a_call_cancelled_before_its_request_is_sent_completes_cancelled() {
    let _faults = faults();
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    // A slow first request keeps the client's grant lock, so the second waits unsent.
    control("DELETE", "requests", None);
    fault(r#"{"path":"/magic-links/validations","kind":"hold"}"#);
    let first = auth.handle_redirect(&grant_redirect(&environment, "rust-first@example.com"));
    wait_for_request("/magic-links/validations", 1);
    let second = auth.handle_redirect(&grant_redirect(&environment, "rust-second@example.com"));
    second.cancel();
    control("POST", "release", Some("{}"));
    assert_eq!(second.wait().map(|_| ()), Err(Error::Cancelled { message: "The call was cancelled.".into() }));
    assert!(first.wait().unwrap().is_some());
}

#[test]
fn server_errors_carry_their_fields() {
    let _faults = faults();
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    fault(r#"{"path":"/methods","kind":"status","status":503,"retryAfter":"120"}"#);
    match auth.get_methods().wait() {
        Err(error @ Error::HttpStatus { .. }) => {
            let body = Some(r#"{"error":"injected"}"#.to_string());
            let retry_after = Some(Duration::from_secs(120));
            assert_eq!(error, Error::HttpStatus { status: 503, body, retry_after, message: error.message().to_string() });
            assert_eq!((error.code(), error.retry_after()), (21, retry_after));
        }
        other => panic!("expected HttpStatus, got {:?}", other),
    }
    fault(r#"{"path":"/magic-links","kind":"status","status":429,"retryAfter":"120"}"#);
    match auth.send_magic_link("rust-limited@example.com").wait() {
        Err(Error::RateLimited { retry_after, .. }) => assert_eq!(retry_after, Some(Duration::from_secs(120))),
        other => panic!("expected RateLimited, got {:?}", other),
    }
    // The server's reason for a 400, as the developer needs it; none for an empty body.
    fault(r#"{"path":"/magic-links","kind":"status","status":400,"body":"{\"error\":\"redirectUrl is not allow-listed\"}"}"#);
    match auth.send_magic_link("rust-reason@example.com").wait() {
        Err(Error::HttpStatus { status: 400, body: Some(body), retry_after: None, message }) => {
            assert_eq!(body, r#"{"error":"redirectUrl is not allow-listed"}"#);
            assert!(!message.contains("allow-listed"), "{}", message);
        }
        other => panic!("expected HttpStatus, got {:?}", other),
    }
    fault(r#"{"path":"/methods","kind":"status","status":502,"body":""}"#);
    assert!(matches!(auth.get_methods().wait(), Err(Error::HttpStatus { status: 502, body: None, .. })));
    fault(r#"{"path":"/methods","kind":"malformed","body":"[]"}"#);
    match auth.get_methods().wait() {
        Err(Error::MalformedResponse { path, missing, .. }) => {
            assert!(path.ends_with("/methods"), "{}", path);
            assert_eq!(missing, None); // the envelope itself is wrong
        }
        other => panic!("expected MalformedResponse, got {:?}", other),
    }
    fault(r#"{"path":"/methods","kind":"drop"}"#);
    assert!(matches!(auth.get_methods().wait(), Err(Error::Network { .. })));
}

/// Locks the private keyring (scripts/private-keyring.sh, which test-rust.sh runs the
/// tests inside) for the test: among this binary's tests, which hold the faults lock, no other
/// touches the keyring meanwhile.
#[test]
fn a_locked_keyring_is_a_storage_failure_with_its_reason() {
    let _faults = faults();
    let script = match std::env::var("PORTAL_AUTH_PRIVATE_KEYRING") {
        Ok(script) => script,
        Err(_) => panic!("run inside scripts/private-keyring.sh run"),
    };
    let keyring = |command: &str| assert!(std::process::Command::new(&script).arg(command).status().unwrap().success());
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    auth.handle_redirect(&grant_redirect(&environment, "rust-locked@example.com")).wait().unwrap();
    keyring("lock");
    let locked = auth.restore_session().wait().map(|_| ());
    keyring("start");
    match locked {
        Err(Error::SessionStorageFailure { reason: StorageFailureReason::KeyringLocked, message }) => {
            assert!(message.contains("locked"), "{}", message)
        }
        other => panic!("expected SessionStorageFailure, got {:?}", other),
    }
}

#[test]
fn invalidating_one_session_invalidates_every_one_of_its_token() {
    let _faults = faults();
    let environment = environment(false, APP_REDIRECT);
    let auth = PortalAuth::new(&options(&environment, APP_REDIRECT)).unwrap();
    let signed_in = match auth.handle_redirect(&grant_redirect(&environment, "rust-shared@example.com")).wait().unwrap() {
        Some(SignInResult::Authenticated(authenticated)) => authenticated.session,
        other => panic!("expected the session, got {:?}", other),
    };
    let restored = auth.restore_session().wait().unwrap().unwrap();
    assert!(!restored.same(&signed_in));
    restored.invalidate().wait().unwrap();
    assert!(matches!(signed_in.token(), Err(Error::SessionInvalidated { .. })));
    assert!(auth.restore_session().wait().unwrap().is_none());
}

/// The emulator's clock moved eleven minutes on after it issued a TOTP step: expired by the
/// server's clock (its answers' Date), though this machine's has not moved. The code is still
/// sent (the server decides), and its refusal says to sign in again.
#[test]
fn a_step_expired_by_the_servers_clock_is_to_sign_in_again() {
    let _faults = faults();
    let environment = environment(true, APP_REDIRECT);
    let email = "rust-late@example.com";
    let mut options = options(&environment, APP_REDIRECT);
    options.storage = Storage::Memory;
    let auth = PortalAuth::new(&options).unwrap();
    let issued = auth.handle_redirect(&grant_redirect(&environment, email)).wait();
    let step = match issued.unwrap() {
        Some(SignInResult::TotpRequired(step)) => step,
        other => panic!("expected a TOTP step, got {:?}", other),
    };
    assert!(step.expires_at.expect("the step's expiry") > std::time::SystemTime::now());
    control("POST", "control", Some(r#"{"clockOffsetSeconds":660}"#));
    control("DELETE", "requests", None);
    let verified = auth.verify_totp(&current_code(&environment, email), &step.user_jwt).wait();
    control("POST", "control", Some(r#"{"clockOffsetSeconds":0}"#));
    match verified {
        Err(Error::Unauthorized { reason: Some(UnauthorizedReason::TotpStepExpired), message }) => {
            assert!(!message.is_empty())
        }
        other => panic!("expected Unauthorized with TotpStepExpired, got {:?}", other.map(|_| ())),
    }
    assert_eq!(wait_count("/totps/validations"), 1, "the code was sent");
}

fn wait_count(path: &str) -> usize {
    let answer = control("GET", "requests", None);
    answer.matches(&format!("\"path\":\"/api/v3/auth{}\"", path)).count()
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Wakes {
    count: Mutex<usize>,
    woken: Condvar,
}

impl Wakes {
    fn count(&self) -> usize {
        *self.count.lock().unwrap()
    }

    fn wait_for(&self, count: usize) {
        let mut current = self.count.lock().unwrap();
        while *current < count {
            current = self.woken.wait(current).unwrap();
        }
    }
}

impl std::task::Wake for Wakes {
    fn wake(self: Arc<Self>) {
        *self.count.lock().unwrap() += 1;
        self.woken.notify_all();
    }
}
