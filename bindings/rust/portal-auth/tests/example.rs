//! The example program `sign_in`, driven through its standard input: magic link with TOTP
//! enrollment and the link pasted (a code that is not six digits and a wrong one asked again), then `--restore` in another run (the keyring); with a
//! loopback redirect URL, signed in with nothing pasted once Chromium opens the email.
mod support;

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use support::*;

/// Built by `cargo test` beside this test's binary: target/debug/examples/sign_in.
fn example() -> Command {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    Command::new(deps.parent().unwrap().join("examples").join("sign_in"))
}

/// Reads the child's output until it ends with `prompt`; what was read.
fn expect(output: &mut impl Read, prompt: &str) -> String {
    let mut text = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&text).ends_with(prompt) {
        assert_eq!(output.read(&mut byte).unwrap(), 1, "output ended before {:?}: {}", prompt, String::from_utf8_lossy(&text));
        text.push(byte[0]);
    }
    String::from_utf8(text).unwrap()
}

/// Starts the example with `arguments` and a magic-link configuration, and answers its email
/// prompt with `email`; the child, its input and its output.
fn start_signing_in(arguments: &[&str], email: &str) -> (Child, ChildStdin, ChildStdout) {
    let mut child = example()
        .args(arguments)
        .args(["--from-email", "hello@auth.example.com", "--template-id", "sign-in"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut input, mut output) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    expect(&mut output, "Email: ");
    writeln!(input, "{}", email).unwrap();
    expect(&mut output, "Link: ");
    (child, input, output)
}

#[test]
fn the_example_signs_in_with_totp_and_restores() {
    let environment = environment(true, APP_REDIRECT);
    let email = "rust-example@example.com";
    let arguments = ["--api-host", &api_host(), "--environment", &environment];
    let (mut child, mut input, mut output) = start_signing_in(&arguments, email);
    writeln!(input, "{}", mail(email, 1, "link")).unwrap(); // a custom scheme: pasted
    let shown = expect(&mut output, "Code from your authenticator app: ");
    assert!(shown.contains("or enter this key in it by hand: ") && shown.contains('█'));
    // Not six digits: asked again, nothing sent; a wrong code: the library's sentence, and
    // asked again; the right one, as an authenticator app shows it.
    writeln!(input, "12a 456").unwrap();
    assert_eq!(expect(&mut output, "Code from your authenticator app: "), "The code is six digits.\nCode from your authenticator app: ");
    let code = current_code(&environment, email);
    writeln!(input, "{:06}", (code.parse::<u32>().unwrap() + 500_000) % 1_000_000).unwrap();
    let retype = format!("{}\nCode from your authenticator app: ", portal_auth::UnauthorizedReason::TotpCodeRejected.user_message());
    assert_eq!(expect(&mut output, "Code from your authenticator app: "), retype);
    writeln!(input, "{} {}", &code[..3], &code[3..]).unwrap();
    let mut rest = String::new();
    output.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(rest.starts_with("Signed in as eu_"), "{}", rest);

    let restored = example().args(arguments).arg("--restore").output().unwrap();
    assert!(restored.status.success());
    assert_eq!(String::from_utf8(restored.stdout).unwrap(), rest);

    let unknown = example().args(arguments).arg("--frobnicate").output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn with_a_loopback_redirect_url_the_example_signs_in_with_nothing_pasted() {
    let redirect_url = loopback_redirect();
    let environment = environment(false, &redirect_url);
    let email = "rust-example-loopback@example.com";
    let arguments = ["--api-host", &api_host(), "--environment", &environment, "--redirect-url", &redirect_url];
    let (mut child, input, mut output) = start_signing_in(&arguments, email);
    let page = chromium(&mail(email, 1, "emailLink"));
    assert!(page.contains("You are signed in."), "the page Chromium ended on: {}", page);
    let mut rest = String::new();
    output.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(rest.trim_start().starts_with("Signed in as eu_"), "{}", rest);
    drop(input);
}
