#if canImport(Glibc)
import Glibc
#endif

/// The certificate authorities a client's requests trust (docs/network.md "Certificate
/// authorities"), read once when the client is made. The application's `caFile` comes first;
/// else `CURL_CA_BUNDLE`; else `SSL_CERT_FILE` and `SSL_CERT_DIR`, both honoured, as OpenSSL
/// reads them. A file named replaces the system's bundle, a folder the system's folder; what
/// is not named stays the system's (libcurl's defaults).
package struct TrustStore: Sendable, Equatable {
    /// A PEM file of certificates (CURLOPT_CAINFO), or nil for the system's.
    package let file: String?
    /// A folder of certificates under their hashed names (CURLOPT_CAPATH), or nil for the
    /// system's.
    package let folder: String?

    /// libcurl's defaults: the system's bundle and folder.
    package static let system = TrustStore(file: nil, folder: nil)

    private init(file: String?, folder: String?) {
        self.file = file
        self.folder = folder
    }

    /// The trust of a client: `caFile`, the application's choice, else the environment's.
    /// - Throws: `PortalAuthError.invalidArgument(name: "caFile")` when `caFile` is blank or
    ///   is not a readable file.
    package init(caFile: String?, environment: (String) -> String? = TrustStore.processEnvironment) throws(PortalAuthError) {
        if let caFile {
            guard !caFile.isBlank, Self.isReadableFile(caFile) else {
                throw .invalidArgument(name: "caFile", accepted: "a readable file of PEM certificates")
            }
            file = caFile
            folder = nil
        } else if let bundle = environment("CURL_CA_BUNDLE") {
            file = bundle
            folder = nil
        } else {
            file = environment("SSL_CERT_FILE")
            folder = environment("SSL_CERT_DIR")
        }
    }

    /// A variable's value; unset and empty are the same (curl's tool reads them so).
    package static func processEnvironment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func isReadableFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) == 0
    }
}
