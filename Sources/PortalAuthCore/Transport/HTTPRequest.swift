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
    package var network: NetworkSettings

    package init(method: Method, url: String, headers: [String] = [], body: [UInt8]? = nil,
                 origin: String, network: NetworkSettings? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.origin = origin
        // A request outside a client's (the demo's, a test's): the defaults.
        self.network = network ?? NetworkSettings(timeouts: Timeouts(), trust: .system, route: .of(origin: url) ?? .direct)
    }
}

/// How a client's requests travel, fixed when the client is made (docs/network.md): their
/// limits, the certificates they trust, and the environment's proxy route, or the desktop's
/// proxy to ask.
package struct ClientNetwork: Sendable {
    let timeouts: Timeouts
    let trust: TrustStore
    /// Nil: no variable named a proxy, and the desktop decides.
    let route: ProxyRoute?
    let desktop = DesktopProxy()

    init(timeouts: Timeouts, trust: TrustStore, origin: String) {
        self.timeouts = timeouts
        self.trust = trust
        route = ProxyRoute.of(origin: origin)
    }

    /// The settings of one request to `url`.
    func settings(for url: String) async -> NetworkSettings {
        let route = if let route { route } else { await desktop.route(for: url, within: timeouts.connect) }
        return NetworkSettings(timeouts: timeouts, trust: trust, route: route)
    }
}

/// How one request travels: its limits, the certificates it trusts and its proxy.
package struct NetworkSettings: Sendable {
    package var timeouts: Timeouts
    package var trust: TrustStore
    package var route: ProxyRoute

    package init(timeouts: Timeouts, trust: TrustStore, route: ProxyRoute) {
        self.timeouts = timeouts
        self.trust = trust
        self.route = route
    }
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
    /// The delay `Retry-After` asked for, in whole seconds (from either of its forms), or nil.
    package var retryAfter: Int?
    /// How far the server's clock (its `Date`) is ahead of this machine's, in seconds, or nil
    /// when it sent none.
    package var clockSkew: Int?

    package init(status: Int, body: [UInt8], retryAfter: Int? = nil, clockSkew: Int? = nil) {
        self.status = status
        self.body = body
        self.retryAfter = retryAfter
        self.clockSkew = clockSkew
    }
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
