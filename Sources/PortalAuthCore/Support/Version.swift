/// The library's version, reported at run time and sent as the User-Agent.
public enum PortalAuthVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static let string = "\(major).\(minor).\(patch)"
}
