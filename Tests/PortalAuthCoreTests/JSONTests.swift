import Testing
@testable import PortalAuthCore

/// The library's JSON reader and writer (RFC 8259), under the envelopes, the userJwt claims
/// and the persisted session.
@Suite struct JSONTests {
    @Test func readsEveryKindOfValue() throws {
        let value = try #require(JSONValue.parse(" \t\r\n{\"a\" : [1, -0.5e+3, \"b\", null, true, false, {\"c\": {}}, []]} \n"))
        #expect(value == .object(["a": .array([
            .number("1"), .number("-0.5e+3"), .string("b"), .null, .bool(true), .bool(false),
            .object(["c": .object([:])]), .array([]),
        ])]))
    }

    @Test(arguments: ["0", "-0", "12", "1.5", "1e9", "1E-2", "-3.25e+10", "true", "null", "\"\"", "[]", "{}"])
    func readsAScalarOrEmptyDocument(text: String) {
        #expect(JSONValue.parse(text) != nil)
    }

    @Test func decodesEscapesAndKeepsUTF8() {
        let text = #""\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00 é""#
        #expect(JSONValue.parse(text) == .string("\"\\/\u{8}\u{C}\n\r\tAé😀 é"))
    }

    @Test func theLastOfARepeatedNameCounts() {
        #expect(JSONValue.parse(#"{"a":1,"a":"two"}"#) == .object(["a": .string("two")]))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, "{a:1}", "'a'", "01", "1.", ".1", "1e",
        "+1", "-", "tru", "nul", "True", "NaN", "Infinity", #""abc"#, #""\x""#, #""\u12""#, #""\u12G4""#,
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, "\"a\nb\"", "\"a\tb\"", "[1] x", #"{"a":1}{}"#, "[1 2]",
        #"{"a":1 "b":2}"#, "\u{FEFF}{}",
    ])
    func refusesWhatIsNotExactlyOneDocument(text: String) {
        #expect(JSONValue.parse(text) == nil)
    }

    @Test func refusesBytesThatAreNotUTF8InAString() {
        #expect(JSONValue.parse([0x22, 0xFF, 0x22]) == nil)
        #expect(JSONValue.parse([0x22, 0xC3, 0x22]) == nil, "a sequence cut short")
        #expect(JSONValue.parse([0x22, 0xC3, 0xA9, 0x22]) == .string("é"))
    }

    @Test func nestingIsBoundedNotRecursedWithoutEnd() {
        let depth = JSONValue.maxDepth
        let deepest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(JSONValue.parse(deepest) != nil)
        #expect(JSONValue.parse("[" + deepest + "]") == nil)
        let hostile = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(JSONValue.parse(hostile) == nil)
    }

    @Test func writesCompactlyWithSortedNamesAndEscapes() {
        let value = JSONValue.object([
            "b": .array([.bool(true), .null, .number("-1.5")]),
            "a": .string("q\"\\/\n\r\t\u{8}\u{C}\u{1}\u{7F}é"),
        ])
        let written = String(decoding: value.encoded, as: UTF8.self)
        #expect(written == #"{"a":"q\"\\/\n\r\t\b\f\u0001"# + "\u{7F}é\"," + #""b":[true,null,-1.5]}"#)
        #expect(JSONValue.parse(value.encoded) == value)
    }

    @Test func readsAnObjectsMembersByType() throws {
        let object = try JSONObject(#require(JSONValue.parse(#"{"s":"x","b":false,"l":["p","q"],"n":null,"i":1,"m":[1]}"#)))
        #expect(try object.string("s") == "x")
        #expect(try object.bool("b") == false)
        #expect(try object.strings("l") == ["p", "q"])
        #expect(try object.string("n") == nil, "null is absent")
        #expect(try object.string("absent") == nil)
        #expect(throws: JSONObject.WrongShape.self) { try object.string("i") }
        #expect(throws: JSONObject.WrongShape.self) { try object.bool("s") }
        #expect(throws: JSONObject.WrongShape.self) { try object.strings("m") }
        #expect(throws: JSONObject.WrongShape.self) { try JSONObject(.array([])) }
    }
}
