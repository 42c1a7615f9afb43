import CPortalAuth

/// The library's version, reported at run time and sent as the User-Agent. The numbers are
/// defined once, in include/portal_auth.h.
public enum PortalAuthVersion {
    public static let major = Int(PORTAL_AUTH_VERSION_MAJOR)
    public static let minor = Int(PORTAL_AUTH_VERSION_MINOR)
    public static let patch = Int(PORTAL_AUTH_VERSION_PATCH)
    public static let string = "\(major).\(minor).\(patch)"
}
