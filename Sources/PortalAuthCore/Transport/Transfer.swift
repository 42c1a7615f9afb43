import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One request in flight, from submission to completion.
final class Transfer: @unchecked Sendable {
    private enum Phase {
        case created, queued, cancelled, sent, finished
    }

    let request: HTTPRequest
    private let phase = Locked(Phase.created)
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?

    // Touched only by its pool's driver (the I/O thread, or the completion queue's runs under
    // their lock), between `configure` and `release`.
    private var body: [UInt8] = []
    private var overflowed = false
    private var attempts = 0
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The final answer's `Retry-After` and `Date` values, as sent (each cut short).
    private var retryAfterField: String?
    private var dateField: String?
    /// curl writes its detail here during the transfer: memory of our own, not an array's.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(_ request: HTTPRequest) {
        self.request = request
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// Records the caller's continuation. Returns false (after failing it) when the call
    /// was cancelled before it could be queued.
    func queue(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let queued = phase.withLock { phase -> Bool in
            guard phase == .created else { return false }
            self.continuation = continuation
            phase = .queued
            return true
        }
        if !queued { continuation.resume(throwing: CancellationError()) }
        return queued
    }

    /// Cancels unless the request has already gone to curl.
    func cancel() {
        let pending = phase.withLock { phase -> CheckedContinuation<HTTPResponse, any Error>? in
            switch phase {
            case .created:
                phase = .cancelled
                return nil
            case .queued:
                phase = .cancelled
                defer { continuation = nil }
                return continuation
            case .cancelled, .sent, .finished:
                return nil
            }
        }
        pending?.resume(throwing: CancellationError())
    }

    /// Claims the transfer for sending; false if it was cancelled while it waited.
    func markSent() -> Bool {
        phase.withLock { phase in
            guard phase == .queued else { return false }
            phase = .sent
            return true
        }
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        let pending = phase.withLock { phase -> CheckedContinuation<HTTPResponse, any Error>? in
            phase = .finished
            defer { continuation = nil }
            return continuation
        }
        pending?.resume(with: result)
    }

    /// Sets the transfer up on `easy`. Every option is checked: a libcurl that cannot honour
    /// one (an older one) fails the request with a message naming it, before anything is
    /// sent, unless an older option gives the same protection. The protections above all must never be silently missing: the restriction to
    /// http and https, TLS verification, the refusal to resend, close-on-exec connections
    /// and, to a loopback host, no proxy.
    /// - Throws: `PortalRequestsError.network`, also when a header cannot be added (out of
    ///   memory), since a request missing its environment id or bearer must not go out.
    func configure(_ easy: UnsafeMutableRawPointer) throws(PortalRequestsError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let network = request.network
        // libcurl before 7.85 (Debian 11, Ubuntu 22.04) says the same with a bit mask.
        let protocols = pa_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        try CurlOptions.set(protocols == CURLE_UNKNOWN_OPTION ? pa_easy_setopt_http_protocols_mask(easy) : protocols,
                            "CURLOPT_PROTOCOLS_STR", "restrict requests to http and https")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
                            "CURLOPT_SSL_VERIFYPEER", "verify the server's TLS certificate")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
                            "CURLOPT_SSL_VERIFYHOST", "verify that the TLS certificate names the server")
        let prerequest = pa_easy_setopt_prereq_function(easy, transferPrereqCallback)
        if prerequest == CURLE_UNKNOWN_OPTION {
            // libcurl before 7.80 (Debian 11) has no pre-request callback. It resends a request
            // only on a reused connection it finds dead: with each connection fresh and closed
            // after, never.
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1),
                                "CURLOPT_FRESH_CONNECT", "refuse to send a request twice")
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1),
                                "CURLOPT_FORBID_REUSE", "refuse to send a request twice")
        } else {
            try CurlOptions.set(prerequest, "CURLOPT_PREREQFUNCTION", "refuse to send a request twice")
            try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, me),
                                "CURLOPT_PREREQDATA", "refuse to send a request twice")
        }
        try CurlOptions.set(pa_easy_setopt_close_on_exec_sockets(easy),
                            "CURLOPT_OPENSOCKETFUNCTION", "keep its connections from the programs the app starts")
        // The route is always set, so that libcurl never picks a proxy of its own (from
        // the environment) nor sends a loopback request through one.
        switch network.route {
        case .direct:
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXY, ""), "CURLOPT_PROXY", "reach the host without a proxy")
        case .through(let proxy):
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXY, proxy.url), "CURLOPT_PROXY", "use the proxy")
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_NOPROXY, ""), "CURLOPT_NOPROXY", "use the proxy")
            if let user = proxy.user {
                try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXYUSERNAME, user), "CURLOPT_PROXYUSERNAME", "log in to the proxy")
                try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXYPASSWORD, proxy.password ?? ""),
                                    "CURLOPT_PROXYPASSWORD", "log in to the proxy")
                // Whatever the proxy asks for: Basic, Digest, NTLM or Negotiate (a company's).
                try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_PROXYAUTH, pa_curlauth_any()),
                                    "CURLOPT_PROXYAUTH", "log in to the proxy")
            }
        }
        if let file = network.trust.file {
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_CAINFO, file), "CURLOPT_CAINFO", "trust the CA file")
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXY_CAINFO, file), "CURLOPT_PROXY_CAINFO", "trust the CA file")
        }
        if let folder = network.trust.folder {
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_CAPATH, folder), "CURLOPT_CAPATH", "trust the CA folder")
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROXY_CAPATH, folder), "CURLOPT_PROXY_CAPATH", "trust the CA folder")
        }
        // A lookup still running when the request ends (a nameserver that never answers) is
        // left to finish on its own thread, rather than waited for on the I/O thread, where
        // it would hold up every other request. libcurl before 7.87 has no such option.
        let quickExit = pa_easy_setopt_long(easy, CURLOPT_QUICK_EXIT, 1)
        if quickExit != CURLE_UNKNOWN_OPTION { try CurlOptions.set(quickExit, "CURLOPT_QUICK_EXIT", "leave a stalled lookup behind") }

        try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_URL, request.url), "CURLOPT_URL", "take the request's URL")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL", "run without signals")
        try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_USERAGENT, "portal-auth/\(PortalAuthVersion.string)"),
                            "CURLOPT_USERAGENT", "name the client")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, network.timeouts.connectMilliseconds),
                            "CURLOPT_CONNECTTIMEOUT_MS", "bound the connection time")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, network.timeouts.totalMilliseconds),
                            "CURLOPT_TIMEOUT_MS", "bound the request time")
        try CurlOptions.set(pa_easy_setopt_write_function(easy, transferWriteCallback),
                            "CURLOPT_WRITEFUNCTION", "bound the response")
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA", "bound the response")
        try CurlOptions.set(pa_easy_setopt_header_function(easy, transferHeaderCallback),
                            "CURLOPT_HEADERFUNCTION", "read Retry-After and Date")
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA", "read Retry-After and Date")
        errorBuffer[0] = 0
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer),
                            "CURLOPT_ERRORBUFFER", "report its errors")

        // "Expect:" keeps curl from waiting on 100-continue.
        for line in request.headers + ["Expect:"] {
            guard let appended = curl_slist_append(headerList, line) else {
                throw .network(.connection, message: "libcurl could not allocate the request's headers.")
            }
            headerList = appended
        }
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)),
                            "CURLOPT_HTTPHEADER", "send the request's headers")

        if request.method == .post {
            let payload = request.body ?? []
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_POST, 1), "CURLOPT_POST", "send a POST")
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, payload.count),
                                "CURLOPT_POSTFIELDSIZE", "send the request's body")
            // COPYPOSTFIELDS copies, so the array need not outlive this call.
            let copied = payload.withUnsafeBytes { bytes in
                pa_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS,
                                       UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)))
            }
            try CurlOptions.set(copied, "CURLOPT_COPYPOSTFIELDS", "send the request's body")
        }
    }

    /// Called by curl right before each attempt to send. libcurl silently resends a request
    /// whose reused connection closed without a byte of answer; a grant, a code or an email
    /// must not go out twice, so a second attempt is refused and the first failure stands.
    func allowAttempt() -> Bool {
        attempts += 1
        return attempts == 1
    }

    /// Appends a chunk of the response body; false once the cap would be exceeded.
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard body.count + chunk.count <= HTTPEngine.maxResponseBytes else {
            overflowed = true
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    /// Records one header line of the answer. A status line starts a new answer (after a
    /// proxy's CONNECT, or a 100 Continue): only the final answer's fields count.
    /// Every line of every answer comes here: only the two fields wanted become text.
    func header(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: "HTTP/".utf8) {
            retryAfterField = nil
            dateField = nil
        } else if let value = Self.value(of: "retry-after", in: line) {
            retryAfterField = value
        } else if let value = Self.value(of: "date", in: line) {
            dateField = value
        }
    }

    /// The value of the header line `line` when it is the field `name` (lower-case ASCII,
    /// matched without regard to case), trimmed and cut short; else nil.
    private static func value(of name: StaticString, in line: UnsafeRawBufferPointer) -> String? {
        let count = name.utf8CodeUnitCount
        guard line.count > count, line[count] == UInt8(ascii: ":") else { return nil }
        let matches = name.withUTF8Buffer { name in zip(line, name).allSatisfy { $0.asciiLowercased == $1 } }
        guard matches else { return nil }
        return String(decoding: line[(count + 1)...].prefix(160), as: UTF8.self).trimmed
    }

    func outcome(code: CURLcode, easy: UnsafeMutableRawPointer) -> Result<HTTPResponse, any Error> {
        let proxied = request.network.route != .direct
        switch code {
        case CURLE_OK:
            var status = 0
            pa_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            // A plain http request's proxy answers for the server: Portal never sends 407.
            if status == 407, proxied { return failure(.proxyAuthRequired, "The proxy answered HTTP 407.") }
            let now = time(nil)
            return .success(HTTPResponse(status: status, body: body, retryAfter: retryAfter(now: now),
                                         clockSkew: dateField.flatMap(Self.seconds).map { Int($0 - now) }))
        case CURLE_WRITE_ERROR where overflowed:
            return failure(.responseTooLarge, "The response exceeded \(HTTPEngine.maxResponseBytes) bytes.")
        case CURLE_ABORTED_BY_CALLBACK where attempts > 1:
            return failure(.connectionReset, "The connection closed before the server answered; the request was not retried.")
        default:
            let secure = request.url.hasPrefix("https://")
            return failure(FailureKind(code: code, proxied: proxied, secure: secure, easy: easy).failure, detail(code))
        }
    }

    /// A network failure whose message ends with the server it was for, and the proxy
    /// (never the proxy's credentials).
    private func failure(_ kind: NetworkFailure, _ detail: String) -> Result<HTTPResponse, any Error> {
        let via = request.network.route.displayName.map { ", through the proxy \($0)" } ?? ""
        return .failure(PortalRequestsError.network(kind, message: "\(detail) (\(request.origin)\(via))"))
    }

    /// `Retry-After` in seconds: its delay, or the time to its date (none when past).
    private func retryAfter(now: time_t) -> Int? {
        guard let field = retryAfterField else { return nil }
        if !field.isEmpty, field.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // Digits beyond what an Int32 holds are a delay of years: capped, never cut short.
            return Int(field).map { min($0, Int(Int32.max)) } ?? Int(Int32.max)
        }
        return Self.seconds(field).map { max(0, Int($0 - now)) }
    }

    /// curl's own words: the error buffer when it has something, else the code's text.
    private func detail(_ code: CURLcode) -> String {
        let buffered = String(cString: errorBuffer)
        if !buffered.isEmpty { return buffered }
        return String(cString: curl_easy_strerror(code))
    }

    /// An HTTP date (any of its three forms) as seconds since the epoch, read by libcurl.
    private static func seconds(_ date: String) -> time_t? {
        let value = curl_getdate(date, nil)
        return value < 0 ? nil : value
    }

    func release() {
        curl_slist_free_all(headerList)
        headerList = nil
    }
}

private let transferPrereqCallback: pa_curl_prereq_fn = { context, _, _, _, _ in
    guard let context else { return Int32(CURL_PREREQFUNC_ABORT) }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    return Int32(transfer.allowAttempt() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT)
}

private let transferHeaderCallback: pa_curl_header_fn = { line, size, count, context in
    let length = size * count
    guard let context, let line else { return length }
    Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().header(UnsafeRawBufferPointer(start: line, count: length))
    return length
}

private let transferWriteCallback: pa_curl_write_fn = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    return transfer.append(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}
