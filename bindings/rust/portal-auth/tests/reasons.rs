//! Errors that say what the user does next, against the Portal emulator: a refused TOTP code
//! (to retype) and the step's expiry, a used link (to request again), a 401 that cannot tell;
//! reasons that print as the library's names with its sentences for the user; the typed
//! code's helper; openers that find no browser (the URL to show) or fail otherwise (their
//! error as the source). The step expired by the server's clock shifts the emulator's clock, so
//! it is in tests/faults.rs, one at a time. No test here changes the emulator's state.
mod support;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use portal_auth::{
    normalize_totp_code, Error, NetworkFailureReason, PortalAuth, SignInClosedReason, SignInResult,
    SignInUnavailableReason, Storage, StorageFailureReason, TotpRequired, UnauthorizedReason,
};
use support::*;

/// A client of `environment` whose sessions stay in this process.
fn memory_client(environment: &str, redirect_url: &str) -> PortalAuth {
    let mut options = options(environment, redirect_url);
    options.storage = Storage::Memory;
    PortalAuth::new(&options).unwrap()
}

fn step_of(auth: &PortalAuth, environment: &str, email: &str) -> TotpRequired {
    match auth.handle_redirect(&grant_redirect(environment, email)).wait().unwrap() {
        Some(SignInResult::TotpRequired(step)) => step,
        other => panic!("expected a TOTP step, got {:?}", other),
    }
}

/// Six digits that are not `code`.
fn wrong(code: &str) -> String {
    format!("{:06}", (code.parse::<u32>().unwrap() + 500_000) % 1_000_000)
}

#[test]
fn a_refused_code_is_to_retype_and_the_step_says_when_it_expires() {
    let environment = environment(true, APP_REDIRECT);
    let email = "rust-retype@example.com";
    let auth = memory_client(&environment, APP_REDIRECT);
    let before = SystemTime::now();
    let step = step_of(&auth, &environment, email);
    // Ten minutes after the sign-in, to the second.
    let expires_at = step.expires_at.expect("the step's expiry");
    let lifetime = expires_at.duration_since(before).expect("a step that expires after it was issued");
    assert!((Duration::from_secs(590)..=Duration::from_secs(601)).contains(&lifetime), "{:?}", lifetime);

    let code = current_code(&environment, email);
    match auth.verify_totp(&wrong(&code), &step.user_jwt).wait() {
        Err(error @ Error::Unauthorized { reason: Some(UnauthorizedReason::TotpCodeRejected), .. }) => {
            assert_eq!(error.code(), 20);
            assert!(!error.to_string().is_empty());
        }
        other => panic!("expected Unauthorized with TotpCodeRejected, got {:?}", other.map(|_| ())),
    }
    // The same step, with the right code (as the user might type it).
    let typed = format!("{} {}", &code[..3], &code[3..]);
    let code = normalize_totp_code(&typed).expect("six digits");
    let signed_in = auth.verify_totp(&code, &step.user_jwt).wait().unwrap();
    assert_eq!(signed_in.session.end_user_id(), step.end_user_id);
}

#[test]
fn a_used_link_redeemed_by_another_client_is_to_request_a_new_one() {
    let environment = environment(false, APP_REDIRECT);
    let url = grant_redirect(&environment, "rust-used@example.com");
    match memory_client(&environment, APP_REDIRECT).handle_redirect(&url).wait().unwrap() {
        Some(SignInResult::Authenticated(_)) => {}
        other => panic!("expected a session, got {:?}", other),
    }
    // Another client (another process's, as well) has no memory of that exchange.
    match memory_client(&environment, APP_REDIRECT).handle_redirect(&url).wait() {
        Err(error @ Error::Unauthorized { reason: Some(UnauthorizedReason::LinkUsed), .. }) => {
            assert_eq!(error.code(), 20);
            if let Error::Unauthorized { reason: Some(reason), .. } = error {
                assert_eq!(reason.to_string(), "LINK_USED");
            }
        }
        other => panic!("expected Unauthorized with LinkUsed, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_401_of_a_call_that_cannot_tell_has_no_reason() {
    let auth = memory_client(&format!("env-rust-unknown-{}", std::process::id()), APP_REDIRECT);
    match auth.get_methods().wait() {
        Err(Error::Unauthorized { reason: None, message }) => assert!(!message.is_empty()),
        other => panic!("expected Unauthorized without a reason, got {:?}", other),
    }
}

#[test]
fn reasons_print_as_names_with_a_sentence_for_the_user() {
    let reason = StorageFailureReason::KeyringLocked;
    assert_eq!(
        (reason.to_string(), format!("{}", reason), format!("{:>16}", reason), format!("{:?}", reason)),
        ("KEYRING_LOCKED".to_string(), "KEYRING_LOCKED".to_string(), "  KEYRING_LOCKED".to_string(), "KeyringLocked".to_string())
    );
    assert_eq!(reason.user_message(), "Your keyring is locked. Unlock it, then try again.");

    use NetworkFailureReason as Network;
    use SignInClosedReason as Closed;
    use SignInUnavailableReason as Unavailable;
    use StorageFailureReason as Storage;
    use UnauthorizedReason as Unauthorized;
    let every: Vec<(String, &'static str)> = [
        Storage::KeyringLocked, Storage::NoSecretService, Storage::NoSessionBus, Storage::DbusFailure,
        Storage::LibsecretMissing, Storage::HostStorageFailed, Storage::EntryNotCleared,
        Storage::KeyringNeedsConfirmation, Storage::KeyringPromptDismissed, Storage::KeyringEncryptionFailed,
        Storage::FileStoreUnsafe, Storage::FileStoreFailed,
    ]
    .iter()
    .map(|r| (r.to_string(), r.user_message()))
    .chain(
        [
            Unavailable::RedirectNotLoopback, Unavailable::PortInUse, Unavailable::ListenerFailed, Unavailable::NoBrowser,
            Unavailable::OpenerFailed, Unavailable::NoRuntimeDirectory, Unavailable::RuntimeDirectoryUnsafe,
            Unavailable::ChannelInUse, Unavailable::ChannelFailed,
        ]
        .iter()
        .map(|r| (r.to_string(), r.user_message())),
    )
    .chain([Closed::Cancelled, Closed::TimedOut, Closed::ClientClosed].iter().map(|r| (r.to_string(), r.user_message())))
    .chain(
        [Unauthorized::LinkUsed, Unauthorized::TotpCodeRejected, Unauthorized::TotpStepExpired]
            .iter()
            .map(|r| (r.to_string(), r.user_message())),
    )
    .chain(
        [
            Network::CertificateUntrusted, Network::CertificateExpired, Network::CertificateNotYetValid,
            Network::CertificateWrongHost, Network::CaFileUnusable, Network::TlsFailed, Network::ProxyAuthRequired,
            Network::ProxyRefused, Network::ProxyUnreachable, Network::NameNotResolved, Network::ConnectionRefused,
            Network::ConnectionReset, Network::ConnectTimedOut, Network::RequestTimedOut, Network::ResponseTooLarge,
            Network::LibcurlMissing, Network::Failed,
        ]
        .iter()
        .map(|r| (r.to_string(), r.user_message())),
    )
    .collect();
    let names: Vec<&str> = every.iter().map(|(name, _)| name.as_str()).collect();
    assert!(names.contains(&"SIGN_IN_TIMED_OUT") && names.contains(&"NO_BROWSER") && names.contains(&"TOTP_STEP_EXPIRED"));
    assert!(names.contains(&"CONNECTION_REFUSED") && names.contains(&"NETWORK_FAILED"));
    assert!(names.iter().all(|name| name.chars().all(|c| c.is_ascii_uppercase() || c == '_')), "{:?}", names);
    let sentences: std::collections::BTreeSet<&str> = every.iter().map(|(_, sentence)| *sentence).collect();
    assert_eq!(sentences.len(), every.len(), "one sentence a reason: {:?}", every);
    assert!(sentences.iter().all(|s| s.ends_with('.') && !s.contains('\n')), "{:?}", sentences);

    // A number the library does not know: the number, and no sentence.
    assert_eq!((Unauthorized::Other(999).to_string(), Unauthorized::Other(999).user_message()), ("999".to_string(), ""));
    // A known number, however it was made, is that reason.
    assert_eq!(Closed::Other(41).to_string(), "SIGN_IN_TIMED_OUT");
}

#[test]
fn a_typed_code_loses_its_spaces_and_dashes_only() {
    let cases = [
        ("123456", Some("123456")),
        ("123 456", Some("123456")),
        (" 123-456\n", Some("123456")),
        ("12345", None),
        ("1234567", None),
        ("12a456", None),
        ("", None),
        ("12\u{0}3456", None),
    ];
    for (typed, code) in cases {
        assert_eq!(normalize_totp_code(typed).as_deref(), code, "{:?}", typed);
    }
}

#[test]
fn an_opener_that_finds_no_browser_ends_the_sign_in_at_once_with_the_url() {
    let redirect = loopback_redirect();
    let environment = environment(false, &redirect);
    let auth = PortalAuth::new(&options(&environment, &redirect)).unwrap();
    let given = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&given);
    auth.set_browser_opener(Some(Box::new(move |url: &str, _: bool| {
        seen.lock().unwrap().push(url.to_string());
        Err(io::Error::new(io::ErrorKind::NotFound, "no browser on this machine"))
    })));
    let started = Instant::now();
    // A wait would end as SignInClosed after two minutes: it ends at once instead.
    let error = auth.sign_in_with_apple(Some(Duration::from_secs(120))).wait().map(|_| ()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    let given = given.lock().unwrap().clone();
    assert_eq!(given.len(), 1);
    assert!(given[0].contains("/_emulator/oauth/apple/authorize?state="), "{}", given[0]);
    assert!(!error.to_string().contains(&given[0]), "the URL is not in the message: {}", error);
    let source = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<io::Error>());
    assert_eq!(source.map(|source| (source.kind(), source.to_string())),
               Some((io::ErrorKind::NotFound, "no browser on this machine".to_string())));
    match error {
        Error::SignInUnavailable { reason: SignInUnavailableReason::NoBrowser, url: Some(url), cause: Some(_), .. } => {
            assert_eq!(url, given[0])
        }
        other => panic!("expected SignInUnavailable with NoBrowser and the URL, got {:?}", other),
    }
    // The sign-in is over: another may start (its opener fails otherwise).
    auth.set_browser_opener(Some(Box::new(|_: &str, _: bool| Err(io::Error::new(io::ErrorKind::Other, "the opener broke")))));
    match auth.sign_in_with_google(None).wait().map(|_| ()).unwrap_err() {
        error @ Error::SignInUnavailable { reason: SignInUnavailableReason::OpenerFailed, url: None, .. } => {
            let source = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<io::Error>());
            assert_eq!(source.map(|source| (source.kind(), source.to_string())),
                       Some((io::ErrorKind::Other, "the opener broke".to_string())));
        }
        other => panic!("expected SignInUnavailable with OpenerFailed, got {:?}", other),
    }
}
