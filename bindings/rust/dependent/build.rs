//! The library's folder, exported by portal-auth-sys, in this program's run path.
fn main() {
    let dir = std::env::var("DEP_PORTALAUTH_LIBDIR").expect("portal-auth-sys exports the library's folder");
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", dir);
}
