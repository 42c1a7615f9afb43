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

/// A C string the library owns, freed with its holder.
final class OwnedCString {
    let pointer: UnsafeMutablePointer<CChar>

    init(_ text: String) {
        let bytes = Array(text.utf8CString)
        pointer = .allocate(capacity: bytes.count)
        pointer.initialize(from: bytes, count: bytes.count)
    }

    deinit { pointer.deallocate() }
}

/// A borrowed C string read as UTF-8: nil for NULL, a failure for bytes that are not UTF-8.
enum CText {
    struct NotUTF8: Error {}

    static func read(_ text: UnsafePointer<CChar>?) throws(NotUTF8) -> String? {
        guard let text else { return nil }
        guard let string = String(validatingCString: text) else { throw NotUTF8() }
        return string
    }
}
