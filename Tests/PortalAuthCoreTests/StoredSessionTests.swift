import Testing
@testable import PortalAuthCore

/// docs/protocol.md §9: the persisted format.
@Suite struct StoredSessionTests {
    @Test func encodesWithSortedKeysAndNothingElse() {
        let stored = StoredSession(clientSessionToken: "cst/1", endUserId: "eu_1")
        #expect(stored.encoded() == #"{"clientSessionToken":"cst/1","endUserId":"eu_1"}"#)
    }

    @Test func decodesToleratingWhitespaceAndUnknownKeys() {
        let decoded = StoredSession.decode(" \n{\"endUserId\":\"eu\",\"extra\":[1],\"clientSessionToken\":\"t\"}\t")
        #expect(decoded == StoredSession(clientSessionToken: "t", endUserId: "eu"))
    }

    @Test(arguments: ["", "   ", "null", "[]", "{}", "not json",
                      #"{"clientSessionToken":"t"}"#, #"{"endUserId":"e"}"#,
                      #"{"clientSessionToken":"","endUserId":"e"}"#, #"{"clientSessionToken":"t","endUserId":"  "}"#,
                      #"{"clientSessionToken":1,"endUserId":"e"}"#, #"{"clientSessionToken":"t","endUserId":null}"#])
    func rejectsUndecodableEntries(raw: String) {
        #expect(StoredSession.decode(raw) == nil)
    }
}
