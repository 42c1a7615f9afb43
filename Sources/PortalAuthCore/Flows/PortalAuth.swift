/// Portal's Client Auth client: magic links, Google and Apple sign-in, redirect handling,
/// two-factor codes and the persisted session.
///
/// Hold one long-lived instance per environment: it remembers the last grant it exchanged
/// (a redirect delivered twice resolves to the same result) and serialises its sign-ins.
public final class PortalAuth: Sendable {
    public let authEnvironmentId: String
    /// The configured redirect URL, trimmed.
    public let redirectUrl: String
    public let magicLink: MagicLinkConfig?
    public let isAccountAbstracted: Bool?
    /// The application's reverse-DNS name, as its desktop file's (`com.example.App`): it names
    /// the keyring item of the default storage and the channel of redirect forwarding.
    public let applicationId: String?

    let api: PortalAPI
    let vault: SessionVault
    let grants = GrantLock()
    let browserSignIn = BrowserSignInState()
    let waits = ClientWaits()

    /// The library's I/O thread as a task executor: a task that prefers it runs a call from
    /// request to result on that one thread, with no hop through Swift's global executor.
    /// Nil when the thread could not start. Reading it starts the thread.
    public static var executor: (any TaskExecutor)? { HTTPEngine.shared.executor }

    /// Runs `work` as a call that `queue` drives, in a task that prefers `queue`: its requests
    /// go over the queue's own connections, advanced by the queue's runs, and the tasks it
    /// starts (a session's write) prefer the queue too.
    public static func driven<T: Sendable>(by queue: CompletionQueue, _ work: @Sendable () async -> T) async -> T {
        await HTTPEngine.$drivingQueue.withValue(queue) { await work() }
    }

    /// Validates the configuration; performs no network or storage I/O.
    ///
    /// - Parameters:
    ///   - applicationId: the application's reverse-DNS name (see `KeyringSessionStorage`),
    ///     or nil for none (inside a Flatpak sandbox: its `FLATPAK_ID`). It keeps the application's keyring item apart from other
    ///     applications' of the environment, and names its redirect channel.
    ///   - storage: where the session persists, shared by every client of the environment:
    ///     nil for the desktop keyring (the application's own item; inside a Flatpak
    ///     sandbox, the file keyring of the Secret portal, `SandboxSessionStorage`), or
    ///     `MemorySessionStorage` to forget it at exit, or a store of the application's.
    ///   - timeouts: connect and overall limits of each request.
    ///   - caFile: a PEM file of the certificate authorities to trust in place of the
    ///     system's bundle (a company's own CA); nil reads `CURL_CA_BUNDLE`, `SSL_CERT_FILE`
    ///     and `SSL_CERT_DIR` (docs/network.md). Proxies come from the environment, read now.
    ///   - keyringPrompts: whether the keyring's dialogs are shown (the default store's).
    /// - Throws: `PortalAuthError.invalidArgument` for a blank `authEnvironmentId` (checked
    ///   first), a blank `redirectUrl`, an unusable `apiHost`, or an `applicationId` that is
    ///   not a reverse-DNS name, or a `caFile` that is not a readable file.
    public init(
        authEnvironmentId: String,
        redirectUrl: String,
        apiHost: String = "api.portalhq.io",
        magicLink: MagicLinkConfig? = nil,
        isAccountAbstracted: Bool? = nil,
        applicationId: String? = nil,
        storage: (any SessionStorage)? = nil,
        timeouts: Timeouts = Timeouts(),
        caFile: String? = nil,
        keyringPrompts: KeyringPrompts = .never
    ) throws(PortalAuthError) {
        // Control characters would break the header the id travels in.
        guard !authEnvironmentId.isBlank,
              !authEnvironmentId.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw .invalidArgument(name: "authEnvironmentId") }
        guard !redirectUrl.isBlank else { throw .invalidArgument(name: "redirectUrl") }
        let base = try BaseURL(apiHost: apiHost)
        let applicationId = try ApplicationId.resolved(applicationId)
        let keyring = try StorageChoice.keyring.store(resolvedApplicationId: applicationId, prompts: keyringPrompts)
        let network = ClientNetwork(timeouts: timeouts, trust: try TrustStore(caFile: caFile), origin: base.origin)

        self.authEnvironmentId = authEnvironmentId
        self.redirectUrl = redirectUrl.trimmed
        self.magicLink = magicLink
        self.isAccountAbstracted = isAccountAbstracted
        self.applicationId = applicationId
        self.api = PortalAPI(base: base, environmentId: authEnvironmentId, network: network)
        self.vault = SessionVault(storage: storage ?? keyring, environmentId: authEnvironmentId)
    }

    /// The sign-in methods the environment has enabled; unknown method names are dropped.
    public func getMethods() async throws -> AuthMethodsResult {
        let data = try await api.methods()
        return AuthMethodsResult(
            allowedAuthMethods: (data.allowedAuthMethods ?? []).compactMap(AuthMethod.init(rawValue:)),
            autoCreateWallet: data.autoCreateWallet ?? false)
    }

    /// Emails the user a sign-in link that leads back to `redirectUrl`.
    public func sendMagicLink(_ email: String) async throws {
        try await api.sendMagicLink(magicLinkRequest(to: email))
        PortalAuthLog.emit(.info, "Magic link sent.")
    }

    /// The request of a magic-link send, after its checks (docs/protocol.md §3), in order:
    /// the configuration, then the email, trimmed and lowercased.
    func magicLinkRequest(to email: String) throws(PortalAuthError) -> MagicLinkRequest {
        guard let magicLink else { throw .magicLinkNotConfigured }
        let address = email.trimmed.lowercased()
        guard !address.isEmpty else { throw .invalidArgument(name: "email") }
        return MagicLinkRequest(
            email: address, redirectUrl: redirectUrl, fromEmail: magicLink.fromEmail,
            templateId: magicLink.templateId, isAccountAbstracted: isAccountAbstracted)
    }

    /// A fresh Google authorize URL to open; its single-use `state` is never cached.
    public func loginWithGoogle() async throws -> AuthorizeUrlResult {
        try await authorizeUrl(for: .google)
    }

    /// A fresh Apple authorize URL to open; its single-use `state` is never cached.
    public func loginWithApple() async throws -> AuthorizeUrlResult {
        try await authorizeUrl(for: .apple)
    }

    func authorizeUrl(for method: AuthMethod) async throws -> AuthorizeUrlResult {
        let urls = try await api.authorizeUrls(redirectUrl: redirectUrl, isAccountAbstracted: isAccountAbstracted)
        let chosen = method == .google ? urls.google : urls.apple
        guard let url = chosen.nonBlank else { throw PortalAuthError.authMethodUnavailable(method) }
        return AuthorizeUrlResult(authorizeUrl: url.trimmed)
    }
}
