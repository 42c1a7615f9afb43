import Testing
@testable import PortalAuthCore

/// Grants, tokens and protocol markers compare byte for byte, never canonically.
@Suite struct TextTests {
    @Test(arguments: [
        ("mlg_abc", "mlg_abc", true), ("", "", true), ("K", "\u{212A}", false), ("\u{E9}", "e\u{301}", false),
        ("mlg_abc", "mlg_abd", false), ("mlg_abc", "mlg_ab", false), ("", "a", false), ("ü", "ü", true),
    ])
    func comparesBytes(left: String, right: String, same: Bool) {
        #expect(left.hasSameBytes(as: right) == same)
        #expect(right.hasSameBytes(as: left) == same)
        // Slices of longer strings compare by their own bytes.
        #expect(("<" + left + ">").dropFirst().dropLast().hasSameBytes(as: right) == same)
    }
}
