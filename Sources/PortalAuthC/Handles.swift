import PortalAuthCore

/// A handle's object that belongs to the process that made it (a client, a session, a
/// call): in a forked child, one made before the fork is the parent's, and no function of
/// the child touches it (docs/desktop.md "fork()").
protocol ProcessBound: AnyObject {
    /// ProcessFork.generation when it was made.
    var generation: UInt64 { get }
}

extension Handle where Object: ProcessBound {
    /// Nil for NULL, and for an object of another generation (the parent's).
    static func object(_ handle: UnsafePointer<CType>?) -> Object? {
        guard let handle else { return nil }
        let object = Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
        return object.generation == ProcessFork.generation ? object : nil
    }

    /// Lets go of C's reference; of an object of another generation, nothing: its release
    /// would run the parent's teardown (close its listeners' sockets, remove its channel's
    /// socket file) on what the child shares with the parent.
    static func release(_ handle: UnsafeMutablePointer<CType>?) {
        guard object(handle) != nil, let handle else { return }
        Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}

/// A Swift object handed to C as an opaque handle: retained while C holds it.
enum Handle<Object: AnyObject, CType> {
    static func make(_ object: Object) -> UnsafeMutablePointer<CType> {
        Unmanaged.passRetained(object).toOpaque().assumingMemoryBound(to: CType.self)
    }

    static func object(_ handle: UnsafePointer<CType>?) -> Object? {
        guard let handle else { return nil }
        return Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    static func release(_ handle: UnsafeMutablePointer<CType>?) {
        guard let handle else { return }
        Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}

/// A C string the library owns, wiped and freed with its holder (a result's userJwt and
/// TOTP link are secrets; wiping the others too keeps one rule).
final class OwnedCString {
    let pointer: UnsafeMutablePointer<CChar>
    private let count: Int

    init(_ text: String) {
        count = text.utf8.count + 1
        pointer = .allocate(capacity: count)
        UnsafeMutableRawBufferPointer(start: pointer, count: count - 1).copyBytes(from: text.utf8)
        pointer[count - 1] = 0
    }

    deinit {
        SecretMemory.wipe(pointer, count: count)
        pointer.deallocate()
    }
}

/// malloc failed: reported as PORTAL_AUTH_E_INTERNAL.
struct OutOfMemory: Error {}

/// A borrowed C string read as UTF-8: nil for NULL, a failure for bytes that are not UTF-8.
enum CText {
    struct NotUTF8: Error {}

    static func read(_ text: UnsafePointer<CChar>?) throws(NotUTF8) -> String? {
        guard let text else { return nil }
        guard let string = String(validatingCString: text) else { throw NotUTF8() }
        return string
    }
}
