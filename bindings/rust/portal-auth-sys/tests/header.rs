//! This crate against `include/portal_auth.h`, as `scripts/header_facts.py` reads it (clang
//! for the declarations, a compiled C program for the values, sizes and offsets): the same
//! functions and callback types with the same types (C types in their Rust spelling), every
//! `PORTAL_AUTH_*` constant with its value, the integer types' sizes and signedness, and the
//! structs field by field, with their offsets and sizes. Each check is shown to fail on a
//! header that differs.
use std::collections::BTreeMap;
use std::mem::{size_of, MaybeUninit};
use std::path::{Path, PathBuf};
use std::process::Command;

use portal_auth_sys::*;

const SOURCE: &str = include_str!("../src/lib.rs");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Name → (parameter types, return type), in Rust's spelling.
type Signatures = BTreeMap<String, (Vec<String>, String)>;

/// What header_facts.py says of one header.
#[derive(Default)]
struct Facts {
    functions: Signatures,
    callbacks: Signatures,
    constants: BTreeMap<String, String>,
    structs: BTreeMap<String, usize>,
    /// struct → [(field, offset, size, Rust type)]
    fields: BTreeMap<String, Vec<(String, usize, usize, String)>>,
    /// integer type → (size, signed, an enum)
    scalars: BTreeMap<String, (usize, bool, bool)>,
}

fn facts(header: &Path) -> Facts {
    let output = Command::new("python3")
        .arg(repository().join("scripts/header_facts.py"))
        .arg(header)
        .current_dir(repository())
        .output()
        .expect("python3 runs scripts/header_facts.py");
    assert!(output.status.success(), "header_facts.py: {}", String::from_utf8_lossy(&output.stderr));
    let mut facts = Facts::default();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let signature = || (fields[3..].iter().map(|t| rust_type(t)).collect(), rust_type(fields[2]));
        let name = fields[1].to_string();
        match fields[0] {
            "function" => {
                facts.functions.insert(name, signature());
            }
            "callback" => {
                facts.callbacks.insert(name, signature());
            }
            "constant" => {
                facts.constants.insert(name, fields[2].to_string());
            }
            "struct" => {
                facts.structs.insert(name, fields[2].parse().unwrap());
            }
            "field" => facts.fields.entry(name).or_default().push((
                fields[2].to_string(),
                fields[3].parse().unwrap(),
                fields[4].parse().unwrap(),
                rust_type(fields[5]),
            )),
            "scalar" => {
                facts.scalars.insert(name, (fields[2].parse().unwrap(), fields[3] == "1", fields[4] == "enum"));
            }
            other => panic!("an unknown fact {:?}", other),
        }
    }
    facts
}

/// A C type (`const char *`, `portal_auth_call **`, `int (*)(void *, char)`) in Rust's
/// spelling (`*const c_char`, `*mut *mut portal_auth_call`, `Option<unsafe extern "C" fn(...)>`).
fn rust_type(c_type: &str) -> String {
    if let Some((returned, rest)) = c_type.split_once("(*)") {
        let inside = rest.trim().trim_start_matches('(').trim_end_matches(')');
        let parameters: Vec<String> =
            inside.split(',').map(str::trim).filter(|p| !p.is_empty() && *p != "void").map(rust_type).collect();
        return function_pointer(&parameters, &rust_type(returned.trim()));
    }
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
        "int64_t" => "i64",
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

fn function_pointer(parameters: &[String], returned: &str) -> String {
    let arrow = if returned == "()" { String::new() } else { format!(" -> {}", returned) };
    format!("Option<unsafe extern \"C\" fn({}){}>", parameters.join(", "), arrow)
}

fn normalise(rust_type: &str) -> String {
    rust_type.split_whitespace().collect::<Vec<_>>().join(" ").replace("< ", "<").replace(" >", ">").replace(",>", ">")
}

/// This crate's source without its comments, one line of code after another.
fn code() -> String {
    SOURCE.lines().filter(|line| !line.trim_start().starts_with("//")).map(|line| format!("{} ", line.trim())).collect()
}

/// `name: type` pairs, split at the commas outside brackets.
fn typed_list(list: &str) -> Vec<(String, String)> {
    let mut items = Vec::new();
    let (mut depth, mut current) = (0, String::new());
    for character in list.chars() {
        match character {
            '(' | '<' => depth += 1,
            '>' if current.ends_with('-') => {} // an arrow
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(character);
    }
    items.push(current);
    items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (name, kind) = item.split_once(':').unwrap_or(("", &item));
            (name.trim().trim_start_matches("pub ").to_string(), normalise(kind))
        })
        .collect()
}

/// A Rust function type's parameters and return type: `(a: A, b: B) -> R`.
fn parse_signature(text: &str) -> (Vec<String>, String) {
    let close = text.rfind(')').expect("a parameter list");
    let parameters = typed_list(&text[text.find('(').unwrap() + 1..close]).into_iter().map(|(_, kind)| kind).collect();
    let returned = text[close + 1..].trim().trim_start_matches("->").trim();
    (parameters, if returned.is_empty() { "()".to_string() } else { normalise(returned) })
}

/// The functions of the extern block.
fn rust_functions() -> Signatures {
    let code = code();
    let block = &code[code.find("extern \"C\" {").unwrap()..];
    block
        .split(';')
        .filter_map(|item| item.split("pub fn ").nth(1))
        .map(|item| (item[..item.find('(').unwrap()].trim().to_string(), parse_signature(item)))
        .collect()
}

/// The callback types: `pub type NAME = Option<unsafe extern "C" fn(...) -> R>;`, in the
/// form of rust_type (parameter names dropped).
fn rust_callbacks() -> Signatures {
    code()
        .split(';')
        .filter_map(|item| item.trim().strip_prefix("pub type "))
        .filter_map(|item| item.split_once('='))
        .filter(|(_, kind)| kind.contains("extern \"C\" fn"))
        .map(|(name, kind)| {
            let inner = kind.trim().trim_start_matches("Option<").trim_end_matches('>').trim().trim_end_matches(',');
            (name.trim().to_string(), parse_signature(inner.trim().trim_start_matches("unsafe extern \"C\" fn")))
        })
        .collect()
}

/// The integer type aliases: `pub type NAME = i32;`.
fn rust_scalars() -> BTreeMap<String, String> {
    code()
        .split(';')
        .filter_map(|item| item.trim().strip_prefix("pub type "))
        .filter_map(|item| item.split_once('='))
        .filter(|(_, kind)| !kind.contains("fn"))
        .map(|(name, kind)| (name.trim().to_string(), kind.trim().to_string()))
        .collect()
}

/// A struct's fields and their types, from this crate's source.
fn rust_fields(name: &str) -> Vec<(String, String)> {
    let code = code();
    let start = code.find(&format!("pub struct {} {{", name)).expect("the struct");
    let body = &code[start..];
    typed_list(&body[body.find('{').unwrap() + 1..body.find('}').unwrap()])
}

/// Offsets and sizes of the fields, as this crate's struct lays them out.
macro_rules! layout {
    ($struct:ident { $($field:ident),* $(,)? }) => {{
        let value = MaybeUninit::<$struct>::uninit();
        let base = value.as_ptr() as usize;
        // SAFETY: addr_of! takes the fields' addresses without reading them.
        vec![$((stringify!($field).to_string(), unsafe { std::ptr::addr_of!((*value.as_ptr()).$field) } as usize - base,
                size_of_pointee(unsafe { std::ptr::addr_of!((*value.as_ptr()).$field) }))),*]
    }};
}

fn size_of_pointee<T>(_: *const T) -> usize {
    size_of::<T>()
}

/// The value of every constant of this crate, as the compiler made it.
macro_rules! constants {
    ($($name:ident),* $(,)?) => { vec![$((stringify!($name).to_string(), $name.to_string())),*] };
}

/// The codes and the reasons with their values, named by the generated list that the crate
/// declares them from.
macro_rules! header_constants {
    ($($(#[$doc:meta])* $name:ident: $type:ty = $value:expr;)*) => {
        fn codes_and_reasons() -> Vec<(String, String)> {
            constants![$($name),*]
        }
    };
}
include!("../src/codes.rs");

fn rust_constants() -> BTreeMap<String, String> {
    let mut values: BTreeMap<String, String> = constants![
        PORTAL_AUTH_VERSION_MAJOR, PORTAL_AUTH_VERSION_MINOR, PORTAL_AUTH_VERSION_PATCH, PORTAL_AUTH_VERSION_NUMBER,
        PORTAL_AUTH_SOVERSION, PORTAL_AUTH_FALSE, PORTAL_AUTH_TRUE, PORTAL_AUTH_UNSET, PORTAL_AUTH_YES, PORTAL_AUTH_NO,
        PORTAL_AUTH_STORAGE_KEYRING,
        PORTAL_AUTH_STORAGE_MEMORY, PORTAL_AUTH_STORAGE_HOST, PORTAL_AUTH_STORAGE_FILE, PORTAL_AUTH_RESULT_AUTHENTICATED,
        PORTAL_AUTH_RESULT_TOTP_REQUIRED, PORTAL_AUTH_TOTP_CODE_SIZE,
        PORTAL_AUTH_FORWARD_TAKEN, PORTAL_AUTH_FORWARD_NO_INSTANCE, PORTAL_AUTH_FORWARD_REFUSED, PORTAL_AUTH_LOG_DEBUG, PORTAL_AUTH_LOG_INFO,
        PORTAL_AUTH_LOG_WARNING, PORTAL_AUTH_LOG_ERROR, PORTAL_AUTH_LOG_NONE, PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK,
        PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT,
    ]
    .into_iter()
    .chain(codes_and_reasons())
    .collect();
    values.insert("PORTAL_AUTH_VERSION_STRING".to_string(), format!("{:?}", PORTAL_AUTH_VERSION_STRING));
    values
}

/// Every disagreement between the header's facts and this crate, one line each.
fn disagreements(facts: &Facts) -> Vec<String> {
    let mut problems = Vec::new();
    let mut compare = |what: &str, theirs: &Signatures, ours: &Signatures| {
        for (name, signature) in theirs {
            match ours.get(name) {
                None => problems.push(format!("the {} {} is in the header, not in this crate", what, name)),
                Some(declared) if declared != signature => {
                    problems.push(format!("{}: the header says {:?}, this crate {:?}", name, signature, declared))
                }
                Some(_) => {}
            }
        }
        for name in ours.keys().filter(|name| !theirs.contains_key(*name)) {
            problems.push(format!("the {} {} is in this crate, not in the header", what, name));
        }
    };
    compare("function", &facts.functions, &rust_functions());
    compare("callback", &facts.callbacks, &rust_callbacks());

    let ours = rust_constants();
    let declared: Vec<String> = code()
        .split(';')
        .filter_map(|item| item.trim().strip_prefix("pub const "))
        .map(|item| item[..item.find(':').unwrap()].trim().to_string())
        .collect();
    for name in &declared {
        if !ours.contains_key(name) {
            problems.push(format!("the constant {} is missing from this test's list", name));
        }
    }
    for (name, value) in &facts.constants {
        match ours.get(name) {
            None => problems.push(format!("the constant {} is in the header, not in this crate", name)),
            Some(ours) if ours != value => problems.push(format!("{} is {} in the header, {} in this crate", name, value, ours)),
            Some(_) => {}
        }
    }
    for name in ours.keys().filter(|name| !facts.constants.contains_key(*name)) {
        problems.push(format!("the constant {} is in this crate, not in the header", name));
    }

    for (name, kind) in rust_scalars() {
        let (size, signed) = match kind.as_str() {
            "i32" | "c_int" => (4, true),
            "u32" | "c_uint" => (4, false),
            "usize" => (size_of::<usize>(), false),
            other => panic!("an integer type this test does not know: {}", other),
        };
        match facts.scalars.get(&name) {
            None => problems.push(format!("the type {} is in this crate, not in the header", name)),
            Some(&(c_size, c_signed, is_enum)) => {
                if c_size != size || (!is_enum && c_signed != signed) {
                    problems.push(format!("{}: {} bytes, signed {} in the header; {} in this crate", name, c_size, c_signed, kind))
                }
            }
        }
    }

    let layouts = [
        ("portal_auth_options", size_of::<portal_auth_options>(), layout!(portal_auth_options {
            size, auth_environment_id, redirect_url, api_host, magic_link_from_email, magic_link_template_id,
            is_account_abstracted, storage, connect_timeout_ms, request_timeout_ms, host_storage,
            application_id, keyring_prompt_timeout_ms, file_storage_path, completion_queue, ca_file,
        })),
        ("portal_auth_storage_callbacks", size_of::<portal_auth_storage_callbacks>(), layout!(portal_auth_storage_callbacks {
            size, get, set, remove, user_data, release,
        })),
    ];
    for (name, size, fields) in layouts {
        let theirs = &facts.fields[name];
        if facts.structs[name] != size {
            problems.push(format!("{}: {} bytes in the header, {} in this crate", name, facts.structs[name], size));
        }
        let names = |list: &[(String, usize, usize, String)]| list.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        let our_fields = rust_fields(name);
        if names(theirs) != our_fields.iter().map(|f| f.0.clone()).collect::<Vec<_>>() {
            problems.push(format!("{}: the fields are {:?} in the header, {:?} in this crate", name, names(theirs), our_fields));
            continue;
        }
        let listed = fields.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        if listed != names(theirs) {
            problems.push(format!("{}: this test's layout! lists {:?}, the header's fields are {:?}", name, listed, names(theirs)));
        }
        for ((field, offset, size, kind), ((_, our_offset, our_size), (_, our_kind))) in
            theirs.iter().zip(fields.iter().zip(our_fields.iter()))
        {
            if (offset, size) != (our_offset, our_size) {
                problems.push(format!("{}.{}: at {}, {} bytes in the header; at {}, {} in this crate", name, field, offset, size, our_offset, our_size));
            }
            if kind != our_kind {
                problems.push(format!("{}.{}: {} in the header, {} in this crate", name, field, kind, our_kind));
            }
        }
    }
    problems
}

#[test]
fn the_crate_declares_the_header_s_functions_constants_and_structs() {
    let facts = facts(&repository().join("include/portal_auth.h"));
    assert!(facts.functions.len() >= 50 && facts.constants.len() >= 50, "the header facts were read: {} functions, {} constants", facts.functions.len(), facts.constants.len());
    let problems = disagreements(&facts);
    assert!(problems.is_empty(), "portal-auth-sys and include/portal_auth.h disagree:\n{}", problems.join("\n"));
}

/// The header, changed: `old` replaced by `new`.
fn changed(old: &str, new: &str) -> Facts {
    let header = std::fs::read_to_string(repository().join("include/portal_auth.h")).unwrap();
    assert!(header.contains(old), "{:?} is in the header", old);
    let directory = std::env::temp_dir().join(format!("portal-auth-sys-header-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join(format!("changed-{}.h", header.len() + old.len() * 31 + new.len()));
    std::fs::write(&path, header.replacen(old, new, 1)).unwrap();
    let read = facts(&path);
    std::fs::remove_file(&path).unwrap();
    read
}

#[test]
fn the_checks_see_a_header_that_differs() {
    let cases = [
        // a parameter's type, a return type, a function added
        ("const char *portal_auth_methods_at(const portal_auth_methods *methods, size_t index);",
         "const char *portal_auth_methods_at(const portal_auth_methods *methods, ptrdiff_t index);"),
        ("size_t portal_auth_run_completions(void);", "int32_t portal_auth_run_completions(void);"),
        ("void portal_auth_bytes_free(uint8_t *bytes);", "void portal_auth_bytes_free(uint8_t *bytes);\nvoid portal_auth_new_call(void);"),
        ("void portal_auth_session_release(portal_auth_session *session);",
         "void portal_auth_session_release(const portal_auth_session *session);"),
        // a callback's parameter
        ("typedef void (*portal_auth_done_fn)(void *user_data, const portal_auth_error *error);",
         "typedef void (*portal_auth_done_fn)(void *user_data, int32_t error);"),
        // a field added at the end, a field's type, a storage callback's parameter
        ("    const char *ca_file;\n} portal_auth_options;",
         "    const char *ca_file;\n    const char *added_field;\n} portal_auth_options;"),
        ("    int32_t connect_timeout_ms;", "    int64_t connect_timeout_ms;"),
        ("int (*remove)(void *user_data, const char *environment_id);", "int (*remove)(void *user_data, char *environment_id);"),
        // a constant's value, a constant added
        ("PORTAL_AUTH_E_NETWORK = 22,", "PORTAL_AUTH_E_NETWORK = 23,"),
        ("PORTAL_AUTH_REASON_NETWORK_FAILED = 76", "PORTAL_AUTH_REASON_NETWORK_FAILED = 76,\n    PORTAL_AUTH_REASON_NEW = 77"),
        ("#define PORTAL_AUTH_TOTP_CODE_SIZE 7", "#define PORTAL_AUTH_TOTP_CODE_SIZE 8"),
        // a parameter that is an array in C (a pointer to its first element)
        ("char out_code[PORTAL_AUTH_TOTP_CODE_SIZE]);", "const char out_code[PORTAL_AUTH_TOTP_CODE_SIZE]);"),
        ("#define PORTAL_AUTH_VERSION_STRING \"0.1.0\"", "#define PORTAL_AUTH_VERSION_STRING \"0.2.0\""),
        // an integer type
        ("typedef int32_t portal_auth_reason;", "typedef uint32_t portal_auth_reason;"),
    ];
    for (old, new) in cases {
        assert!(!disagreements(&changed(old, new)).is_empty(), "no disagreement seen after {:?}", new);
    }
}

#[test]
fn c_types_in_rust_spelling() {
    assert_eq!(rust_type("const char *"), "*const c_char");
    assert_eq!(rust_type("portal_auth_call **"), "*mut *mut portal_auth_call");
    assert_eq!(rust_type("void"), "()");
    assert_eq!(rust_type("int (*)(void *, const char *, char **)"),
               "Option<unsafe extern \"C\" fn(*mut c_void, *const c_char, *mut *mut c_char) -> c_int>");
    assert_eq!(rust_type("void (*)(void *)"), "Option<unsafe extern \"C\" fn(*mut c_void)>");
}

/// The library this links is the version of these declarations.
#[test]
fn the_library_is_the_version_of_the_declarations() {
    // SAFETY: static storage, and a plain number.
    let (text, number) = unsafe { (std::ffi::CStr::from_ptr(portal_auth_version()), portal_auth_version_number()) };
    assert_eq!(text.to_str().unwrap(), PORTAL_AUTH_VERSION_STRING);
    assert_eq!(number, PORTAL_AUTH_VERSION_NUMBER);
}
