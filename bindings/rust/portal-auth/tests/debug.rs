//! Every public type is `Debug` (checked by the compiler here), and none shows a secret: the
//! token of a session, the userJwt and link of a TOTP step, a host store's contents.
mod support;

use std::fmt::Debug;
use std::io;
use std::sync::Arc;

use portal_auth::*;
use support::*;

fn debug<T: Debug>() {}

#[test]
fn every_public_type_is_debug() {
    debug::<AuthMethod>();
    debug::<AuthMethods>();
    debug::<Authenticated>();
    debug::<Call<()>>();
    debug::<Cause>();
    debug::<Error>();
    debug::<Forwarded>();
    debug::<LogLevel>();
    debug::<MagicLinkConfig>();
    debug::<Options>();
    debug::<NextRedirect<'static>>();
    debug::<PortalAuth>();
    debug::<Redirects>();
    debug::<Session>();
    debug::<SignInClosedReason>();
    debug::<SignInResult>();
    debug::<SignInUnavailableReason>();
    debug::<Storage>();
    debug::<StorageFailureReason>();
    debug::<TerminalColors>();
    debug::<TotpRequired>();
    debug::<UnauthorizedReason>();
}

struct Secretive;

impl SessionStore for Secretive {
    fn get(&self) -> io::Result<Option<String>> {
        Ok(Some("{\"clientSessionToken\":\"cst_secret\",\"endUserId\":\"eu_1\"}".to_string()))
    }
    fn set(&self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn delete(&self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn no_debug_shows_a_secret() {
    let environment = environment(false, APP_REDIRECT);
    let mut options = options(&environment, APP_REDIRECT);
    options.storage = Storage::Host(Arc::new(Secretive));
    let shown = format!("{:?}", options);
    assert!(shown.contains("Host(..)") && !shown.contains("cst_secret"), "{}", shown);

    let auth = PortalAuth::new(&options).unwrap();
    assert!(format!("{:?}", auth).starts_with("PortalAuth {"));
    let call = auth.restore_session();
    assert!(format!("{:?}", call).starts_with("Call {"));
    let session = call.wait().unwrap().expect("the store's session");
    assert_eq!(session.token().unwrap(), "cst_secret");
    let shown = format!("{:?}", session);
    assert!(shown.contains("eu_1") && !shown.contains("cst_secret"), "{}", shown);

    let step = TotpRequired {
        user_jwt: "eyJhbGciOi.secret.jwt".into(),
        totp_link: Some("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP".into()),
        end_user_id: "eu_2".into(),
        expires_at: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_900_000_000)),
    };
    let shown = format!("{:?}", SignInResult::TotpRequired(step));
    assert!(shown.contains("eu_2") && !shown.contains("eyJ") && !shown.contains("JBSW"), "{}", shown);
    assert!(shown.contains("expires_at: Some(") && shown.contains("1900000000"), "{}", shown);
}
