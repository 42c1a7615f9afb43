/// The persisted form of a session (docs/protocol.md §9): a JSON object with sorted keys,
/// the format Portal's SDKs share.
struct StoredSession: Equatable, Sendable {
    let clientSessionToken: String
    let endUserId: String

    func encoded() -> String {
        let json = JSONValue.object(["clientSessionToken": .string(clientSessionToken), "endUserId": .string(endUserId)])
        return String(decoding: json.encoded, as: UTF8.self)
    }

    /// Strict decoding: both fields non-blank strings; unknown keys and surrounding
    /// whitespace are tolerated. `nil` means the entry is undecodable.
    static func decode(_ raw: String) -> StoredSession? {
        guard let value = JSONValue.parse(raw), let object = try? JSONObject(value),
              let token = try? object.string("clientSessionToken"), !token.isBlank,
              let endUserId = try? object.string("endUserId"), !endUserId.isBlank
        else { return nil }
        return StoredSession(clientSessionToken: token, endUserId: endUserId)
    }
}

extension StoredSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Printing must never show the token.
    var description: String { "StoredSession(endUserId: \(endUserId))" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["endUserId": endUserId]) }
}
