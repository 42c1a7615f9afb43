/// The application id's rule, which every store and the client share: a reverse-DNS name as
/// D-Bus and desktop files have them (`com.example.App`), and, when the application names
/// none, the Flatpak sandbox's own.
enum ApplicationId {
    /// At least two elements separated by `.`, each of ASCII letters, digits, `_` and `-`
    /// and not starting with a digit, 255 bytes at most.
    static func isReverseDNS(_ name: String) -> Bool {
        let elements = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return name.utf8.count <= 255 && elements.count >= 2 && elements.allSatisfy { element in
            guard let first = element.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return element.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
        }
    }

    /// `id`, when it is a reverse-DNS name.
    /// - Throws: `PortalAuthError.invalidArgument(name: "applicationId")` otherwise.
    static func checked(_ id: String) throws(PortalAuthError) -> String {
        guard isReverseDNS(id) else { throw .invalidArgument(name: "applicationId") }
        return id
    }

    /// The id an application gave, checked, or, for none, the sandbox's (`FLATPAK_ID`;
    /// nil outside one).
    static func resolved(_ given: String?) throws(PortalAuthError) -> String? {
        guard let given else { return FlatpakSandbox.applicationId }
        return try checked(given)
    }
}
