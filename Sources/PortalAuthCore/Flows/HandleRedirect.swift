/// The single completion path of every sign-in (docs/protocol.md §3 handleRedirect, §5).
extension PortalAuth {
    /// The longest URL considered, in UTF-16 code units; longer ones are not ours.
    static let maxRedirectLength = 8192

    /// Whether `url` is worth a look at all: not empty, and no longer than the longest
    /// considered. What the channel forwards and what `handleRedirect` reads both pass this.
    static func isCandidate(_ url: String) -> Bool {
        !url.isEmpty && url.utf16.count <= maxRedirectLength
    }

    /// Exchanges the grant a redirect carries.
    ///
    /// While `signInWithMagicLink` waits, a magic-link redirect handled here (pasted, or
    /// forwarded by the app's next instance) completes that sign-in too: its listener stops,
    /// and it completes once, with this call's outcome (the same session object).
    ///
    /// - Returns: `nil` when the URL is not a sign-in redirect for this client (another
    ///   URL, no token, no known method marker); no request is made then.
    /// - Throws: `authenticationFailed` for a redirect with an `error` parameter, transport
    ///   errors of the exchange, `sessionStorageFailure` when the session could not be
    ///   persisted (deliver the same redirect again to retry the write alone).
    public func handleRedirect(_ url: String) async throws -> AuthResult? {
        try await handleRedirect(url, storeAsked: false)
    }

    /// `handleRedirect`, for a one-call sign-in too: `storeAsked` when the sign-in asked the
    /// store at its start (before its port, browser or email), so the exchange asks it no
    /// more; a redirect the host handles is always asked for.
    func handleRedirect(_ url: String, storeAsked: Bool) async throws -> AuthResult? {
        switch Self.redirectContent(of: url, configured: redirectUrl) {
        case .notASignIn:
            return nil
        case .failed(let error):
            throw PortalAuthError.authenticationFailed(error: error)
        case .grant(let grant, let path):
            let wait = path == Endpoint.magicLinkValidations ? browserSignIn.magicLinkWait : nil
            guard let wait, wait.takeForRedirect() else { return try await exchange(grant, at: path, storeAsked: storeAsked) }
            PortalAuthLog.emit(.info, "Magic-link sign-in: a redirect handled by the application completes it.")
            do {
                let result = try await exchange(grant, at: path, storeAsked: storeAsked)
                wait.deliver(.success(result))
                return result
            } catch {
                wait.deliver(.failure(error))
                throw error
            }
        }
    }

    /// What a redirect URL carries for a client of `configured` (docs/protocol.md §3, §4).
    /// The browser sign-in's page says the same as the exchange that follows it.
    enum RedirectContent: Equatable {
        /// Another URL, no token, or no known method marker.
        case notASignIn
        /// The redirect's `error`, cut to 100 characters.
        case failed(error: String)
        /// A grant and the endpoint that exchanges it.
        case grant(String, path: String)
    }

    static func redirectContent(of url: String, configured: String) -> RedirectContent {
        guard isCandidate(url) else { return .notASignIn }
        guard RedirectURL.matches(url, configured: configured) else { return .notASignIn }
        let parameters = RedirectURL.queryParameters(of: url)
        if let error = parameters["error"] { return .failed(error: error.truncated(to: 100)) }
        guard let grant = parameters["token"], !grant.isEmpty else { return .notASignIn }
        if parameters["authMethod"]?.hasSameBytes(as: AuthMethod.emailMagicLink.rawValue) == true {
            return .grant(grant, path: Endpoint.magicLinkValidations)
        }
        if let loginType = parameters["login_type"],
           loginType.hasSameBytes(as: AuthMethod.google.rawValue) || loginType.hasSameBytes(as: AuthMethod.apple.rawValue) {
            return .grant(grant, path: Endpoint.oauthTokens)
        }
        return .notASignIn
    }

    private func exchange(_ grant: String, at path: String, storeAsked: Bool) async throws -> AuthResult {
        try await grants.withLock {
            if let memo = grants.current.memo, memo.grant.hasSameBytes(as: grant) {
                return try await replay(memo)
            }
            // Nothing is spent that cannot be kept: a grant is exchanged only for a store
            // that can take the session, asked here unless the sign-in asked it already.
            if !storeAsked { try await vault.checkCanStore() }
            let data = try await grants.tracking(grant, unauthorized: .linkUsed) {
                try await api.exchangeGrant(grant, at: path)
            }
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
                throw PortalRequestsError.unauthorized(reason: .linkUsed)
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
                userJwt: userJwt, totpLink: data.totpLink.nonBlank, endUserId: data.endUserId.nonBlank ?? "",
                serverSkew: api.clock.skew))
        }
        throw PortalAuthError.invalidGrantResponse
    }
}
