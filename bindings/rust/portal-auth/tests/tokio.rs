//! The crate's calls under tokio's multi-thread runtime, as an application awaits them: 50
//! calls at once from tasks on worker threads; a call whose answer does not come in time,
//! given up by `tokio::time::timeout`; and an exchange dropped in flight with its task,
//! whose session the library still persists (docs/protocol.md §5). The one test of this file
//! injects faults into the emulator, so it runs alone.
mod support;

use std::sync::Arc;
use std::time::Duration;

use portal_auth::{AuthMethod, PortalAuth, SignInResult, Storage};
use support::*;

const EXCHANGE: &str = "/api/v3/auth/magic-links/validations";

/// How many requests to `path` the emulator has logged.
fn logged(path: &str) -> usize {
    control("GET", "requests", None).matches(&format!("\"path\":\"{}\"", path)).count()
}

/// Until the emulator has logged `count` requests to `path` (it answers when they are).
async fn emulator_saw(path: &str, count: usize) {
    let query = format!("wait?path={}&count={}&timeout=60", path, count);
    tokio::task::spawn_blocking(move || control("GET", &query, None)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_calls_a_timeout_and_a_call_dropped_in_flight() {
    let environment = environment(false, APP_REDIRECT);
    let mut memory = options(&environment, APP_REDIRECT);
    memory.storage = Storage::Memory;
    let auth = Arc::new(PortalAuth::new(&memory).unwrap());

    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let auth = Arc::clone(&auth);
            tokio::spawn(async move { auth.get_methods().await })
        })
        .collect();
    for task in tasks {
        let methods = task.await.unwrap().unwrap();
        assert!(methods.allowed_auth_methods.contains(&AuthMethod::EmailMagicLink));
    }

    // A held answer: the timeout gives the call up (and dropping it cancels it).
    control("POST", "faults", Some("{\"path\":\"/methods\",\"kind\":\"hold\"}"));
    let given_up = tokio::time::timeout(Duration::from_millis(300), auth.get_methods()).await;
    assert!(given_up.is_err(), "the held call completed: {:?}", given_up);

    // An exchange on the wire, its task aborted: the library completes it and keeps the
    // session; the same redirect handled again returns it, with no second request.
    control("POST", "faults", Some("{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}"));
    let url = grant_redirect(&environment, "tokio@example.com");
    let before = logged(EXCHANGE);
    let exchanging = tokio::spawn({
        let (auth, url) = (Arc::clone(&auth), url.clone());
        async move { auth.handle_redirect(&url).await }
    });
    emulator_saw(EXCHANGE, before + 1).await;
    exchanging.abort();
    assert!(exchanging.await.unwrap_err().is_cancelled());
    control("POST", "release", None);
    let replayed = auth.handle_redirect(&url).await.unwrap();
    match replayed {
        Some(SignInResult::Authenticated(signed_in)) => assert!(signed_in.session.end_user_id().starts_with("eu_")),
        other => panic!("expected the session, got {:?}", other),
    }
    assert_eq!(logged(EXCHANGE), before + 1);
    control("DELETE", "faults", None);
}
