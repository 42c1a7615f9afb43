import PortalAuthCore

/// The library's version as text, e.g. "0.1.0". Static storage: never free it.
@c(portal_auth_version)
public func portalAuthVersion() -> UnsafePointer<CChar> {
    libraryVersionText
}

/// The library's version as PORTAL_AUTH_VERSION_NUMBER counts it, to compare with the
/// macro a program was compiled against.
@c(portal_auth_version_number)
public func portalAuthVersionNumber() -> Int32 {
    Int32(PortalAuthVersion.major * 10000 + PortalAuthVersion.minor * 100 + PortalAuthVersion.patch)
}

// Written once, when first read, and never again: safe to share.
nonisolated(unsafe) private let libraryVersionText = staticCString(PortalAuthVersion.string)

/// A copy of `text` in storage that lives as long as the process, for strings C is told
/// never to free.
func staticCString(_ text: String) -> UnsafePointer<CChar> {
    let bytes = Array(text.utf8CString)
    let storage = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    storage.initialize(from: bytes, count: bytes.count)
    return UnsafePointer(storage)
}
