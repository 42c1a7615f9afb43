//! Puts libportalauth's folder, which portal-auth-sys exports as `DEP_PORTALAUTH_LIBDIR`, in
//! the run path of this package's tests, examples and doctests: the way a program that
//! depends on the crates finds the library at run time (the README shows it).
use std::env;

fn main() {
    let dir = env::var("DEP_PORTALAUTH_LIBDIR").expect("portal-auth-sys exports the library's folder");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
}
