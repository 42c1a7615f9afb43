//! Signs a user in by magic link, with TOTP (enrolling an authenticator app on the first
//! sign-in), and keeps the session in the desktop keyring; `--restore` prints the user.
//!
//!     cargo run --example sign_in -- --environment ID --from-email EMAIL --template-id ID
//!         [--api-host HOST] [--redirect-url URL] [--restore]
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use portal_auth::{Error, MagicLinkConfig, Options, PortalAuth, Session, SignInResult, TerminalColors};

fn ask(prompt: &str) -> io::Result<String> {
    print!("{}", prompt);
    io::stdout().flush()?;
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line)? == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "input ended before the sign-in did"));
    }
    Ok(line.trim_end().to_string())
}

fn sign_in(auth: &PortalAuth) -> Result<Session, Box<dyn std::error::Error>> {
    let email = ask("Email: ")?;
    auth.send_magic_link(&email).wait()?;
    println!("We emailed a sign-in link to {}. Open it, or paste it here.", email);
    let mut result = auth.handle_redirect(&ask("Link: ")?).wait()?;
    while result.is_none() {
        result = auth.handle_redirect(&ask("That is not a sign-in link of this app. Link: ")?).wait()?;
    }
    match result {
        Some(SignInResult::Authenticated(authenticated)) => Ok(authenticated.session),
        Some(SignInResult::TotpRequired(step)) => {
            if step.totp_link.is_some() {
                println!("Two-step verification: scan this code with your authenticator app,");
                print!("{}", step.qr_code_terminal(TerminalColors::LightOnDark)?);
                println!("or enter this key in it by hand: {}", step.totp_secret().unwrap_or_default());
            }
            let code = ask("Code from your authenticator app: ")?;
            Ok(auth.verify_totp(&code, &step.user_jwt).wait()?.session)
        }
        None => unreachable!("asked again until a sign-in link came"),
    }
}

fn main() -> ExitCode {
    let mut options = Options::new("", "myapp://auth/callback");
    let (mut from_email, mut template_id, mut restore) = (String::new(), String::new(), false);
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = || arguments.next().unwrap_or_default();
        match argument.as_str() {
            "--environment" => options.auth_environment_id = value(),
            "--api-host" => options.api_host = Some(value()),
            "--redirect-url" => options.redirect_url = value(),
            "--from-email" => from_email = value(),
            "--template-id" => template_id = value(),
            "--restore" => restore = true,
            other => {
                eprintln!("sign_in: unknown argument {} (see the comment at the top of examples/sign_in.rs)", other);
                return ExitCode::from(2);
            }
        }
    }
    if !from_email.is_empty() || !template_id.is_empty() {
        options.magic_link = Some(MagicLinkConfig::new(&from_email, &template_id));
    }
    let outcome = PortalAuth::new(&options).map_err(Box::from).and_then(|auth| {
        let stored = auth.restore_session().wait()?;
        match (stored, restore) {
            (Some(session), _) => Ok(Some(session)),
            (None, true) => Ok(None),
            (None, false) => sign_in(&auth).map(Some),
        }
    });
    match outcome {
        Ok(Some(session)) => {
            println!("Signed in as {}.", session.end_user_id());
            ExitCode::SUCCESS
        }
        Ok(None) => {
            println!("Not signed in.");
            ExitCode::from(1)
        }
        Err(error) => {
            let code = error.downcast_ref::<Error>().map_or(3, |error| 10 + error.code());
            eprintln!("sign_in: {}", error);
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
    }
}
