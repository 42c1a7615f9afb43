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

/// See portal_auth_totp_secret in include/portal_auth.h.
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

/// See portal_auth_totp_qr_png in include/portal_auth.h.
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

/// See portal_auth_totp_qr_matrix in include/portal_auth.h.
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

/// See portal_auth_totp_qr_svg in include/portal_auth.h.
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

/// See portal_auth_totp_qr_terminal in include/portal_auth.h.
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

/// See portal_auth_bytes_free in include/portal_auth.h.
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

/// See portal_auth_totp_code_normalize in include/portal_auth.h; the core's
/// TotpCodeInput.normalized does the work.
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
