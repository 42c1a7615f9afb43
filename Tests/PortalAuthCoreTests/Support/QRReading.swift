import CPNG
import Foundation
import Testing
@testable import PortalAuthCore

/// A PNG read back with libpng's simplified API (which catches its own errors), as RGBA.
struct DecodedPNG {
    let width: Int
    let height: Int
    /// The file's own format: PNG_FORMAT_FLAG_* bits (0 for grayscale without alpha).
    let fileFormat: UInt32
    let rgba: [UInt8]

    init?(_ bytes: [UInt8]) {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard bytes.withUnsafeBytes({ png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }) != 0 else {
            return nil
        }
        fileFormat = image.format
        image.format = PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA
        var rgba = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 4)
        guard png_image_finish_read(&image, nil, &rgba, 0, nil) != 0 else {
            png_image_free(&image)
            return nil
        }
        width = Int(image.width)
        height = Int(image.height)
        self.rgba = rgba
    }

    /// The pixel at (x, y) as [r, g, b, a].
    func pixel(_ x: Int, _ y: Int) -> ArraySlice<UInt8> {
        rgba[(y * width + x) * 4..<(y * width + x) * 4 + 4]
    }
}

/// The names of a PNG file's chunks, in order.
func pngChunkNames(_ bytes: [UInt8]) -> [String] {
    var names: [String] = []
    var offset = 8
    while offset + 8 <= bytes.count {
        let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        names.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
        offset += 12 + length
    }
    return names
}

/// What zbarimg (Debian's zbar-tools) reads from an image file: the QR code's bytes, as
/// UTF-8. Throws when it finds no code.
func zbarRead(_ file: URL) throws -> String {
    // -Sbinary: the payload's bytes as they are, with no guess at a character set.
    try Subprocess.run("/usr/bin/zbarimg", ["--raw", "-q", "-Sbinary", file.path])
}

/// What zbarimg reads from PNG bytes.
func zbarRead(png: [UInt8]) throws -> String {
    try withTemporaryFile(png, suffix: ".png", zbarRead)
}

func withTemporaryFile<T>(_ contents: [UInt8], suffix: String, _ body: (URL) throws -> T) throws -> T {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("portal-auth-\(UUID().uuidString)\(suffix)")
    try Data(contents).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    return try body(file)
}

/// A grid of cells as a PNG of `scale` pixels a cell, through the library's own encoder.
func pngOfGrid(_ grid: [[Bool]], scale: Int = 8) throws -> [UInt8] {
    let columns = grid.map(\.count).max() ?? 0
    let bitmap = Bitmap(columns: columns, rows: grid.count, scale: scale) { row, column in
        column < grid[row].count && grid[row][column]
    }
    return try #require(try PNGEncoding.encode(bitmap))
}
