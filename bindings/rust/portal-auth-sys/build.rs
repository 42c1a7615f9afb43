//! Links libportalauth: its folder from `PORTAL_AUTH_LIB_DIR`, else from pkg-config's
//! `portal-auth` (the program `$PKG_CONFIG` names, else `pkg-config`, as the pkg-config crate
//! and Autoconf choose it: the crate has no dependencies). Linked as
//! `-lportalauth`, through the `libportalauth.so` link, a program records the library's
//! soname, libportalauth.so.0, and loads that.
//!
//! The folder is this package's metadata (`links = "portalauth"`): the build script of a
//! package that depends on this one directly reads it as `DEP_PORTALAUTH_LIBDIR`, to put the
//! folder in the run path of its own programs (see the README). This package's own tests
//! get it here.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PORTAL_AUTH_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");
    let dir = env::var("PORTAL_AUTH_LIB_DIR").unwrap_or_else(|_| pkg_config_variable("libdir"));
    println!("cargo:rustc-link-search=native={}", dir);
    println!("cargo:rustc-link-lib=dylib=portalauth");
    println!("cargo:libdir={}", dir);
    // The repository's tests only: the published crate carries none, and cargo refuses a
    // test link argument for a package without test targets.
    if std::path::Path::new("tests").is_dir() {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir);
    }
}

fn pkg_config_variable(variable: &str) -> String {
    let not_found = "libportalauth not found: install libportalauth-dev (or unpack the release archive, \
                     or run `make install PREFIX=...` in the repository), then set \
                     PKG_CONFIG_PATH=PREFIX/lib/pkgconfig (or PORTAL_AUTH_LIB_DIR=PREFIX/lib) if it is not the system's";
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(&program)
        .args([&format!("--variable={}", variable), "portal-auth"])
        .output()
        .unwrap_or_else(|error| panic!("{} ({}: {})", not_found, program, error));
    let value = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || value.is_empty() {
        panic!("{} ({})", not_found, String::from_utf8_lossy(&output.stderr).trim());
    }
    value
}
