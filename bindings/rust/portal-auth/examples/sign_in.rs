//! Signs a user in by magic link, with TOTP (enrolling an authenticator app on the first
//! sign-in), and keeps the session in the desktop keyring; `--restore` prints the user.
//!
//!     cargo run --example sign_in -- --environment ID --from-email EMAIL --template-id ID
//!         [--api-host HOST] [--redirect-url URL] [--restore]
//!
//! With a loopback redirect URL that Portal allow-lists (`http://127.0.0.1:8765/callback`)
//! it signs in in one call: the browser the user opens the email in brings the redirect
//! back, with nothing to paste. The link may still be pasted (the user opened the email on
//! another device); with a custom scheme (`myapp://auth/callback`, the default) pasting it
//! is the way.
use std::future::Future;
use std::io::{self, BufRead, Write};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use portal_auth::{
    normalize_totp_code, Call, Error, MagicLinkConfig, Options, PortalAuth, Session, SignInResult, SignInUnavailableReason,
    TerminalColors, UnauthorizedReason,
};

/// What the program waits for: a line of standard input, its end, or the sign-in's waker.
enum Event {
    Line(String),
    InputEnded,
    Woken,
}

/// Standard input, read on a thread of its own, so that a line and the sign-in can be waited
/// for together.
struct Input {
    events: Receiver<Event>,
    /// The waker's way in; held here, so that the channel never closes.
    sender: Sender<Event>,
}

impl Input {
    fn start() -> Input {
        let (sender, events) = mpsc::channel();
        let lines = sender.clone();
        thread::spawn(move || {
            for line in io::stdin().lock().lines().map_while(Result::ok) {
                if lines.send(Event::Line(line.trim_end().to_string())).is_err() {
                    return;
                }
            }
            let _ = lines.send(Event::InputEnded);
        });
        Input { events, sender }
    }

    /// The next event (input ends once, then only wakes come).
    fn next(&mut self) -> Event {
        self.events.recv().unwrap_or(Event::InputEnded)
    }

    fn ask(&mut self, prompt: &str) -> io::Result<String> {
        print!("{}", prompt);
        io::stdout().flush()?;
        loop {
            match self.next() {
                Event::Line(line) => return Ok(line),
                Event::InputEnded => {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "input ended before the sign-in did"))
                }
                Event::Woken => {}
            }
        }
    }
}

/// Wakes the main thread through the input's channel.
struct PostWoken(Mutex<Sender<Event>>);

impl Wake for PostWoken {
    fn wake(self: Arc<Self>) {
        let _ = self.0.lock().unwrap().send(Event::Woken);
    }
}

type Failure = Box<dyn std::error::Error>;

/// A link pasted at the prompt: its outcome, or None (asked again) when it is no sign-in link.
fn pasted(auth: &PortalAuth, link: &str) -> Result<Option<SignInResult>, Error> {
    let result = auth.handle_redirect(link).wait()?;
    if result.is_none() {
        print!("That is not a sign-in link of this app. Link: ");
        let _ = io::stdout().flush();
    }
    Ok(result)
}

/// In one call with a loopback redirect URL: the sign-in polled with a waker that posts to
/// the input's channel, beside the lines the user may paste. With a custom scheme (nothing
/// was sent) the link is emailed, and pasting it is the way.
fn sign_in_by_magic_link(auth: &PortalAuth, input: &mut Input, email: &str) -> Result<SignInResult, Failure> {
    let mut signing_in: Option<Call<SignInResult>> = Some(auth.sign_in_with_magic_link(email, None));
    let waker = Waker::from(Arc::new(PostWoken(Mutex::new(input.sender.clone()))));
    let mut context = Context::from_waker(&waker);
    print!("A sign-in link is on its way to {}. Open it, or paste it here.\nLink: ", email);
    io::stdout().flush()?;
    loop {
        if let Some(call) = signing_in.as_mut() {
            match Pin::new(call).poll(&mut context) {
                Poll::Ready(Err(Error::SignInUnavailable { reason: SignInUnavailableReason::RedirectNotLoopback, .. })) => {
                    auth.send_magic_link(email).wait()?;
                    signing_in = None;
                }
                Poll::Ready(outcome) => {
                    println!();
                    return Ok(outcome?);
                }
                Poll::Pending => {}
            }
        }
        match input.next() {
            // A pasted link completes the waiting sign-in too, with the same outcome.
            Event::Line(line) => {
                if let Some(result) = pasted(auth, &line)? {
                    return Ok(result);
                }
            }
            Event::InputEnded if signing_in.is_none() => {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "input ended before the sign-in did").into())
            }
            Event::InputEnded | Event::Woken => {} // the browser may still come
        }
    }
}

fn sign_in(auth: &PortalAuth) -> Result<Session, Failure> {
    let mut input = Input::start();
    let email = input.ask("Email: ")?;
    match sign_in_by_magic_link(auth, &mut input, &email)? {
        SignInResult::Authenticated(authenticated) => Ok(authenticated.session),
        SignInResult::TotpRequired(step) => {
            if step.totp_link.is_some() {
                println!("Two-step verification: scan this code with your authenticator app,");
                print!("{}", step.qr_code_terminal(TerminalColors::LightOnDark)?);
                println!("or enter this key in it by hand: {}", step.totp_secret().unwrap_or_default());
            }
            // Asked again until the server accepts one: what was typed, tidied ("123 456"), is
            // six digits, or nothing is sent.
            loop {
                let typed = input.ask("Code from your authenticator app: ")?;
                let code = match normalize_totp_code(&typed) {
                    Some(code) => code,
                    None => {
                        println!("The code is six digits.");
                        continue;
                    }
                };
                match auth.verify_totp(&code, &step.user_jwt).wait() {
                    Ok(signed_in) => return Ok(signed_in.session),
                    Err(Error::Unauthorized { reason: Some(reason @ UnauthorizedReason::TotpCodeRejected), .. }) => {
                        println!("{}", reason.user_message())
                    }
                    Err(error) => return Err(error.into()),
                }
            }
        }
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
