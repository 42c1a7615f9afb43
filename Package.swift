// swift-tools-version:6.0
import PackageDescription

// libsecret's and GLib's headers are outside the default include path (curl, qrencode and
// png's are not). Named here, as `pkg-config --cflags libsecret-1` gives them on Debian,
// because `pkgConfig:` would also link libsecret and GLib into libportalauth.so. Every Swift
// target that loads the core's modules needs them.
#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#else
let multiarch = "x86_64-linux-gnu"
#endif
let secretIncludes = ["/usr/include/libsecret-1", "/usr/include/glib-2.0", "/usr/lib/\(multiarch)/glib-2.0/include"]
let secretHeaders: [SwiftSetting] = [.unsafeFlags(secretIncludes.flatMap { ["-Xcc", "-I\($0)"] })]
// The C targets that include them, in DWARF 4 (clang's default is 5): Debian 12's valgrind
// cannot read the library's debug information otherwise.
let secretCTarget: [CSetting] = [.unsafeFlags(["-gdwarf-4"] + secretIncludes.map { "-I\($0)" })]

let package = Package(
    name: "portal-auth",
    products: [
        .library(name: "PortalAuthCore", targets: ["PortalAuthCore"]),
        .executable(name: "portal-auth-demo", targets: ["PortalAuthDemo"]),
        // libportalauth.so, the C ABI; scripts/build-library.sh builds it self-contained.
        .library(name: "portalauth", type: .dynamic, targets: ["PortalAuthC"]),
    ],
    targets: [
        // System C libraries: headers and types only. libportalauth.so does not link libcurl,
        // libsecret, libqrencode or libpng; CLibraryLoader opens each on first use.
        .systemLibrary(name: "CCurl"),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSecret"),
        .systemLibrary(name: "CQREncode"),
        .systemLibrary(name: "CPNG"),
        // The functions of those libraries the core calls, each forwarding to the library
        // opened (dlopen) the first time a feature needs it.
        .target(name: "CLibraryLoader", cSettings: secretCTarget),
        // What the core asks of the desktop over those libraries (GIO, libsecret): the Secret
        // Service, the Secret and OpenURI portals, the application's bus name, the proxy.
        .target(name: "CDesktop", dependencies: ["CLibraryLoader"], cSettings: secretCTarget),
        // The C ABI's hand-written header (include/portal_auth.h): its types, for Swift to use.
        .systemLibrary(name: "CPortalAuth"),
        // Linux calls the Glibc module leaves out (eventfd, accept4).
        .systemLibrary(name: "CPosix"),
        // The process through fork(): the generation count, the lock of per-process state, the
        // completion queue's descriptors renewed in a child. DWARF 4, for valgrind (secretCTarget).
        .target(name: "CProcess", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // What keeps the library's glibc floor (random bytes without arc4random_buf, hypotf).
        .target(name: "CGlibcFloor", cSettings: [.unsafeFlags(["-gdwarf-4"])]),

        // The Client Auth client: wire protocol, transport, flows, storage, browser sign-in, QR codes.
        .target(name: "PortalAuthCore", dependencies: ["CCurl", "CSecret", "CQREncode", "CPNG", "CPortalAuth", "CPosix", "CProcess", "CLibraryLoader",
                                                         "CDesktop", "CGlibcFloor"],
                swiftSettings: secretHeaders),

        // The library as a program (its keyring helper): its PT_INTERP and entry point, linked
        // into the library alone. DWARF 4, for valgrind.
        .target(name: "CProgramEntry", cSettings: [.unsafeFlags(["-gdwarf-4"])]),

        // The C ABI: @c exports over the core, declared by include/portal_auth.h; the library's
        // entry point as a program is CProgramEntry's.
        .target(name: "PortalAuthC", dependencies: ["PortalAuthCore", "CProgramEntry"], exclude: ["exports.map"],
                swiftSettings: secretHeaders,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-e", "-Xlinker", "pa_program_start"])]),

        // RFC 6238 codes, for the demo and the tests (an authenticator app's side).
        .target(name: "OneTimeCode", dependencies: ["CCrypto"]),

        .executableTarget(name: "PortalAuthDemo", dependencies: ["PortalAuthCore", "OneTimeCode"], swiftSettings: secretHeaders),

        // Reads PNGs back with libpng's own API, so links libpng itself.
        .testTarget(name: "PortalAuthCoreTests", dependencies: ["PortalAuthCore", "OneTimeCode", "CPNG"],
                    swiftSettings: secretHeaders, linkerSettings: [.linkedLibrary("png16")]),
    ]
)
