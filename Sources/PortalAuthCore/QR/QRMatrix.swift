import CQREncode

/// The modules of a QR code with its white quiet zone around them (docs/protocol.md §8): the
/// grid every rendering draws, one cell a module.
struct QRMatrix: Sendable {
    /// Modules of white on each side.
    static let quietZone = 4

    /// Cells a side, the quiet zone included.
    let side: Int
    /// Row-major, `side × side`.
    private let dark: [Bool]

    /// `payload` in byte mode at error-correction level M, in the smallest version that holds
    /// it; `nil` when none does (over 2,331 bytes). libqrencode rejects such a payload after
    /// one pass over it. Throws when libqrencode cannot be loaded.
    init?(byteMode payload: [UInt8]) throws(SystemLibraryUnavailable) {
        try SystemLibraryUnavailable.check(pa_qrencode_load_error())
        guard let count = Int32(exactly: payload.count),
              let code = payload.withUnsafeBufferPointer({ QRcode_encodeData(count, $0.baseAddress, 0, QR_ECLEVEL_M) })
        else { return nil }
        defer { QRcode_free(code) }
        let modules = Int(code.pointee.width)
        let side = modules + 2 * Self.quietZone
        var dark = [Bool](repeating: false, count: side * side)
        // Bit 0 of each of libqrencode's bytes is the module's colour; the others describe it.
        for row in 0..<modules {
            for column in 0..<modules where code.pointee.data[row * modules + column] & 1 == 1 {
                dark[(row + Self.quietZone) * side + column + Self.quietZone] = true
            }
        }
        self.side = side
        self.dark = dark
    }

    /// Whether the cell is a dark module; every cell outside the grid is white.
    func isDark(row: Int, column: Int) -> Bool {
        guard (0..<side).contains(row), (0..<side).contains(column) else { return false }
        return dark[row * side + column]
    }
}
