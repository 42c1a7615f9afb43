/// One HTTP exchange as the transport sees it: bytes in, status and bytes out.
package struct HTTPRequest: Sendable {
    package enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
    }

    package var method: Method
    package var url: String
    /// Header lines, `Name: value`.
    package var headers: [String]
    package var body: [UInt8]?
    /// Requests to one origin share a bounded pool of connections.
    package var origin: String
    package var timeouts: Timeouts

    package init(method: Method, url: String, headers: [String] = [], body: [UInt8]? = nil,
                 origin: String, timeouts: Timeouts = Timeouts()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.origin = origin
        self.timeouts = timeouts
    }

    /// Never through a proxy, whatever `http_proxy` says: the host is loopback.
    var direct: Bool { LoopbackHost.isLoopback(url: url) }
}

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Headers and body carry credentials (a bearer userJwt, a grant): never printed.
    package var description: String { "HTTPRequest(\(method.rawValue) \(url.prefix { $0 != "?" }))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["method": method.rawValue]) }
}

package struct HTTPResponse: Sendable {
    package var status: Int
    package var body: [UInt8]
}

/// Connect and overall limits of one request.
public struct Timeouts: Sendable, Equatable {
    /// Time allowed to establish the connection (TCP and TLS).
    public var connect: Duration
    /// Time allowed for the whole request, connection included.
    public var total: Duration

    public init(connect: Duration = .seconds(10), total: Duration = .seconds(30)) {
        self.connect = connect
        self.total = total
    }

    var connectMilliseconds: Int { Self.milliseconds(connect) }
    var totalMilliseconds: Int { Self.milliseconds(total) }

    /// Whole milliseconds from 1 (curl reads zero as "no limit") to a day: a negative or
    /// absurd duration must neither disable the limit nor overflow.
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let millis = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return Int(min(max(millis, 1), 86_400_000))
    }
}
