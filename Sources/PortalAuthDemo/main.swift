// portal-auth-demo: signs a user in against a Portal emulator and prints each step; the
// session persists in the desktop keyring.
//
//   portal-auth-demo --api-host http://127.0.0.1:PORT [--environment env-demo] [--email ada@example.com]
//   portal-auth-demo --restore [--environment env-demo]     prints the persisted session's user
//   (either with --application-id com.example.App: the keyring item of that application,
//   not of the program's name)
//
// The emulator stands in for Portal and for the user's mailbox (its outbox) and
// authenticator app (the code is computed from the enrollment link's secret). Nothing
// secret is printed: not the grant, the userJwt, the TOTP link or code, nor the token.

import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import OneTimeCode
import PortalAuthCore

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
}

struct Options {
    var apiHost = "http://127.0.0.1:8790"
    var environment = "env-demo"
    var email = "ada@example.com"
    var redirectUrl = "myapp://auth/callback"
    var applicationId: String?
    var restoreOnly = false

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--restore" {
                restoreOnly = true
                continue
            }
            guard let value = rest.popFirst() else { throw DemoFailure(description: "\(flag) needs a value") }
            switch flag {
            case "--api-host": apiHost = value
            case "--environment": environment = value
            case "--email": email = value
            case "--redirect-url": redirectUrl = value
            case "--application-id": applicationId = value
            default: throw DemoFailure(description: "unknown option \(flag)")
            }
        }
    }
}

/// Reads the newest magic-link email for `email` from the emulator's outbox.
func newestMagicLink(apiHost: String, email: String) async throws -> String {
    struct Outbox: Decodable {
        struct Message: Decodable { let link: String }
        let messages: [Message]
    }
    let response = try await HTTPEngine.shared.send(HTTPRequest(
        method: .get, url: apiHost + "/_emulator/outbox?email=" + QueryEncoding.encode(email), origin: apiHost))
    let outbox = try JSONDecoder().decode(Outbox.self, from: Data(response.body))
    guard let link = outbox.messages.last?.link else { throw DemoFailure(description: "no email arrived") }
    return link
}

/// The keyring store of the options' application, or the program's.
func keyring(_ options: Options) throws -> any SessionStorage {
    try StorageChoice.keyring.store(applicationId: options.applicationId, prompts: .never)
}

func step(_ number: Int, _ text: String) {
    print("[\(number)] \(text)")
}

/// Prints the user of the session persisted for the environment, if any.
func restore(_ options: Options) async throws {
    let auth = try PortalAuth(authEnvironmentId: options.environment, redirectUrl: options.redirectUrl,
                              apiHost: options.apiHost, storage: try keyring(options))
    if let session = try await auth.restoreSession() {
        print("Restored the session of \(session.endUserId)")
    } else {
        print("No session is persisted for \(options.environment)")
    }
}

func run() async throws {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    if options.restoreOnly { return try await restore(options) }
    let auth = try PortalAuth(
        authEnvironmentId: options.environment, redirectUrl: options.redirectUrl, apiHost: options.apiHost,
        magicLink: MagicLinkConfig(fromEmail: "hello@auth.example.com", templateId: "demo-template"),
        storage: try keyring(options))
    print("portal-auth \(PortalAuthVersion.string): signing \(options.email) in to \(options.environment) at \(options.apiHost)")

    let methods = try await auth.getMethods()
    step(1, "Enabled methods: \(methods.allowedAuthMethods.map(\.rawValue).joined(separator: ", ")); autoCreateWallet: \(methods.autoCreateWallet)")

    try await auth.sendMagicLink(options.email)
    step(2, "Magic link sent to \(options.email)")

    let link = try await newestMagicLink(apiHost: options.apiHost, email: options.email)
    step(3, "The user opened the link from the email; the app received its redirect")

    var result = try await auth.handleRedirect(link)
    if case .totpRequired(let totp) = result {
        step(4, "Two-factor code required for \(totp.endUserId)" + (totp.totpLink == nil ? "" : " (first sign-in: enrollment link received)"))
        guard let secret = totp.totpSecret, let code = OneTimeCode.now(secret: secret) else {
            throw DemoFailure(description: "this user is already enrolled; run the demo with another --email")
        }
        step(5, "The authenticator app computed a code from the enrollment secret")
        result = .authenticated(try await auth.verifyTotp(code, userJwt: totp.userJwt))
    }
    guard case .authenticated(let signedIn) = result else {
        throw DemoFailure(description: "the redirect did not complete a sign-in")
    }
    step(6, "Signed in: endUserId \(signedIn.session.endUserId), clientId \(signedIn.clientId ?? "none"); session persisted in the keyring")

    let restarted = try PortalAuth(authEnvironmentId: options.environment, redirectUrl: options.redirectUrl,
                                   apiHost: options.apiHost, storage: try keyring(options))
    guard let restored = try await restarted.restoreSession() else {
        throw DemoFailure(description: "the persisted session could not be restored")
    }
    step(7, "A new client restored the session of \(restored.endUserId) with no network call")
    print("Done.")
}

do {
    try await run()
} catch {
    print("portal-auth-demo: \(error)")
    exit(1)
}
