//! Redirect forwarding against the Portal emulator, in a runtime folder of this test binary's
//! own (`$XDG_RUNTIME_DIR`, mode 0700): a running client listens, `forward_redirect` hands it
//! URLs as the app's URL handler would (taken, replayed, refused), a second listener of the
//! same app is refused, the outcomes come blocking and as futures, and once listening has
//! ended there is no instance.
mod support;

use std::os::unix::fs::PermissionsExt;
use std::sync::Once;

use portal_auth::{forward_redirect, Error, Forwarded, Options, PortalAuth, SignInResult, SignInUnavailableReason};
use support::*;

/// Sets `$XDG_RUNTIME_DIR` once, before any test of this binary calls the library.
fn runtime_folder() {
    static SET: Once = Once::new();
    SET.call_once(|| {
        let folder = std::env::temp_dir().join(format!("portal-auth-rust-runtime-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::env::set_var("XDG_RUNTIME_DIR", &folder);
    });
}

fn app_options(environment: &str) -> Options {
    let mut options = options(environment, APP_REDIRECT);
    options.application_id = Some("org.example.RustForward".to_string());
    options
}

fn session_of(outcome: Option<Result<Option<SignInResult>, Error>>) -> portal_auth::Session {
    match outcome {
        Some(Ok(Some(SignInResult::Authenticated(authenticated)))) => authenticated.session,
        other => panic!("expected a session, got {:?}", other),
    }
}

#[test]
fn forwarded_redirects_are_taken_replayed_and_refused() {
    runtime_folder();
    let environment = environment(false, APP_REDIRECT);
    let options = app_options(&environment);
    let running = PortalAuth::new(&options).unwrap();
    let mut redirects = running.listen_for_redirects();

    let url = grant_redirect(&environment, "rust-forward@example.com");
    assert_eq!(forward_redirect(&options, &url).wait().unwrap(), Forwarded::Taken);
    let session = session_of(redirects.next());
    assert!(session.end_user_id().starts_with("eu_"));
    // The same URL again: taken, and replayed (the same session, no second exchange).
    assert_eq!(forward_redirect(&options, &url).wait().unwrap(), Forwarded::Taken);
    let (replayed, _) = block_on(redirects.next_redirect());
    assert!(session_of(replayed).same(&session));
    // A URL for another redirect is refused, and reaches nobody.
    assert_eq!(forward_redirect(&options, "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK").wait().unwrap(), Forwarded::Refused);

    // One listener per application and environment: a second one is refused.
    let second = PortalAuth::new(&options).unwrap();
    let mut refused = second.listen_for_redirects();
    match refused.next() {
        Some(Err(Error::SignInUnavailable { reason: SignInUnavailableReason::ChannelInUse, .. })) => {}
        other => panic!("expected ChannelInUse, got {:?}", other),
    }
    assert!(refused.next().is_none(), "the iteration ends after the error");

    redirects.cancel();
    assert!(redirects.next().is_none(), "cancelled: the iteration ends");
    assert_eq!(forward_redirect(&options, &url).wait().unwrap(), Forwarded::NoInstance);
    session.invalidate().wait().unwrap();
}

#[test]
fn dropping_the_client_ends_listening() {
    runtime_folder();
    let environment = environment(false, APP_REDIRECT);
    let options = app_options(&environment);
    let url = grant_redirect(&environment, "rust-forward-drop@example.com");
    let running = PortalAuth::new(&options).unwrap();
    let mut redirects = running.listen_for_redirects();
    drop(running);
    assert!(redirects.next().is_none(), "the client's drop ends its listening");
    // Its socket is gone before the drop returns: no instance is there.
    assert_eq!(forward_redirect(&options, &url).wait().unwrap(), Forwarded::NoInstance);
    let mut other = options;
    other.application_id = Some("bad id".into());
    assert!(matches!(forward_redirect(&other, &url).wait(), Err(Error::InvalidArgument { name, .. }) if name == "application_id"));
}
