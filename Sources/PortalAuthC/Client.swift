import CPortalAuth
import PortalAuthCore

/// What a portal_auth handle holds.
final class ClientBox: Sendable, ProcessBound {
    let auth: PortalAuth
    let dispatcher = Locked(Dispatcher.direct)
    let generation = ProcessFork.generation

    init(_ auth: PortalAuth) {
        self.auth = auth
    }

    /// Routes the calls started from now on through `route`. The dispatcher it replaces is
    /// let go after the lock: letting go of a host's dispatcher may call its destroy function,
    /// which may call into the library.
    func use(_ route: Dispatcher) {
        _ = dispatcher.withLock { current in
            defer { current = route }
            return current
        }
    }
}

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// See portal_auth_options_init in include/portal_auth.h.
@c(portal_auth_options_init)
public func portalAuthOptionsInit(_ options: UnsafeMutablePointer<portal_auth_options>?, _ size: UInt) {
    let size = Int(clamping: size)
    guard let options, size >= MemoryLayout<Int>.size else { return }
    // Every field's default is zero (NULL, PORTAL_AUTH_UNSET, PORTAL_AUTH_STORAGE_KEYRING, a
    // timeout of 0), as PORTAL_AUTH_OPTIONS_INIT has it; `size` is the struct's first field.
    let raw = UnsafeMutableRawPointer(options)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    raw.storeBytes(of: size, as: Int.self)
}

/// See portal_auth_new in include/portal_auth.h.
@c(portal_auth_new)
public func portalAuthNew(
    _ options: UnsafePointer<portal_auth_options>?,
    _ out_client: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth>?>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    out_client?.pointee = nil
    out_error?.pointee = nil
    do {
        guard let out_client else { throw PortalAuthError.invalidArgument(name: "out_client") }
        let options = try ClientOptions(options)
        let box = ClientBox(try options.makeClient())
        if let queue = try options.completionQueue() { box.use(Dispatcher(host: nil, queue: queue)) }
        out_client.pointee = ClientHandle.make(box)
        return portal_auth_code(PORTAL_AUTH_OK)
    } catch {
        return ErrorBox.report(error, to: out_error)
    }
}

/// See portal_auth_free in include/portal_auth.h.
@c(portal_auth_free)
public func portalAuthFree(_ client: UnsafeMutablePointer<portal_auth>?) {
    ClientHandle.object(client)?.auth.endWaits()
    ClientHandle.release(client)
}

/// The options a caller passed, read field by field within the `size` it declared, so a
/// caller built against an older, shorter struct still works.
struct ClientOptions {
    /// -1: PORTAL_AUTH_UNSET as the headers before portal_auth_tristate spelled it, which a
    /// program built against one still passes.
    private static let formerUnset = portal_auth_tristate(rawValue: UInt32(bitPattern: -1))

    private let raw: UnsafeRawPointer
    private let size: Int

    init(_ options: UnsafePointer<portal_auth_options>?) throws {
        guard let options else { throw PortalAuthError.invalidArgument(name: "options") }
        raw = UnsafeRawPointer(options)
        size = options.pointee.size
        guard size >= MemoryLayout<Int>.size else { throw PortalAuthError.invalidArgument(name: "options") }
    }

    /// The field at `keyPath`, or `fallback` when the caller's struct ends before it.
    private func field<T>(_ keyPath: KeyPath<portal_auth_options, T>, or fallback: T) -> T {
        guard let offset = MemoryLayout<portal_auth_options>.offset(of: keyPath),
              offset + MemoryLayout<T>.size <= size
        else { return fallback }
        return raw.load(fromByteOffset: offset, as: T.self)
    }

    private func text(_ keyPath: KeyPath<portal_auth_options, UnsafePointer<CChar>?>, _ name: String) throws -> String? {
        do {
            return try CText.read(field(keyPath, or: nil))
        } catch {
            throw PortalAuthError.invalidArgument(name: name)
        }
    }

    /// The queue of `completion_queue`: nil for NULL; a freed one is the host's mistake, a
    /// parent's (in a forked child) is refused.
    func completionQueue() throws -> CompletionQueue? {
        guard let handle = field(\.completion_queue, or: nil) else { return nil }
        guard let box = QueueHandle.object(handle) else { throw PortalAuthError.invalidArgument(name: "completion_queue") }
        return box.queue
    }

    func makeClient() throws -> PortalAuth {
        let environment = try text(\.auth_environment_id, "auth_environment_id") ?? ""
        let redirect = try text(\.redirect_url, "redirect_url") ?? ""
        let apiHost = try text(\.api_host, "api_host") ?? "api.portalhq.io"
        let fromEmail = try text(\.magic_link_from_email, "magic_link_from_email")
        let templateId = try text(\.magic_link_template_id, "magic_link_template_id")
        guard (fromEmail == nil) == (templateId == nil) else {
            throw PortalAuthError.invalidArgument(name: fromEmail == nil ? "magic_link_from_email" : "magic_link_template_id")
        }
        let abstracted: Bool?
        switch field(\.is_account_abstracted, or: PORTAL_AUTH_UNSET) {
        case PORTAL_AUTH_UNSET, Self.formerUnset: abstracted = nil
        case PORTAL_AUTH_YES: abstracted = true
        case PORTAL_AUTH_NO: abstracted = false
        default: throw PortalAuthError.invalidArgument(name: "is_account_abstracted")
        }
        // Checked by the client whatever the storage (it also names the redirect channel).
        let applicationId = try text(\.application_id, "application_id")
        let storage: (any SessionStorage)?
        switch field(\.storage, or: PORTAL_AUTH_STORAGE_KEYRING) {
        case PORTAL_AUTH_STORAGE_KEYRING: storage = nil  // the client's own choice, `StorageChoice.keyring`
        case PORTAL_AUTH_STORAGE_MEMORY: storage = MemorySessionStorage.shared
        case PORTAL_AUTH_STORAGE_HOST: storage = try HostStorage.make(field(\.host_storage, or: nil))
        case PORTAL_AUTH_STORAGE_FILE:
            storage = try StorageChoice.file(directory: try text(\.file_storage_path, "file_storage_path"))
                .store(applicationId: applicationId, prompts: .never)
        default: throw PortalAuthError.invalidArgument(name: "storage")
        }
        let defaults = Timeouts()
        let timeouts = Timeouts(connect: timeout(milliseconds: field(\.connect_timeout_ms, or: 0), default: defaults.connect),
                                total: timeout(milliseconds: field(\.request_timeout_ms, or: 0), default: defaults.total))
        let promptTimeout = field(\.keyring_prompt_timeout_ms, or: 0)
        let caFile = try text(\.ca_file, "ca_file")
        return try PortalAuth(
            authEnvironmentId: environment, redirectUrl: redirect, apiHost: apiHost,
            magicLink: fromEmail.flatMap { from in templateId.map { MagicLinkConfig(fromEmail: from, templateId: $0) } },
            isAccountAbstracted: abstracted, applicationId: applicationId, storage: storage, timeouts: timeouts,
            caFile: caFile, keyringPrompts: promptTimeout > 0 ? .allowed(timeout: .milliseconds(promptTimeout)) : .never)
    }
}
