#if canImport(Glibc)
import Glibc
#endif

/// The two-factor step (docs/protocol.md §3 verifyTotp, §5, §7).
extension PortalAuth {
    /// Submits a code for a sign-in that returned `.totpRequired`.
    ///
    /// The `endUserId` is read from `userJwt` before any request, so a bad JWT never costs
    /// the user a live code. The code is posted verbatim.
    /// - Throws: `invalidUserJwt` (no request made); `PortalRequestsError.unauthorized` when
    ///   the server refuses, with `.outcomeUnknown` when the last attempt's answer was lost
    ///   (it may have signed the user in: sign in again), `.totpStepExpired` when the JWT's
    ///   `exp` had passed by the server's clock (sign in again), `.totpStepUsed` when this
    ///   client's code for the step was already accepted (sign in again), else
    ///   `.totpCodeRejected` (retype, with the same JWT);
    ///   `malformedResponse` without a session token; `sessionStorageFailure` when the
    ///   accepted session could not be saved (call again with the same JWT to finish the
    ///   write with no request).
    public func verifyTotp(_ code: String, userJwt: String) async throws -> AuthenticatedResult {
        let claims = try UserJwt.claims(of: userJwt)
        let endUserId = claims.endUserId
        return try await grants.withLock {
            if let pending = grants.current.pendingTotp, pending.userJwt.hasSameBytes(as: userJwt) {
                try await persist(pending.result.session)
                return pending.result
            }
            // Nothing is spent that cannot be kept (see exchange).
            try await vault.checkCanStore()
            // The wire is unchanged (an expired step is still sent): the server's clock, as its
            // answer's Date gives it, only tells the app whether retyping can help.
            let data = try await grants.tracking(userJwt, unauthorized: {
                if grants.current.usedSteps.contains(where: { $0.hasSameBytes(as: userJwt) }) { return .totpStepUsed }
                return claims.expiresAt.map { api.clock.serverNow >= $0 } ?? false ? .totpStepExpired : .totpCodeRejected
            }()) {
                try await api.verifyTotp(code: code, userJwt: userJwt)
            }
            grants.current.usedSteps = grants.current.usedSteps.suffix(GrantLock.usedStepsKept - 1) + [userJwt]
            guard let token = data.clientSessionToken.nonBlank else {
                throw PortalAuthError.malformedResponse(
                    path: Endpoint.fullPath(Endpoint.totpValidations), missing: "clientSessionToken")
            }
            let result = AuthenticatedResult(
                session: PortalSession(token: token, endUserId: endUserId, vault: vault),
                clientId: data.clientId.nonBlank, isAccountAbstracted: data.isAccountAbstracted)

            // From now on the grant that led here replays as this session.
            if var memo = grants.current.memo, case .totpRequired(let step) = memo.outcome, step.userJwt.hasSameBytes(as: userJwt) {
                memo.outcome = .authenticated(result)
                memo.pendingWrite = true
                grants.current.memo = memo
            }
            grants.current.pendingTotp = GrantLock.PendingTotpWrite(userJwt: userJwt, result: result)
            PortalAuthLog.emit(.info, "Two-factor code accepted for endUserId \(endUserId).")
            try await persist(result.session)
            return result
        }
    }
}
