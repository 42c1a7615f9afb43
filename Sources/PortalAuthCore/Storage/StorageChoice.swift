/// Which of the library's stores a client keeps its session in: the one place that picks
/// one, for `PortalAuth` (its default), the C API's options and the demo. (The memory store
/// and an application's own are made by the application and given as they are.)
package enum StorageChoice: Sendable {
    /// The desktop keyring, the application's own item; inside a Flatpak sandbox, where no
    /// Secret Service is reachable, the Secret portal's file keyring (`SandboxSessionStorage`).
    case keyring
    /// Plain files in `directory` (nil: the default folder), `FileSessionStorage`.
    case file(directory: String?)

    /// The store of `applicationId` (nil for the sandbox's, or none; `ApplicationId`'s rule).
    /// - Throws: `PortalAuthError.invalidArgument` for an application id that is not a
    ///   reverse-DNS name, or a file store's unusable folder.
    package func store(applicationId: String?, prompts: KeyringPrompts) throws(PortalAuthError) -> any SessionStorage {
        try store(resolvedApplicationId: try ApplicationId.resolved(applicationId), prompts: prompts)
    }

    /// As `store(applicationId:prompts:)`, for an id `ApplicationId.resolved` gave.
    func store(resolvedApplicationId applicationId: String?, prompts: KeyringPrompts) throws(PortalAuthError) -> any SessionStorage {
        switch self {
        case .keyring where FlatpakSandbox.isInside:
            SandboxSessionStorage(applicationId: applicationId ?? "", prompts: prompts)
        case .keyring:
            try applicationId.map { id throws(PortalAuthError) in try KeyringSessionStorage(applicationId: id, prompts: prompts) }
                ?? KeyringSessionStorage.unnamed(prompts: prompts)
        case .file(let directory):
            try FileSessionStorage(applicationId: applicationId, directory: directory)
        }
    }
}
