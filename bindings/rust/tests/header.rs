//! The extern declarations of `src/ffi.rs` against the prototypes of `include/portal_auth.h`:
//! the same functions, each with the same parameter and return types (C types mapped to
//! their Rust spelling). Fails when a function is added, removed or changes signature.
use std::collections::BTreeMap;

const HEADER: &str = include_str!("../../../include/portal_auth.h");
const FFI: &str = include_str!("../src/ffi.rs");

/// Name → (parameter types, return type), in Rust's spelling.
type Signatures = BTreeMap<String, (Vec<String>, String)>;

/// A C type of the header (`const char *`, `portal_auth_call **`, …) in Rust's spelling
/// (`*const c_char`, `*mut *mut portal_auth_call`).
fn rust_type(c_type: &str) -> String {
    let spaced = c_type.replace('*', " * ");
    let mut words = spaced.split_whitespace();
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

/// The header without its comments and preprocessor lines (continued ones included).
fn declarations_text(header: &str) -> String {
    let mut code = String::new();
    let mut rest = header;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = &rest[start + 2..];
        rest = &rest[rest.find("*/").map_or(rest.len(), |end| end + 2)..];
    }
    code.push_str(rest);
    let mut kept = String::new();
    let mut continued = false;
    for line in code.lines() {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end().ends_with('\\');
        if !directive {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The function prototypes of the header: `RETURN portal_auth_NAME(PARAMETERS);`, the return
/// type reaching back to the end of the previous declaration. Parameters hold no
/// parentheses: callbacks are typedefs.
fn header_signatures(header: &str) -> Signatures {
    let code = declarations_text(header);
    let mut signatures = Signatures::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("portal_auth_") {
        let start = from + found;
        from = start + 1;
        let name_end = start + code[start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(0);
        let after = code[name_end..].trim_start();
        let preceded = code[..start].chars().next_back().map_or(false, |c| c == ' ' || c == '*' || c == '\n');
        if !after.starts_with('(') || !preceded {
            continue;
        }
        let open = code.len() - after.len();
        let close = open + code[open..].find(')').expect("a parameter list");
        if !code[close + 1..].trim_start().starts_with(';') || code[open + 1..close].contains('(') {
            continue;
        }
        let head_start = code[..start].rfind(|c| c == ';' || c == '{' || c == '}').map_or(0, |at| at + 1);
        let return_type = code[head_start..start].trim();
        if return_type.is_empty() || return_type.starts_with("typedef") {
            continue;
        }
        let parameters = code[open + 1..close].trim();
        let types = if parameters == "void" {
            Vec::new()
        } else {
            parameters
                .split(',')
                .map(|parameter| {
                    // The name is the last word; the stars before it belong to the type.
                    let parameter = parameter.trim();
                    let split = parameter.rfind(|c: char| c == ' ' || c == '*').expect("a named parameter");
                    rust_type(&parameter[..=split])
                })
                .collect()
        };
        signatures.insert(code[start..name_end].to_string(), (types, rust_type(return_type)));
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
    // A prototype the parser missed would be ffi.rs's alone, and reported above.
    assert!(header_signatures(HEADER).len() >= 50);
}

#[test]
fn the_check_sees_a_function_added_removed_or_changed() {
    let added = format!("{}\nvoid portal_auth_new_thing(int32_t x);\n", HEADER);
    assert_eq!(disagreements(&added, FFI), vec!["portal_auth_new_thing is declared in the header, not in ffi.rs"]);

    let removed = HEADER.replace("void portal_auth_call_free(portal_auth_call *call);", "");
    assert_ne!(removed, HEADER);
    assert_eq!(disagreements(&removed, FFI), vec!["portal_auth_call_free is declared in ffi.rs, not in the header"]);

    let parameter = HEADER.replace("int32_t scale, uint8_t **out_png", "double scale, uint8_t **out_png");
    assert_ne!(parameter, HEADER);
    assert_eq!(disagreements(&parameter, FFI).len(), 1);

    let returned = HEADER.replace("int32_t portal_auth_version_number(void);", "int64_t portal_auth_version_number(void);");
    assert_ne!(returned, HEADER);
    assert_eq!(disagreements(&returned, FFI).len(), 1);

    let pointer = HEADER.replace(
        "void portal_auth_session_release(portal_auth_session *session);",
        "void portal_auth_session_release(const portal_auth_session *session);",
    );
    assert_ne!(pointer, HEADER);
    assert_eq!(disagreements(&pointer, FFI).len(), 1);
}

#[test]
fn c_types_in_rust_spelling() {
    assert_eq!(rust_type("const char *"), "*const c_char");
    assert_eq!(rust_type("char const *"), "*const c_char");
    assert_eq!(rust_type("portal_auth_call **"), "*mut *mut portal_auth_call");
    assert_eq!(rust_type("const portal_auth_error *"), "*const portal_auth_error");
    assert_eq!(rust_type("void"), "()");
    assert_eq!(rust_type("size_t"), "usize");
    assert_eq!(rust_type("portal_auth_done_fn"), "portal_auth_done_fn");
}

/// The version macros of portal_auth.h and the library's runtime version agree.
#[test]
fn the_library_is_the_version_of_the_header() {
    let line = HEADER.lines().find(|line| line.starts_with("#define PORTAL_AUTH_VERSION_STRING ")).unwrap();
    let version = line.split('"').nth(1).unwrap();
    assert_eq!(portal_auth::version(), version);
}
