#if canImport(Glibc)
import Glibc
#endif

/// One answer of the loopback listener: a status, a small HTML page, and why (for the log
/// line of a refusal, which names the kind of request and never its URL).
struct ListenerResponse: Equatable {
    /// The status line's code and reason, e.g. `404 Not Found`.
    let status: String
    let page: String
    /// What the request was, in a log line's words ("a foreign Host").
    let reason: String
    var extraHeaders = ""

    static func refusal(_ status: String, title: String, message: String, reason: String) -> ListenerResponse {
        ListenerResponse(status: status, page: CallbackPage.document(title: title, message: message), reason: reason)
    }

    static let malformed = refusal("400 Bad Request", title: "Bad request", message: "Bad request.",
                                   reason: "a malformed request")
    static let tooLarge = refusal("431 Request Header Fields Too Large", title: "Request too large",
                                  message: "The request is too large.", reason: "an oversized request head")
    static let notFound = refusal("404 Not Found", title: "Not found", message: "Not found.", reason: "another path")
    static let methodNotAllowed = ListenerResponse(
        status: "405 Method Not Allowed",
        page: CallbackPage.document(title: "Method not allowed", message: "Method not allowed."),
        reason: "a method other than GET", extraHeaders: "Allow: GET\r\n")

    /// Sends the whole response without blocking (it fits in any socket buffer; what a
    /// client that reads nothing leaves unsent is dropped), then ends the connection's output.
    func send(on fd: Int32) {
        let response = "HTTP/1.1 \(status)\r\n"
            + "Content-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(page.utf8.count)\r\n"
            + "Cache-Control: no-store\r\n"
            // The tab's address holds the grant: nothing on the page may send it anywhere.
            + "Referrer-Policy: no-referrer\r\n"
            + "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
            + extraHeaders
            + "Connection: close\r\n\r\n"
            + page
        var bytes = Array(response.utf8)
        _ = Glibc.send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
        _ = shutdown(fd, Int32(SHUT_WR))
    }
}
