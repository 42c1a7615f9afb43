// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "portal-auth",
    products: [
        .library(name: "PortalAuthCore", targets: ["PortalAuthCore"]),
        .executable(name: "portal-auth-demo", targets: ["PortalAuthDemo"]),
        // libportalauth.so, the C ABI; scripts/build-library.sh builds it self-contained.
        .library(name: "portalauth", type: .dynamic, targets: ["PortalAuthC"]),
    ],
    targets: [
        // System C libraries, found through pkg-config (Debian's -dev packages).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // The C ABI's hand-written types (include/portal_auth_types.h), for Swift to use.
        .systemLibrary(name: "CPortalAuth"),
        // Linux calls the Glibc module leaves out (eventfd, accept4).
        .systemLibrary(name: "CPosix"),

        // The Client Auth client: wire protocol, transport, flows, storage, browser sign-in, QR codes.
        .target(name: "PortalAuthCore", dependencies: ["CCurl", "CSecret", "CQREncode", "CPNG", "CPortalAuth", "CPosix"]),

        // The C ABI: @c exports over the core, declared by include/portal_auth.h.
        .target(name: "PortalAuthC", dependencies: ["PortalAuthCore"], exclude: ["exports.map"]),

        // RFC 6238 codes, for the demo and the tests (an authenticator app's side).
        .target(name: "OneTimeCode", dependencies: ["CCrypto"]),

        .executableTarget(name: "PortalAuthDemo", dependencies: ["PortalAuthCore", "OneTimeCode"]),

        // Shows ThreadSanitizer what Synchronization.Mutex does when contended (inert otherwise).
        .target(name: "SanitizerSupport", path: "Tests/SanitizerSupport"),

        .testTarget(name: "PortalAuthCoreTests", dependencies: ["PortalAuthCore", "OneTimeCode", "CPNG", "SanitizerSupport"]),
    ]
)
