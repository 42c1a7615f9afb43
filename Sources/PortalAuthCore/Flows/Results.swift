/// A sign-in method an environment can enable.
public enum AuthMethod: String, Sendable, CaseIterable {
    case emailMagicLink = "EMAIL_MAGIC_LINK"
    case google = "GOOGLE"
    case apple = "APPLE"
}

/// The sender and template that `sendMagicLink` uses.
public struct MagicLinkConfig: Equatable, Sendable {
    public let fromEmail: String
    public let templateId: String

    public init(fromEmail: String, templateId: String) {
        self.fromEmail = fromEmail
        self.templateId = templateId
    }
}

public struct AuthMethodsResult: Equatable, Sendable {
    public let allowedAuthMethods: [AuthMethod]
    public let autoCreateWallet: Bool
}

public struct AuthorizeUrlResult: Equatable, Sendable {
    public let authorizeUrl: String
}

/// Where a completed redirect or two-factor step leaves the user.
public enum AuthResult: Sendable {
    case authenticated(AuthenticatedResult)
    case totpRequired(TotpRequiredResult)
}

public struct AuthenticatedResult: Sendable {
    /// Already persisted when the result is returned.
    public let session: PortalSession
    public let clientId: String?
    public let isAccountAbstracted: Bool?
}

/// The two-factor step: pass `userJwt` back to `verifyTotp` with the user's code.
/// Printing it is safe: `userJwt` and `totpLink` are redacted from its descriptions.
public struct TotpRequiredResult: Equatable, Sendable {
    public let userJwt: String
    /// The enrollment link, on a user's first sign-in only; it embeds the TOTP secret.
    public let totpLink: String?
    public let endUserId: String
    /// When the step expires, in whole seconds since the Unix epoch by this machine's clock:
    /// the `userJwt`'s `exp`, which is the server's time, less how far the server's clock
    /// was ahead when it answered; nil when it has none. A code verified after it fails with
    /// `PortalRequestsError.unauthorized(reason: .totpStepExpired)`: sign in again.
    public let expiresAt: Int64?

    /// `serverSkew`: seconds the server's clock was ahead of this machine's when it answered.
    public init(userJwt: String, totpLink: String?, endUserId: String, serverSkew: Int = 0) {
        self.userJwt = userJwt
        self.totpLink = totpLink
        self.endUserId = endUserId
        expiresAt = UserJwt.expiry(of: userJwt).map { $0 - Int64(serverSkew) }
    }
}

extension TotpRequiredResult: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "TotpRequiredResult(endUserId: \(endUserId), expiresAt: \(expiresAt.map(String.init) ?? "nil"), userJwt: <redacted>, totpLink: \(totpLink == nil ? "nil" : "<redacted>"))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["endUserId": endUserId, "expiresAt": expiresAt as Any, "userJwt": "<redacted>",
                                "totpLink": totpLink == nil ? "nil" : "<redacted>"])
    }
}
