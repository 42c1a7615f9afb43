/// The request and response bodies of the six endpoints (docs/protocol.md §2). Every
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

/// A response payload read from the `data` of its envelope.
protocol ResponsePayload {
    /// Throws for `data` of the wrong shape.
    init(data: JSONValue) throws(JSONObject.WrongShape)
}

struct MethodsData: ResponsePayload {
    let allowedAuthMethods: [String]?
    let autoCreateWallet: Bool?

    init(data: JSONValue) throws(JSONObject.WrongShape) {
        let object = try JSONObject(data)
        allowedAuthMethods = try object.strings("allowedAuthMethods")
        autoCreateWallet = try object.bool("autoCreateWallet")
    }
}

struct MagicLinkRequest {
    let email: String
    let redirectUrl: String
    let fromEmail: String
    let templateId: String
    /// Omitted from the JSON when unset.
    let isAccountAbstracted: Bool?

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "email": .string(email), "redirectUrl": .string(redirectUrl),
            "fromEmail": .string(fromEmail), "templateId": .string(templateId),
        ]
        if let isAccountAbstracted { members["isAccountAbstracted"] = .bool(isAccountAbstracted) }
        return .object(members)
    }
}

struct GrantData: ResponsePayload {
    let endUserId: String?
    let clientId: String?
    let clientSessionToken: String?
    let isAccountAbstracted: Bool?
    let userJwt: String?
    let totpLink: String?

    init(data: JSONValue) throws(JSONObject.WrongShape) {
        let object = try JSONObject(data)
        endUserId = try object.string("endUserId")
        clientId = try object.string("clientId")
        clientSessionToken = try object.string("clientSessionToken")
        isAccountAbstracted = try object.bool("isAccountAbstracted")
        userJwt = try object.string("userJwt")
        totpLink = try object.string("totpLink")
    }
}

struct AuthorizeUrlsData: ResponsePayload {
    let google: String?
    let apple: String?

    init(data: JSONValue) throws(JSONObject.WrongShape) {
        let object = try JSONObject(data)
        google = try object.string("google")
        apple = try object.string("apple")
    }
}

struct TotpData: ResponsePayload {
    let clientSessionToken: String?
    let clientId: String?
    let isAccountAbstracted: Bool?

    init(data: JSONValue) throws(JSONObject.WrongShape) {
        let object = try JSONObject(data)
        clientSessionToken = try object.string("clientSessionToken")
        clientId = try object.string("clientId")
        isAccountAbstracted = try object.bool("isAccountAbstracted")
    }
}

/// Success bodies are `{"data": ...}`; `data` absent or null is a malformed response.
enum Envelope<Payload: ResponsePayload> {
    /// The payload of a success body for `path`; a body that is not JSON, has no `data`,
    /// `"data": null` or `data` of the wrong shape is a malformed response.
    static func payload(of body: [UInt8], path: String) throws(PortalAuthError) -> Payload {
        guard let envelope = JSONValue.parse(body).flatMap({ try? JSONObject($0) }),
              let data = envelope.members["data"], data != .null,
              let payload = try? Payload(data: data)
        else { throw .malformedResponse(path: Endpoint.fullPath(path), missing: nil) }
        return payload
    }
}

/// The message of a 400 `{"error": text}` that may be remapped to `accountAbstractionUnavailable`.
enum ErrorBody {
    static func message(of body: [UInt8]) -> String? {
        guard let value = JSONValue.parse(body) else { return nil }
        return try? JSONObject(value).string("error")
    }
}
