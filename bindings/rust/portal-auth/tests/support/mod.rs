//! What the tests share: the Portal emulator (the one in PORTAL_AUTH_TEST_API_HOST, else one
//! started for this test binary, which stops when the binary exits and closes its stdin),
//! its control endpoints over a small HTTP/1.1 client, fresh environments, and a std-only
//! executor for the futures.
#![allow(dead_code)]

use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use portal_auth::{MagicLinkConfig, Options, Storage};

static EMULATOR: Mutex<Option<String>> = Mutex::new(None);
static ENVIRONMENTS: AtomicUsize = AtomicUsize::new(0);

/// The emulator's base URL, e.g. `http://127.0.0.1:40123`.
pub fn api_host() -> String {
    let mut emulator = EMULATOR.lock().unwrap();
    if let Some(host) = emulator.as_ref() {
        return host.clone();
    }
    let host = std::env::var("PORTAL_AUTH_TEST_API_HOST").unwrap_or_else(|_| start_emulator());
    *emulator = Some(host.clone());
    host
}

fn start_emulator() -> String {
    let emulator = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../emulator");
    let mut child = Command::new("python3")
        .args(["-m", "portal_auth_emulator", "--port", "0", "--stop-on-stdin-eof"])
        .env("PYTHONPATH", emulator)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the Portal emulator");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let host = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(host.starts_with("http://127.0.0.1:"), "the emulator said {:?}", line);
    // Its stdin stays open until this process exits; then the emulator stops.
    std::mem::forget(child);
    host
}

/// GET (no body), POST or DELETE an emulator control endpoint; the answer's body.
pub fn control(method: &str, path: &str, body: Option<&str>) -> String {
    let host = api_host();
    let address = host.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    let body = body.unwrap_or("");
    write!(
        stream,
        "{} /_emulator/{} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        method, path, address, body.len(), body
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 2"), "{} {}: {}", method, path, head);
    body.to_string()
}

/// The value of the last `"key":"value"` in the emulator's compact JSON.
pub fn json_string(json: &str, key: &str) -> Option<String> {
    let pattern = format!("\"{}\":\"", key);
    let start = json.rfind(&pattern)? + pattern.len();
    let length = json[start..].find('"')?;
    Some(json[start..start + length].to_string())
}

/// A fresh environment (so that each test has its own keyring item); its id.
pub fn environment(totp: bool, redirect_url: &str) -> String {
    let id = format!("env-rust-{}-{}", std::process::id(), ENVIRONMENTS.fetch_add(1, Ordering::SeqCst));
    let body = format!(
        "{{\"id\":\"{}\",\"allowedMethods\":[\"EMAIL_MAGIC_LINK\",\"GOOGLE\",\"APPLE\"],\"redirectUrls\":[\"{}\"],\
         \"totpRequired\":{},\"accountAbstraction\":false,\"autoCreateWallet\":true}}",
        id, redirect_url, totp
    );
    control("POST", "environments", Some(&body));
    id
}

/// Options of a client of `environment` at the emulator, with a magic-link configuration,
/// keeping its session in the keyring.
pub fn options(environment: &str, redirect_url: &str) -> Options {
    let mut options = Options::new(environment, redirect_url);
    options.api_host = Some(api_host());
    options.magic_link =
        Some(MagicLinkConfig::new("hello@auth.example.com", "sign-in"));
    options.storage = Storage::Keyring;
    options
}

pub const APP_REDIRECT: &str = "myapp://auth/callback";

/// The link of the last email to `email`.
pub fn outbox_link(email: &str) -> String {
    let answer = control("GET", &format!("outbox?email={}", email.replace('@', "%40")), None);
    json_string(&answer, "link").expect("a link in the outbox")
}

/// The code the user's authenticator app shows now.
pub fn current_code(environment: &str, email: &str) -> String {
    let answer = control("GET", &format!("totp?environmentId={}&email={}", environment, email.replace('@', "%40")), None);
    json_string(&answer, "code").expect("a TOTP code")
}

/// A redirect URL carrying a fresh magic-link grant.
pub fn grant_redirect(environment: &str, email: &str) -> String {
    let body = format!("{{\"environmentId\":\"{}\",\"email\":\"{}\",\"kind\":\"magic\"}}", environment, email);
    let token = json_string(&control("POST", "grants", Some(&body)), "token").unwrap();
    format!("{}?token={}&authMethod=EMAIL_MAGIC_LINK", APP_REDIRECT, token)
}

/// A loopback redirect URL on a port nobody listens on now.
pub fn loopback_redirect() -> String {
    format!("http://127.0.0.1:{}/callback", free_port())
}

/// A loopback port nobody listens on now, for the test's own listener: the emulator hands it
/// out (emulator/README.md, `GET loopback-port`).
pub fn free_port() -> u16 {
    let answer = control("GET", "loopback-port", None);
    answer
        .strip_prefix("{\"port\":")
        .and_then(|rest| rest.strip_suffix('}'))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("the emulator handed out no loopback port: {}", answer))
}

/// A tiny executor: polls the future on this thread, parking until its waker is woken.
/// Counts the wakes, so that a test can see the future was driven by its waker.
pub struct Wakes {
    count: Mutex<usize>,
    woken: Condvar,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        *self.count.lock().unwrap() += 1;
        self.woken.notify_all();
    }
}

/// Runs `future` to completion; its output and how many times its waker was woken.
pub fn block_on<F: Future>(future: F) -> (F::Output, usize) {
    let wakes = Arc::new(Wakes { count: Mutex::new(0), woken: Condvar::new() });
    let waker = Waker::from(Arc::clone(&wakes));
    let mut context = Context::from_waker(&waker);
    let mut future = Box::pin(future);
    let mut seen = 0;
    loop {
        if let Poll::Ready(output) = Pin::as_mut(&mut future).poll(&mut context) {
            return (output, *wakes.count.lock().unwrap());
        }
        let mut count = wakes.count.lock().unwrap();
        while *count == seen {
            count = wakes.woken.wait(count).unwrap();
        }
        seen = *count;
    }
}

/// The `key` ("link", or "emailLink" for the email's button) of the last email to `email`,
/// once `count` were sent (the emulator waits up to 30 s for them).
pub fn mail(email: &str, count: usize, key: &str) -> String {
    let path = format!("outbox?email={}&count={}&timeout=30", email.replace('@', "%40"), count);
    json_string(&control("GET", &path, None), key).expect("the email's link")
}

/// Debian's Chromium, headless, opening `url` as the user's browser, in a PID namespace of its
/// own (none of its processes outlives it), with a fresh profile; the DOM of the page it ends
/// on. It is stopped after a minute at most.
pub fn chromium(url: &str) -> String {
    let profile = std::env::temp_dir().join(format!("portal-auth-rust-chromium-{}-{}", std::process::id(), ENVIRONMENTS.fetch_add(1, Ordering::SeqCst)));
    std::fs::create_dir_all(&profile).unwrap();
    let mut command = Command::new("unshare");
    // SAFETY: geteuid has no precondition.
    if unsafe { geteuid() } != 0 {
        command.arg("--map-root-user");
    }
    let mut child = command
        .args(["--pid", "--fork", "--kill-child", "--mount-proc", "/usr/bin/chromium", "--headless=new", "--no-sandbox"])
        .args(["--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-proxy-server"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .env_clear()
        .env("HOME", &profile)
        .env("PATH", "/usr/bin:/bin")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("unshare runs /usr/bin/chromium");
    let mut output = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut page = String::new();
        let _ = output.read_to_string(&mut page);
        let _ = sender.send(page);
    });
    let page = receiver.recv_timeout(std::time::Duration::from_secs(60)).unwrap_or_default();
    let _ = child.kill();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    page
}

extern "C" {
    fn geteuid() -> u32;
}
