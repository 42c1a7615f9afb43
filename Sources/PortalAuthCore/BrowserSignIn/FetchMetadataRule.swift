/// The Fetch Metadata rule: where the browser says how a request was made, a callback
/// counts only as a top-level navigation (`Sec-Fetch-Mode: navigate` and
/// `Sec-Fetch-Dest: document`). A page the user visits can point an image, a script, a frame
/// or a `fetch` at the listener; the browser marks each such request (`image`, `no-cors`,
/// `iframe`, `cors`, ...) in headers no page can set, so it is refused (403).
///
/// Browsers send these headers to loopback addresses (potentially trustworthy origins) since
/// Chromium 80, Firefox 90 and Safari 16.4; a client that sends none is not judged by them.
/// A top-level navigation made by a page is indistinguishable from the provider's own
/// redirect: that case is in SECURITY.md's threat model.
enum FetchMetadataRule {
    static let required = [("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "document")]

    /// Nil when each of the two headers is absent or says what a top-level navigation
    /// says; else the refusal. A header sent twice is refused too.
    static func refusal(of head: RequestHead) -> ListenerResponse? {
        for (name, expected) in required {
            let values = head.values(of: name)
            if values.isEmpty { continue }
            guard values.count == 1, values[0].hasSameBytes(as: expected) else {
                return .refusal("403 Forbidden", title: "Forbidden",
                                message: "This address only answers the sign-in page itself.",
                                reason: "not a top-level navigation")
            }
        }
        return nil
    }
}
