import CPNG
#if canImport(Glibc)
import Glibc
#endif

/// PNG files through libpng, written in memory.
enum PNGEncoding {
    /// The bitmap as a 1-bit grayscale PNG (opaque, pure black and white); the same bitmap
    /// always gives the same bytes. `nil` when libpng fails (out of memory); throws when
    /// libpng cannot be loaded.
    static func encode(_ bitmap: Bitmap) throws(SystemLibraryUnavailable) -> [UInt8]? {
        try SystemLibraryUnavailable.check(pa_png_load_error())
        guard let width = UInt32(exactly: bitmap.width), let height = UInt32(exactly: bitmap.height) else { return nil }
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = bitmap.bits.withUnsafeBufferPointer {
            pa_png_write_gray1(width, height, $0.baseAddress, bitmap.rowBytes, &bytes, &length)
        }
        guard status == 0, let bytes else { return nil }
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }
}
