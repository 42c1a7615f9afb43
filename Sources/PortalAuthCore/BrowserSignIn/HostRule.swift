/// The Host rule: a callback counts only when its `Host` is the redirect URL's own
/// authority. A page the user visits can make the browser send requests to the listener
/// under a name of its own that resolves to loopback (DNS rebinding); those carry that
/// name, and are refused (421).
enum HostRule {
    /// Nil when the head carries exactly one Host and it is `redirect`'s authority; else
    /// the refusal: 400 for none or several (RFC 9112 §3.2), 421 for another authority.
    static func refusal(of head: RequestHead, for redirect: LoopbackRedirect) -> ListenerResponse? {
        let hosts = head.values(of: "host")
        guard hosts.count == 1 else {
            return .refusal("400 Bad Request", title: "Bad request", message: "Bad request.",
                            reason: hosts.isEmpty ? "a request without Host" : "a request with several Hosts")
        }
        guard isOwnAuthority(hosts[0], of: redirect) else {
            return .refusal("421 Misdirected Request", title: "Misdirected request",
                            message: "This address does not serve that host.", reason: "a foreign Host")
        }
        return nil
    }

    /// `127.0.0.1:<port>`, `[::1]:<port>` or `localhost:<port>` as the redirect URL names
    /// it (host names are case-insensitive); without the port when it is 80, which a
    /// browser leaves out.
    static func isOwnAuthority(_ host: String, of redirect: LoopbackRedirect) -> Bool {
        let value = host.lowercased()
        let name = redirect.endpoint.dropLast(":\(redirect.port)".count)
        return value.hasSameBytes(as: redirect.endpoint) || (redirect.port == 80 && value.hasSameBytes(as: name))
    }
}
