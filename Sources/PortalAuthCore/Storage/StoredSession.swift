import FoundationEssentials

/// The persisted form of a session (client-auth.md §9): a JSON object with sorted keys,
/// the format Portal's SDKs share.
struct StoredSession: Codable, Equatable, Sendable {
    let clientSessionToken: String
    let endUserId: String

    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Two strings always encode.
        let bytes = (try? encoder.encode(self)) ?? Data()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Strict decoding: both fields non-blank strings; unknown keys and surrounding
    /// whitespace are tolerated. `nil` means the entry is undecodable.
    static func decode(_ raw: String) -> StoredSession? {
        guard let session = try? JSONDecoder().decode(StoredSession.self, from: Data(raw.utf8)),
              !session.clientSessionToken.isBlank, !session.endUserId.isBlank
        else { return nil }
        return session
    }
}

extension StoredSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Printing must never show the token.
    var description: String { "StoredSession(endUserId: \(endUserId))" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["endUserId": endUserId]) }
}
