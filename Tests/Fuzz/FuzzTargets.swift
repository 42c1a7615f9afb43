// libFuzzer targets for the core's parsers, compiled together with their sources by
// scripts/fuzz.sh (swiftc -sanitize=fuzzer,address; libFuzzer supplies main). One binary
// holds every target; PORTAL_AUTH_FUZZ_TARGET picks one. Besides "no crash, no hang", each
// target checks the rules that must hold for every input: an invariant broken traps, and
// libFuzzer keeps the input as a regression case.

import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    fuzzTarget(bytes)
    return 0
}

private let fuzzTarget: @Sendable ([UInt8]) -> Void = {
    let name = getenv("PORTAL_AUTH_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    switch name {
    case "redirect": return fuzzRedirect
    case "userjwt": return fuzzUserJwt
    case "otpauth": return fuzzOtpauth
    case "envelope": return fuzzEnvelope
    case "callback": return fuzzCallback
    default:
        fatalError("PORTAL_AUTH_FUZZ_TARGET must be redirect, userjwt, otpauth, envelope or callback")
    }
}()

private func check(_ condition: Bool, _ rule: StaticString) {
    if !condition { fatalError("broken rule: \(rule)") }
}

/// The redirect matcher and query parser (docs/protocol.md §4). The input is the configured
/// URL, a newline, then the incoming URL.
private func fuzzRedirect(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let newline = text.utf8.firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
    let configured = String(text[..<newline])
    let incoming = newline == text.endIndex ? text : String(text[text.index(after: newline)...])
    check(RedirectURL.matches(configured, configured: configured), "a URL matches itself")
    _ = RedirectURL.matches(incoming, configured: configured)
    for (key, _) in RedirectURL.queryParameters(of: incoming) {
        check(!key.isEmpty, "empty keys are skipped")
    }
}

private let jwtDetails = [UserJwt.malformed, UserJwt.notBase64, UserJwt.unreadableClaims, UserJwt.noEndUserId]

/// The userJwt reader (docs/protocol.md §7): a non-blank id, or one of the fixed details (never
/// the JWT).
private func fuzzUserJwt(_ bytes: [UInt8]) {
    let jwt = String(decoding: bytes, as: UTF8.self)
    do {
        let endUserId = try UserJwt.endUserId(of: jwt)
        check(!endUserId.isBlank, "the endUserId is not blank")
    } catch {
        guard case .invalidUserJwt(let detail) = error else { return check(false, "only invalidUserJwt is thrown") }
        check(jwtDetails.contains(detail), "the detail is fixed text")
    }
}

/// The otpauth parser (docs/protocol.md §8): a normalised link starts with otpauth://, a secret
/// is base32.
private func fuzzOtpauth(_ bytes: [UInt8]) {
    let link = String(decoding: bytes, as: UTF8.self)
    if let normalised = TotpLink.normalised(link) {
        check(normalised.utf8.prefix(10).map { $0 | 0x20 }.elementsEqual("otpauth://".utf8), "the link is otpauth://")
    }
    if let secret = TotpLink.secret(of: link) {
        let base32 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567=".utf8)
        check(!secret.isEmpty && secret.utf8.allSatisfy(base32.contains), "the secret is base32")
        check(secret.utf8.first != UInt8(ascii: "="), "the secret has a data character")
    }
}

/// The response envelope decoder (docs/protocol.md §1, §2): every payload shape either decodes
/// or is malformedResponse naming the path, nothing else. The JSON reader under it: a document
/// it accepts, written back, reads as the same value.
private func fuzzEnvelope(_ bytes: [UInt8]) {
    if let value = JSONValue.parse(bytes) {
        check(JSONValue.parse(value.encoded) == value, "JSON written back reads the same")
    }
    func decode<Payload: ResponsePayload>(_: Payload.Type) {
        do {
            _ = try Envelope<Payload>.payload(of: bytes, path: Endpoint.methods)
        } catch {
            check(error == .malformedResponse(path: "/api/v3/auth/methods", missing: nil), "malformedResponse(path)")
        }
    }
    decode(MethodsData.self)
    decode(GrantData.self)
    decode(AuthorizeUrlsData.self)
    decode(TotpData.self)
}

/// What the loopback listener does with the bytes a client sent (RequestHead, CallbackAdmission):
/// whatever they are, a request that ends the wait is a GET of the redirect path at the
/// redirect's own Host, a top-level navigation where it says how it was made.
private let fuzzedAdmission: CallbackAdmission = {
    let redirectUrl = "http://127.0.0.1:8765/callback"
    guard let redirect = LoopbackRedirect(redirectUrl) else { fatalError("the fuzzed redirect URL is a loopback one") }
    return CallbackAdmission(redirect: redirect, redirectUrl: redirectUrl)
}()

private func fuzzCallback(_ bytes: [UInt8]) {
    var scanned = 0
    let end = RequestHead.end(in: bytes, scanned: &scanned)
    check(end.map { $0 <= bytes.count } ?? (scanned <= bytes.count), "the head ends within what was read")
    let head = RequestHead(ArraySlice(bytes[..<(end ?? bytes.count)]))
    guard case .complete(let url, _) = fuzzedAdmission.verdict(on: head) else { return }
    guard let head else { return check(false, "only a well-formed head ends the wait") }
    check(head.method == "GET", "only a GET ends the wait")
    check(head.values(of: "host").map { $0.lowercased() } == ["127.0.0.1:8765"], "only the redirect's own Host ends the wait")
    check(url.hasPrefix("http://127.0.0.1:8765/callback"), "only the redirect path ends the wait")
    check(head.values(of: "sec-fetch-mode").allSatisfy { $0 == "navigate" }, "only a navigation ends the wait")
    check(head.values(of: "sec-fetch-dest").allSatisfy { $0 == "document" }, "only a document ends the wait")
}
