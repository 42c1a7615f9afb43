//! Prints the version of the library it loaded and whether a client of `--api-host URL`
//! (an emulator) sees the methods of environment `--environment ID`: what a program built
//! on the crates does first, run as it was built.
use std::env;
use std::process::ExitCode;

use portal_auth::{Options, PortalAuth, Storage};

fn main() -> ExitCode {
    let arguments: Vec<String> = env::args().collect();
    let value = |name: &str| arguments.iter().position(|a| a == name).and_then(|i| arguments.get(i + 1)).cloned();
    println!("libportalauth {}", portal_auth::version());
    let (api_host, environment) = match (value("--api-host"), value("--environment")) {
        (Some(api_host), Some(environment)) => (api_host, environment),
        _ => return ExitCode::SUCCESS,
    };
    let mut options = Options::new(&environment, "myapp://auth/callback");
    options.api_host = Some(api_host);
    options.storage = Storage::Memory;
    match PortalAuth::new(&options).and_then(|auth| auth.get_methods().wait()) {
        Ok(methods) => {
            println!("methods: {:?}", methods.allowed_auth_methods);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{}", error);
            ExitCode::FAILURE
        }
    }
}
