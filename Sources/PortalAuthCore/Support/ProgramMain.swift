#if canImport(Glibc)
import Glibc
#endif

/// The library run as a program (`Sources/CProgramEntry/entry.c`): only ever as the keyring's
/// helper.
@c(pa_program_main)
func programMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard argc == 2, let argument = argv?[1], String(cString: argument) == KeyringHelper.argument else {
        let text = "This is libportalauth, a library; it runs as a program only as its own keyring helper.\n"
        _ = text.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
        return 2
    }
    KeyringHelper.serve(0)
    return 0
}
