/// The persisted form of a session (docs/protocol.md §9): a JSON object with sorted keys,
/// the format Portal's SDKs share.
package struct StoredSession: Equatable, Sendable {
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

    /// A store's entry from the bytes it holds. Bytes that are not UTF-8 cannot be ours:
    /// they read as "", an entry that never decodes, so the vault deletes it.
    package static func entry(utf8 bytes: some Sequence<UInt8>) -> String {
        String(validating: bytes, as: UTF8.self) ?? ""
    }
}

extension StoredSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Printing must never show the token.
    package var description: String { "StoredSession(endUserId: \(endUserId))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["endUserId": endUserId]) }
}
