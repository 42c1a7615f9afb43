import PortalAuthCore

/// See portal_auth_version in include/portal_auth.h.
@c(portal_auth_version)
public func portalAuthVersion() -> UnsafePointer<CChar> {
    libraryVersionText
}

/// See portal_auth_version_number in include/portal_auth.h.
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
