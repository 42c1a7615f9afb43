/// The Client Auth HTTP API of one environment: headers, envelopes, status handling and
/// the two remaps of docs/protocol.md §2. Nothing is retried: grants and codes are
/// single-use, and each magic-link send delivers a real email.
struct PortalAPI: Sendable {
    let base: BaseURL
    let environmentId: String
    let network: ClientNetwork
    /// The server's clock, as its answers' `Date` says.
    let clock = ServerClock()
    /// Reached on the first request, so that making a client starts no thread.
    private var engine: HTTPEngine { .shared }

    func methods() async throws -> MethodsData {
        try await exchange(.get, Endpoint.methods).payload()
    }

    /// Any 2xx is success, whatever its body (docs/protocol.md §2): the email went out.
    func sendMagicLink(_ request: MagicLinkRequest) async throws {
        let sentAbstracted = request.isAccountAbstracted == true
        _ = try await exchange(.post, Endpoint.magicLinks, body: request.json) { response in
            if response.status == 429 { return PortalAuthError.rateLimited(retryAfter: response.retryAfter) }
            return sentAbstracted ? Self.accountAbstractionError(response) : nil
        }
    }

    func authorizeUrls(redirectUrl: String, isAccountAbstracted: Bool?) async throws -> AuthorizeUrlsData {
        var query = "redirectUrl=" + QueryEncoding.encode(redirectUrl)
        if let isAccountAbstracted { query += "&isAccountAbstracted=\(isAccountAbstracted)" }
        return try await exchange(.get, Endpoint.oauthUrls, query: query) { response in
            isAccountAbstracted == true ? Self.accountAbstractionError(response) : nil
        }.payload()
    }

    func exchangeGrant(_ token: String, at path: String) async throws -> GrantData {
        try await exchange(.post, path, body: .object(["token": .string(token)]), carriesCredentials: true).payload()
    }

    func verifyTotp(code: String, userJwt: String) async throws -> TotpData {
        try await exchange(.post, Endpoint.totpValidations, body: .object(["code": .string(code)]),
                           bearer: userJwt, carriesCredentials: true).payload()
    }

    // MARK: - One call

    /// A 2xx answer to `path`; what is read of it is up to the endpoint.
    struct Success {
        let path: String
        let body: [UInt8]

        /// The payload of an enveloped body (docs/protocol.md §1).
        func payload<Payload: ResponsePayload>() throws(PortalAuthError) -> Payload {
            try Envelope<Payload>.payload(of: body, path: path)
        }
    }

    /// One request: its 2xx answer, or the error its status maps to.
    private func exchange(
        _ method: HTTPRequest.Method,
        _ path: String,
        query: String? = nil,
        body: JSONValue? = nil,
        bearer: String? = nil,
        carriesCredentials: Bool = false,
        remap: (HTTPResponse) -> (any Error)? = { _ in nil }
    ) async throws -> Success {
        var headers = [
            "x-portal-auth-environment-id: \(environmentId)",
            "Accept: application/json",
            "Content-Type: application/json",
            "X-Portal-Trace-Id: \(TraceId.make())",
        ]
        if let bearer { headers.append("Authorization: Bearer \(bearer)") }
        let url = base.url(path: path, query: query)
        let request = HTTPRequest(
            method: method, url: url, headers: headers,
            body: body?.encoded,
            origin: base.origin, network: await network.settings(for: url))

        let response = try await engine.send(request)
        clock.record(response.clockSkew)
        switch response.status {
        case 200..<300:
            return Success(path: path, body: response.body)
        case 401:
            throw PortalRequestsError.unauthorized(reason: nil)
        default:
            if let remapped = remap(response) { throw remapped }
            throw PortalRequestsError.httpStatus(
                status: response.status, bodyExcerpt: Self.excerpt(of: response.body, carriedCredentials: carriesCredentials),
                retryAfter: response.retryAfter)
        }
    }

    /// A 400 with `{"error": text}`, for a request that asked for account abstraction.
    private static func accountAbstractionError(_ response: HTTPResponse) -> PortalAuthError? {
        guard response.status == 400, let message = ErrorBody.message(of: response.body) else { return nil }
        return .accountAbstractionUnavailable(message: message.truncated(to: 200))
    }

    /// The server's reason for an error status, for the developer: the body's first 512
    /// characters (from at most 2 KiB of it), invalid UTF-8 as U+FFFD, control characters
    /// other than tab and line breaks escaped. `nil` for an empty body, and for a request
    /// that carried a grant, a code or a userJwt: a server may echo them, in forms no mask
    /// would catch. The requests that get one carry nothing secret (an email address, the
    /// redirect URL, the environment id), so neither can their echo.
    static func excerpt(of body: [UInt8], carriedCredentials: Bool) -> String? {
        guard !carriedCredentials, !body.isEmpty else { return nil }
        return String(decoding: body.prefix(2048), as: UTF8.self).truncated(to: 512)
            .escapingControlCharacters(keepingLineBreaks: true)
    }
}
