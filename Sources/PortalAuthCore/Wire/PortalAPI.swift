/// The Client Auth HTTP API of one environment: headers, envelopes, status handling and
/// the two remaps of docs/protocol.md §2. Nothing is retried: grants and codes are
/// single-use, and each magic-link send delivers a real email.
struct PortalAPI: Sendable {
    let base: BaseURL
    let environmentId: String
    let timeouts: Timeouts
    /// Reached on the first request, so that making a client starts no thread.
    private var engine: HTTPEngine { .shared }

    func methods() async throws -> MethodsData {
        try await call(.get, Endpoint.methods)
    }

    func sendMagicLink(_ request: MagicLinkRequest) async throws {
        let sentAbstracted = request.isAccountAbstracted == true
        let _: IgnoredData = try await call(.post, Endpoint.magicLinks, body: request.json) { response in
            if response.status == 429 { return PortalAuthError.rateLimited }
            return sentAbstracted ? Self.accountAbstractionError(response) : nil
        }
    }

    func authorizeUrls(redirectUrl: String, isAccountAbstracted: Bool?) async throws -> AuthorizeUrlsData {
        var query = "redirectUrl=" + QueryEncoding.encode(redirectUrl)
        if let isAccountAbstracted { query += "&isAccountAbstracted=\(isAccountAbstracted)" }
        return try await call(.get, Endpoint.oauthUrls, query: query) { response in
            isAccountAbstracted == true ? Self.accountAbstractionError(response) : nil
        }
    }

    func exchangeGrant(_ token: String, at path: String) async throws -> GrantData {
        try await call(.post, path, body: .object(["token": .string(token)]), carriesCredentials: true)
    }

    func verifyTotp(code: String, userJwt: String) async throws -> TotpData {
        try await call(.post, Endpoint.totpValidations, body: .object(["code": .string(code)]),
                       bearer: userJwt, carriesCredentials: true)
    }

    // MARK: - One call

    private func call<Payload: ResponsePayload>(
        _ method: HTTPRequest.Method,
        _ path: String,
        query: String? = nil,
        body: JSONValue? = nil,
        bearer: String? = nil,
        carriesCredentials: Bool = false,
        remap: (HTTPResponse) -> (any Error)? = { _ in nil }
    ) async throws -> Payload {
        var headers = [
            "x-portal-auth-environment-id: \(environmentId)",
            "Accept: application/json",
            "Content-Type: application/json",
            "X-Portal-Trace-Id: \(TraceId.make())",
        ]
        if let bearer { headers.append("Authorization: Bearer \(bearer)") }
        let request = HTTPRequest(
            method: method, url: base.url(path: path, query: query), headers: headers,
            body: body?.encoded,
            origin: base.origin, timeouts: timeouts)

        let response = try await engine.send(request)
        switch response.status {
        case 200..<300:
            return try Envelope<Payload>.payload(of: response.body, path: path)
        case 401:
            throw PortalRequestsError.unauthorized
        default:
            if let remapped = remap(response) { throw remapped }
            throw PortalRequestsError.httpStatus(
                status: response.status, bodyExcerpt: Self.excerpt(of: response.body, carriedCredentials: carriesCredentials))
        }
    }

    /// A 400 with `{"error": text}`, for a request that asked for account abstraction.
    private static func accountAbstractionError(_ response: HTTPResponse) -> PortalAuthError? {
        guard response.status == 400, let message = ErrorBody.message(of: response.body) else { return nil }
        return .accountAbstractionUnavailable(message: message.truncated(to: 200))
    }

    /// A bounded excerpt of an error body, for diagnostics. None for a request that carried
    /// a grant, a code or a userJwt: a server may echo them, in forms no mask would catch.
    static func excerpt(of body: [UInt8], carriedCredentials: Bool) -> String {
        guard !carriedCredentials else { return "" }
        return String(decoding: body.prefix(2048), as: UTF8.self).truncated(to: 512)
    }
}
