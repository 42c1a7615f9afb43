/// The single completion path of every sign-in (client-auth.md §3 handleRedirect, §5).
extension PortalAuth {
    /// The longest URL considered, in UTF-16 code units; longer ones are not ours.
    static let maxRedirectLength = 8192

    /// Exchanges the grant a redirect carries.
    ///
    /// - Returns: `nil` when the URL is not a sign-in redirect for this client (another
    ///   URL, no token, no known method marker); no request is made then.
    /// - Throws: `authenticationFailed` for a redirect with an `error` parameter, transport
    ///   errors of the exchange, `sessionStorageFailure` when the session could not be
    ///   persisted (deliver the same redirect again to retry the write alone).
    public func handleRedirect(_ url: String) async throws -> AuthResult? {
        guard !url.isEmpty, url.utf16.count <= Self.maxRedirectLength else { return nil }
        guard RedirectURL.matches(url, configured: redirectUrl) else { return nil }
        let parameters = RedirectURL.queryParameters(of: url)
        if let error = parameters["error"] {
            throw PortalAuthError.authenticationFailed(error: error.truncated(to: 100))
        }
        guard let grant = parameters["token"], !grant.isEmpty else { return nil }

        let path: String
        if parameters["authMethod"]?.hasSameBytes(as: AuthMethod.emailMagicLink.rawValue) == true {
            path = Endpoint.magicLinkValidations
        } else if let loginType = parameters["login_type"],
                  loginType.hasSameBytes(as: AuthMethod.google.rawValue) || loginType.hasSameBytes(as: AuthMethod.apple.rawValue) {
            path = Endpoint.oauthTokens
        } else {
            return nil
        }
        return try await exchange(grant, at: path)
    }

    private func exchange(_ grant: String, at path: String) async throws -> AuthResult {
        try await grants.withLock {
            if let memo = grants.current.memo, memo.grant.hasSameBytes(as: grant) {
                return try await replay(memo)
            }
            let data = try await api.exchangeGrant(grant, at: path)
            let outcome = try resolve(data, path: Endpoint.fullPath(path))
            switch outcome {
            case .authenticated(let result):
                // Remembered before the write, so a failed write is retried without a request.
                grants.current.memo = GrantLock.ReplayMemo(grant: grant, outcome: outcome, pendingWrite: true)
                PortalAuthLog.emit(.info, "Signed in endUserId \(result.session.endUserId).")
                try await persist(result.session)
            case .totpRequired(let step):
                grants.current.memo = GrantLock.ReplayMemo(grant: grant, outcome: outcome, pendingWrite: false)
                PortalAuthLog.emit(.info, "Two-factor code required for endUserId \(step.endUserId).")
            }
            return outcome
        }
    }

    /// The remembered result of a grant delivered again. Call under the grant lock.
    private func replay(_ memo: GrantLock.ReplayMemo) async throws -> AuthResult {
        if case .authenticated(let result) = memo.outcome {
            if result.session.isInvalidated {
                grants.current.memo = nil
                throw PortalRequestsError.unauthorized
            }
            if memo.pendingWrite { try await persist(result.session) }
        }
        PortalAuthLog.emit(.debug, "Redirect replayed from the last exchange.")
        return memo.outcome
    }

    /// Reads a grant response: a session, a two-factor step, or neither.
    private func resolve(_ data: GrantData, path: String) throws -> AuthResult {
        if let token = data.clientSessionToken.nonBlank {
            guard let endUserId = data.endUserId.nonBlank else {
                throw PortalAuthError.malformedResponse(path: path, missing: "endUserId")
            }
            let session = PortalSession(token: token, endUserId: endUserId, vault: vault)
            return .authenticated(AuthenticatedResult(
                session: session, clientId: data.clientId.nonBlank, isAccountAbstracted: data.isAccountAbstracted))
        }
        if let userJwt = data.userJwt.nonBlank {
            return .totpRequired(TotpRequiredResult(
                userJwt: userJwt, totpLink: data.totpLink.nonBlank, endUserId: data.endUserId.nonBlank ?? ""))
        }
        throw PortalAuthError.invalidGrantResponse
    }
}
