/// The client's grant lock and the state it guards (docs/protocol.md §5): the replay memo
/// and the pending writes. Memo lookup, exchange and persist; TOTP verify and persist;
/// and clear all run under it, one at a time.
final class GrantLock: Sendable {
    /// The last grant exchanged successfully, byte-exact, and what it resolved to.
    struct ReplayMemo: Sendable {
        let grant: String
        var outcome: AuthResult
        /// A signed-in outcome whose keyring write has not succeeded yet.
        var pendingWrite: Bool
    }

    /// A session whose code was accepted but whose write failed: `verifyTotp` with the
    /// same `userJwt` finishes the write with no request.
    struct PendingTotpWrite: Sendable {
        let userJwt: String
        let result: AuthenticatedResult
    }

    struct State: Sendable {
        var memo: ReplayMemo?
        var pendingTotp: PendingTotpWrite?
        /// The grant or `userJwt` whose last request may have reached the server though its
        /// answer was lost (a reset, a request timeout): a 401 for it next is no verdict on it.
        var lostAnswer: String?
        /// The last TOTP steps (`userJwt`s) whose code the server accepted, newest last: a 401
        /// for one of them is the step spent, not the code wrong. A step lives ten minutes,
        /// in which a client signs in a handful of times at most.
        var usedSteps: [String] = []
    }

    static let usedStepsKept = 8

    private let lock = AsyncLock()
    // Read and written only by the holder of `lock`; the mutex makes that visible across threads.
    private let state = Locked(State())

    func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await lock.withLock(body)
    }

    /// Sends the request of a single-use `credential` (a grant, a TOTP step's `userJwt`), and
    /// keeps track of an answer lost on the way (or a 5xx, which a gateway may give after the
    /// server acted): after one, a 401 for the same credential is `.outcomeUnknown` (the last
    /// attempt may have completed), else it is `unauthorized`.
    /// Nothing is sent again. Call under the lock.
    func tracking<T>(_ credential: String, unauthorized reason: @autoclosure () -> UnauthorizedReason,
                     _ send: () async throws -> T) async throws -> T {
        let answerWasLost = current.lostAnswer?.hasSameBytes(as: credential) ?? false
        do {
            let answer = try await send()
            current.lostAnswer = nil
            return answer
        } catch PortalRequestsError.unauthorized {
            current.lostAnswer = nil
            throw PortalRequestsError.unauthorized(reason: answerWasLost ? .outcomeUnknown : reason())
        } catch PortalRequestsError.network(let failure, let message) where failure.mayHaveReachedServer {
            current.lostAnswer = credential
            throw PortalRequestsError.network(failure, message: message)
        } catch let PortalRequestsError.httpStatus(status, excerpt, retryAfter) where (500..<600).contains(status) {
            // A gateway's 502 or 504 may come after the server acted.
            current.lostAnswer = credential
            throw PortalRequestsError.httpStatus(status: status, bodyExcerpt: excerpt, retryAfter: retryAfter)
        }
    }

    /// The guarded state. Call only while holding the lock.
    var current: State {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

extension PortalAuth {
    /// Writes a signed-in session and settles every pending write: either it was this
    /// session, or a newer one is now stored and a stale retry must not overwrite it.
    /// Call under the grant lock.
    func persist(_ session: PortalSession) async throws {
        do {
            try await vault.save(session.stored)
        } catch {
            PortalAuthLog.emit(.warning, "The session of endUserId \(session.endUserId) could not be persisted; repeating the same step retries the write without a request.")
            throw error
        }
        grants.current.memo?.pendingWrite = false
        grants.current.pendingTotp = nil
        PortalAuthLog.emit(.info, "Session of endUserId \(session.endUserId) persisted.")
    }
}
