//! The extern declarations of `src/ffi.rs` against the prototypes of `include/portal_auth.h`:
//! the same functions, each with the same parameter and return types (C types mapped to
//! their Rust spelling). Fails when a function is added, removed or changes signature.
use std::collections::BTreeMap;

const HEADER: &str = include_str!("../../../include/portal_auth.h");
const TYPES_HEADER: &str = include_str!("../../../include/portal_auth_types.h");
const FFI: &str = include_str!("../src/ffi.rs");

/// Name → (parameter types, return type), in Rust's spelling.
type Signatures = BTreeMap<String, (Vec<String>, String)>;

/// A C type of the generated header (`char const * _Nullable`, `portal_auth_call * _Nullable
/// * _Nullable`, …) in Rust's spelling (`*const c_char`, `*mut *mut portal_auth_call`).
fn rust_type(c_type: &str) -> String {
    let mut words = c_type.split_whitespace().filter(|word| !matches!(*word, "_Nullable" | "_Nonnull" | "_Null_unspecified"));
    let mut constant = false;
    let mut base = words.next().unwrap_or_default();
    if base == "const" {
        constant = true;
        base = words.next().unwrap_or_default();
    }
    let mut rust = match base {
        "void" => "c_void",
        "char" => "c_char",
        "int" => "c_int",
        "uint8_t" => "u8",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "size_t" => "usize",
        "ptrdiff_t" => "isize",
        "double" => "f64",
        other => other, // the library's own types keep their names
    }
    .to_string();
    let mut pointers = 0;
    for word in words {
        match word {
            "const" => constant = true,
            "*" => {
                rust = format!("*{} {}", if constant { "const" } else { "mut" }, rust);
                constant = false;
                pointers += 1;
            }
            other => panic!("unexpected word {:?} in the C type {:?}", other, c_type),
        }
    }
    if pointers == 0 && rust == "c_void" {
        "()".to_string()
    } else {
        rust
    }
}

/// The `SWIFT_EXTERN` prototypes of the generated header.
fn header_signatures(header: &str) -> Signatures {
    let mut signatures = Signatures::new();
    for line in header.lines().filter(|line| line.starts_with("SWIFT_EXTERN ")) {
        let declaration = line.trim_start_matches("SWIFT_EXTERN ");
        let open = declaration.find('(').expect("a parameter list");
        // Parameters hold no parentheses: callbacks are typedefs.
        let close = open + declaration[open..].find(')').expect("a parameter list");
        let head = &declaration[..open];
        let split = head.trim_end().rfind(|c: char| c == ' ' || c == '*').expect("a return type");
        let (return_type, name) = (&head[..=split], head[split + 1..].trim());
        let parameters = &declaration[open + 1..close];
        let types = if parameters.trim() == "void" {
            Vec::new()
        } else {
            parameters
                .split(',')
                .map(|parameter| {
                    let parameter = parameter.trim();
                    // The last word is the parameter's name.
                    rust_type(&parameter[..parameter.rfind(' ').expect("a named parameter")])
                })
                .collect()
        };
        signatures.insert(name.to_string(), (types, rust_type(return_type)));
    }
    signatures
}

/// The functions of the `extern "C"` block of ffi.rs.
fn rust_signatures(source: &str) -> Signatures {
    let block = &source[source.find("extern \"C\" {").expect("an extern block")..];
    let block = &block[..block.find("\n}").expect("the end of the extern block")];
    let code: String = block
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{} ", line.trim()))
        .collect();
    let mut signatures = Signatures::new();
    for item in code.split(';').filter_map(|item| item.split("pub fn ").nth(1)) {
        let open = item.find('(').expect("a parameter list");
        let close = item.rfind(')').expect("a parameter list");
        let types = item[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|parameter| !parameter.is_empty())
            .map(|parameter| normalise(parameter.split_once(':').expect("name: type").1))
            .collect();
        let return_type = item[close + 1..].trim().trim_start_matches("->").trim();
        let return_type = if return_type.is_empty() { "()".to_string() } else { normalise(return_type) };
        signatures.insert(item[..open].trim().to_string(), (types, return_type));
    }
    signatures
}

fn normalise(rust_type: &str) -> String {
    rust_type.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every disagreement, one line each.
fn disagreements(header: &str, ffi: &str) -> Vec<String> {
    let (c, rust) = (header_signatures(header), rust_signatures(ffi));
    let mut problems = Vec::new();
    for (name, signature) in &c {
        match rust.get(name) {
            None => problems.push(format!("{} is declared in the header, not in ffi.rs", name)),
            Some(declared) if declared != signature => {
                problems.push(format!("{}: the header says {:?}, ffi.rs {:?}", name, signature, declared))
            }
            Some(_) => {}
        }
    }
    for name in rust.keys().filter(|name| !c.contains_key(*name)) {
        problems.push(format!("{} is declared in ffi.rs, not in the header", name));
    }
    problems
}

#[test]
fn the_extern_block_matches_the_header() {
    let problems = disagreements(HEADER, FFI);
    assert!(problems.is_empty(), "ffi.rs and include/portal_auth.h disagree:\n{}", problems.join("\n"));
    assert_eq!(header_signatures(HEADER).len(), HEADER.matches("\nSWIFT_EXTERN ").count());
    assert!(header_signatures(HEADER).len() >= 50);
}

#[test]
fn the_check_sees_a_function_added_removed_or_changed() {
    let added = format!("{}\nSWIFT_EXTERN void portal_auth_new_thing(int32_t x) SWIFT_NOEXCEPT;\n", HEADER);
    assert_eq!(disagreements(&added, FFI), vec!["portal_auth_new_thing is declared in the header, not in ffi.rs"]);

    let removed: String = HEADER
        .lines()
        .filter(|line| !line.contains(" portal_auth_call_free("))
        .map(|line| format!("{}\n", line))
        .collect();
    assert_eq!(disagreements(&removed, FFI), vec!["portal_auth_call_free is declared in ffi.rs, not in the header"]);

    let parameter = HEADER.replace(
        "portal_auth_totp_qr_png(char const * _Nullable otpauth_url, double scale,",
        "portal_auth_totp_qr_png(char const * _Nullable otpauth_url, int32_t scale,",
    );
    assert_ne!(parameter, HEADER);
    assert_eq!(disagreements(&parameter, FFI).len(), 1);

    let returned = HEADER.replace(
        "SWIFT_EXTERN int32_t portal_auth_version_number(void)",
        "SWIFT_EXTERN int64_t portal_auth_version_number(void)",
    );
    assert_ne!(returned, HEADER);
    assert_eq!(disagreements(&returned, FFI).len(), 1);

    let pointer = HEADER.replace(
        "portal_auth_session_release(portal_auth_session * _Nullable session)",
        "portal_auth_session_release(portal_auth_session const * _Nullable session)",
    );
    assert_ne!(pointer, HEADER);
    assert_eq!(disagreements(&pointer, FFI).len(), 1);
}

#[test]
fn c_types_in_rust_spelling() {
    assert_eq!(rust_type("char const * _Nullable"), "*const c_char");
    assert_eq!(rust_type("portal_auth_call * _Nullable * _Nullable"), "*mut *mut portal_auth_call");
    assert_eq!(rust_type("portal_auth_error const * _Nullable"), "*const portal_auth_error");
    assert_eq!(rust_type("void"), "()");
    assert_eq!(rust_type("size_t"), "usize");
    assert_eq!(rust_type("portal_auth_done_fn _Nullable"), "portal_auth_done_fn");
}

/// The version macros of portal_auth_types.h and the library's runtime version agree.
#[test]
fn the_library_is_the_version_of_the_header() {
    let line = TYPES_HEADER.lines().find(|line| line.starts_with("#define PORTAL_AUTH_VERSION_STRING ")).unwrap();
    let version = line.split('"').nth(1).unwrap();
    assert_eq!(portal_auth::version(), version);
}
