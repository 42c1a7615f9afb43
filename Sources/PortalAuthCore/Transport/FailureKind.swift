import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Which `NetworkFailure` a transfer that got no usable answer was (docs/network.md
/// "Failures with no answer"): decided on libcurl's result code and what libcurl reports
/// beside it (the proxy's answer to CONNECT, the system's errno, OpenSSL's verification
/// result, whether the request went out), never on its text.
struct FailureKind {
    let code: CURLcode
    /// Whether the request went through a proxy.
    let proxied: Bool
    /// Whether the request was https.
    let secure: Bool
    let easy: UnsafeMutableRawPointer

    var failure: NetworkFailure {
        // A proxy that answered CONNECT with anything but 2xx refused the tunnel, whatever
        // the result code libcurl chose for it: for want of credentials with 407, or with
        // 401 (tinyproxy's answer to wrong ones).
        let tunnel = long(CURLINFO_HTTP_CONNECTCODE)
        if proxied, tunnel != 0, !(200..<300).contains(tunnel) {
            return tunnel == 407 || tunnel == 401 ? .proxyAuthRequired : .proxyRefused
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST: return .nameNotResolved
        case CURLE_COULDNT_RESOLVE_PROXY: return .proxyUnreachable
        // Through a proxy, the connection libcurl makes is the proxy's.
        case CURLE_COULDNT_CONNECT: return proxied ? .proxyUnreachable : .connectionRefused
        case CURLE_OPERATION_TIMEDOUT: return sent ? .requestTimeout : .connectTimeout
        case CURLE_PEER_FAILED_VERIFICATION: return certificateFailure
        case CURLE_SSL_CACERT_BADFILE: return .caFileUnusable
        case CURLE_SSL_CONNECT_ERROR: return long(CURLINFO_OS_ERRNO) == Int(ECONNRESET) ? .connectionReset : .tlsFailed
        case CURLE_PROXY: return .proxyRefused
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .connectionReset
        default: return .connection
        }
    }

    /// Whether the request went out before the timeout, which makes it a request timeout
    /// (the server may have acted on it) rather than a connect timeout. Through a proxy's
    /// tunnel, the CONNECT request counts only once the proxy accepted it.
    private var sent: Bool {
        guard long(CURLINFO_REQUEST_SIZE) > 0 else { return false }
        return !(proxied && secure) || (200..<300).contains(long(CURLINFO_HTTP_CONNECTCODE))
    }

    /// OpenSSL's verification result names the certificate's fault. libcurl checks the name
    /// itself once OpenSSL has accepted the chain, and fails before recording OpenSSL's
    /// result, which then keeps the value libcurl starts a handshake with, `!X509_V_OK` (1).
    /// Another TLS library's results mean other things: its failures are all
    /// `certificateUntrusted`.
    private var certificateFailure: NetworkFailure {
        guard pa_curl_uses_openssl() != 0 else { return .certificateUntrusted }
        switch long(CURLINFO_SSL_VERIFYRESULT) {
        // libcurl's own check (before it records OpenSSL's result, or after an accepted
        // chain), X509_V_ERR_HOSTNAME_MISMATCH
        case 0, 1, 62: return .certificateWrongHost
        case 9: return .certificateNotYetValid    // X509_V_ERR_CERT_NOT_YET_VALID
        case 10: return .certificateExpired       // X509_V_ERR_CERT_HAS_EXPIRED
        default: return .certificateUntrusted
        }
    }

    private func long(_ info: CURLINFO) -> Int {
        var value = 0
        return pa_easy_getinfo_long(easy, info, &value) == CURLE_OK ? value : 0
    }
}
