import CCurl

/// The checked setting of libcurl's options: an option the loaded libcurl does not honour
/// fails the request, never lets it go out without it.
enum CurlOptions {
    /// Throws unless `code`, what `curl_easy_setopt` of `option` returned, is CURLE_OK: a
    /// message that names the libcurl version, the option and what it is for.
    static func set(_ code: CURLcode, _ option: String, _ purpose: String) throws(PortalRequestsError) {
        guard code != CURLE_OK else { return }
        throw .network(.connection, message: "The loaded libcurl \(version) cannot \(purpose) (\(option): "
                       + "\(String(cString: curl_easy_strerror(code)))); the request was not sent.")
    }

    /// The loaded libcurl's version, e.g. `7.88.1`.
    static var version: String {
        pa_curl_version().map { String(cString: $0) } ?? "(unknown version)"
    }
}
