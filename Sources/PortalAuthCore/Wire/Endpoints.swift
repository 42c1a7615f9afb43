import FoundationEssentials

/// The request and response bodies of the six endpoints (client-auth.md §2). Every
/// response field is optional: an absent key means absent, and unknown keys are ignored.
enum Endpoint {
    static let methods = "/methods"
    static let magicLinks = "/magic-links"
    static let magicLinkValidations = "/magic-links/validations"
    static let oauthUrls = "/oauth/urls"
    static let oauthTokens = "/oauth/tokens"
    static let totpValidations = "/totps/validations"

    /// The path as errors name it: with the API prefix, without the query.
    static func fullPath(_ path: String) -> String { BaseURL.apiPrefix + path }
}

struct MethodsData: Decodable {
    let allowedAuthMethods: [String]?
    let autoCreateWallet: Bool?
}

struct MagicLinkRequest: Encodable {
    let email: String
    let redirectUrl: String
    let fromEmail: String
    let templateId: String
    /// Omitted from the JSON when unset: synthesised encoding skips `nil`.
    let isAccountAbstracted: Bool?
}

struct GrantRequest: Encodable {
    let token: String
}

struct GrantData: Decodable {
    let endUserId: String?
    let clientId: String?
    let clientSessionToken: String?
    let isAccountAbstracted: Bool?
    let userJwt: String?
    let totpLink: String?
}

struct AuthorizeUrlsData: Decodable {
    let google: String?
    let apple: String?
}

struct TotpRequest: Encodable {
    let code: String
}

struct TotpData: Decodable {
    let clientSessionToken: String?
    let clientId: String?
    let isAccountAbstracted: Bool?
}

/// `data` whose content is not read (the magic-link send): any non-null value is accepted.
struct IgnoredData: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// Success bodies are `{"data": ...}`; `data` absent or null is a malformed response.
struct Envelope<Payload: Decodable>: Decodable {
    let data: Payload?

    /// The payload of a success body for `path`; a body that is not JSON, has no `data`,
    /// `"data": null` or `data` of the wrong shape is a malformed response.
    static func payload(of body: [UInt8], path: String) throws(PortalAuthError) -> Payload {
        guard let envelope = try? JSONDecoder().decode(Self.self, from: Data(body)), let payload = envelope.data
        else { throw .malformedResponse(path: Endpoint.fullPath(path), missing: nil) }
        return payload
    }
}

/// The body of a 400 that may be remapped to `accountAbstractionUnavailable`.
struct ErrorBody: Decodable {
    let error: String?
}
