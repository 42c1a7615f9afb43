import CPortalAuth
import PortalAuthCore
#if canImport(Glibc)
import Glibc
#endif

// TOTP enrollment (docs/protocol.md §8): the secret for manual entry and the QR code to scan,
// from the `otpauth://` link of a TOTP step (portal_auth_result_totp_link) or one the host
// kept. Synchronous: no network, no keyring. The secret and every rendering of the code
// carry the TOTP secret: never log or persist them.

/// The borrowed link argument; INVALID_ARGUMENT "otpauth_url" for NULL or bytes that are not UTF-8.
private func readLink(_ otpauth_url: UnsafePointer<CChar>?) throws -> String {
    guard let link = try? CText.read(otpauth_url) else { throw PortalAuthError.invalidArgument(name: "otpauth_url") }
    return link
}

/// A call that hands the caller a new string (free it with portal_auth_string_free) in
/// `*out`: NULL on failure, or when `body` finds none.
private func handingOverString(
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, named name: String,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?,
    _ body: () throws -> String?
) -> portal_auth_code {
    out?.pointee = nil
    return ErrorBox.catching(out_error) {
        let out = try required(out, name)
        guard let text = try body() else { return }
        guard let copy = SecretMemory.copy(text) else { throw OutOfMemory() }
        out.pointee = copy
    }
}

/// `out` itself, or INVALID_ARGUMENT `name` when it is NULL.
private func required<T>(_ out: UnsafeMutablePointer<T>?, _ name: String) throws -> UnsafeMutablePointer<T> {
    guard let out else { throw PortalAuthError.invalidArgument(name: name) }
    return out
}

/// The base32 secret of an enrollment link, for manual entry in an authenticator app.
/// `otpauth_url` is borrowed.
///
/// Returns PORTAL_AUTH_OK and stores in `*out_secret` a new string (free it with
/// portal_auth_string_free), or NULL when the link is unusable or carries no valid secret.
/// PORTAL_AUTH_E_INVALID_ARGUMENT (name "otpauth_url" or "out_secret") for a NULL link, a
/// link that is not UTF-8, or a NULL `out_secret`.
@c(portal_auth_totp_secret)
public func portalAuthTotpSecret(
    _ otpauth_url: UnsafePointer<CChar>?,
    _ out_secret: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    handingOverString(out_secret, named: "out_secret", out_error) {
        portalTotpSecret(otpAuthUrl: try readLink(otpauth_url))
    }
}

/// The QR code of an enrollment link as a PNG: `scale` pixels a module (10 is the usual
/// size), `(modules + 8) × scale` pixels square with a 4-module quiet zone, pure black on
/// opaque white (1-bit grayscale); the same link gives the same bytes. `otpauth_url` is
/// borrowed.
///
/// On success returns PORTAL_AUTH_OK, stores a new buffer in `*out_png` (free it with
/// portal_auth_bytes_free, which wipes it first; never with free()) and its size in
/// `*out_length`. On failure stores NULL and 0.
/// PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE for a link that is not `otpauth://`, carries no valid
/// secret or is too long for a QR code, and for a `scale` under 1 or one that makes a side
/// over 8192 pixels. PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL or non-UTF-8
/// link ("otpauth_url") or a NULL `out_png` or `out_length`. PORTAL_AUTH_E_INTERNAL, with a
/// message naming it, when libqrencode or libpng (opened by the first QR code) cannot be loaded.
@c(portal_auth_totp_qr_png)
public func portalAuthTotpQrPng(
    _ otpauth_url: UnsafePointer<CChar>?,
    _ scale: Int32,
    _ out_png: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
    _ out_length: UnsafeMutablePointer<UInt>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    out_png?.pointee = nil
    out_length?.pointee = 0
    return ErrorBox.catching(out_error) {
        let (outPng, outLength) = (try required(out_png, "out_png"), try required(out_length, "out_length"))
        var png = try TotpQRCode(otpAuthUrl: try readLink(otpauth_url)).png(scale: Double(scale))
        let buffer = try handOver(&png)
        (outPng.pointee, outLength.pointee) = (buffer.pointer, buffer.length)
    }
}

/// The modules of an enrollment link's QR code, for a toolkit that paints it at any scale:
/// `*out_side` modules a side, the 4-module quiet zone included, and in `*out_modules` a new
/// buffer (free it with portal_auth_bytes_free, which wipes it first) of `*out_length` =
/// side × ((side + 7) / 8) bytes: one row after another from the top, the leftmost module of
/// a row in the most significant bit of its first byte, a bit set for a dark module, the
/// bits padding a row clear. The same code as portal_auth_totp_qr_png draws. `otpauth_url`
/// is borrowed. On failure stores 0, NULL and 0. PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE for an
/// unusable link (as portal_auth_totp_qr_png); PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL or
/// non-UTF-8 link or a NULL `out_side`, `out_modules` or `out_length`;
/// PORTAL_AUTH_E_INTERNAL when libqrencode cannot be loaded.
@c(portal_auth_totp_qr_matrix)
public func portalAuthTotpQrMatrix(
    _ otpauth_url: UnsafePointer<CChar>?,
    _ out_side: UnsafeMutablePointer<Int32>?,
    _ out_modules: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
    _ out_length: UnsafeMutablePointer<UInt>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    out_side?.pointee = 0
    out_modules?.pointee = nil
    out_length?.pointee = 0
    return ErrorBox.catching(out_error) {
        let outSide = try required(out_side, "out_side")
        let outModules = try required(out_modules, "out_modules")
        let outLength = try required(out_length, "out_length")
        let code = try TotpQRCode(otpAuthUrl: try readLink(otpauth_url))
        var modules = code.moduleBits()
        let buffer = try handOver(&modules)
        (outSide.pointee, outModules.pointee, outLength.pointee) = (Int32(code.side), buffer.pointer, buffer.length)
    }
}

/// The QR code of an enrollment link as SVG text: a view box of one unit a module (for web
/// views and toolkits that scale it) and a nominal size of `scale` pixels a module, with the
/// rules and errors of portal_auth_totp_qr_png. `otpauth_url` is borrowed. On success stores
/// a new string in `*out_svg` (free it with portal_auth_string_free); NULL on failure.
@c(portal_auth_totp_qr_svg)
public func portalAuthTotpQrSvg(
    _ otpauth_url: UnsafePointer<CChar>?,
    _ scale: Int32,
    _ out_svg: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    handingOverString(out_svg, named: "out_svg", out_error) {
        try TotpQRCode(otpAuthUrl: try readLink(otpauth_url)).svg(scale: Double(scale))
    }
}

/// The QR code of an enrollment link as UTF-8 text for a terminal: half blocks and spaces,
/// one column a module and two module rows a line, quiet zone included, each line ending in
/// "\n". `colors` is PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK (most terminals) or
/// PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT. `otpauth_url` is borrowed. On success stores a new
/// string in `*out_text` (free it with portal_auth_string_free); NULL on failure.
/// PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE for an unusable link (as portal_auth_totp_qr_png);
/// PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL or non-UTF-8 link, another `colors` ("colors")
/// or a NULL `out_text`; PORTAL_AUTH_E_INTERNAL when libqrencode cannot be loaded.
@c(portal_auth_totp_qr_terminal)
public func portalAuthTotpQrTerminal(
    _ otpauth_url: UnsafePointer<CChar>?,
    _ colors: portal_auth_terminal_colors,
    _ out_text: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    handingOverString(out_text, named: "out_text", out_error) {
        let terminal: TerminalColors
        switch colors {
        case PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK: terminal = .lightOnDark
        case PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT: terminal = .darkOnLight
        default: throw PortalAuthError.invalidArgument(name: "colors")
        }
        return try TotpQRCode(otpAuthUrl: try readLink(otpauth_url)).terminalText(colors: terminal)
    }
}

/// Wipes and frees a buffer the library gave the caller (portal_auth_totp_qr_png,
/// portal_auth_totp_qr_matrix). NULL is ignored.
@c(portal_auth_bytes_free)
public func portalAuthBytesFree(_ bytes: UnsafeMutablePointer<UInt8>?) {
    SecretMemory.freeBytes(bytes)
}

/// A copy of `bytes` (a QR code of a secret) for the caller to free with
/// portal_auth_bytes_free; the library's own copy is wiped in place (the array is the
/// calling function's alone).
private func handOver(_ bytes: inout [UInt8]) throws -> (pointer: UnsafeMutablePointer<UInt8>, length: UInt) {
    defer { bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { SecretMemory.wipe(base, count: $0.count) } } }
    guard let buffer = SecretMemory.copy(bytes) else { throw OutOfMemory() }
    return (buffer, UInt(bytes.count))
}

/// What the user typed for a TOTP code, with the spaces and dashes removed
/// (TotpCodeInput.normalized): PORTAL_AUTH_TRUE and the six digits, NUL-terminated, in
/// `out_code` (7 bytes) when exactly six remain; else PORTAL_AUTH_FALSE and "" (also for a
/// NULL or non-UTF-8 `typed`). A NULL `out_code` only answers.
@c(portal_auth_totp_code_normalize)
public func portalAuthTotpCodeNormalize(_ typed: UnsafePointer<CChar>?, _ out_code: UnsafeMutablePointer<CChar>?) -> portal_auth_bool {
    out_code?.initialize(to: 0)
    guard let text = try? CText.read(typed), let code = TotpCodeInput.normalized(text) else {
        return PORTAL_AUTH_FALSE
    }
    if let out_code {
        for (offset, byte) in code.utf8.enumerated() { out_code[offset] = CChar(bitPattern: byte) }
        out_code[code.utf8.count] = 0
    }
    return PORTAL_AUTH_TRUE
}
