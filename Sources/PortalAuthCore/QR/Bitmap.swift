/// A black-and-white image laid out as PNG's 1-bit grayscale: rows of packed bits, the
/// leftmost pixel in the most significant bit, 1 for white.
struct Bitmap {
    let width: Int
    let height: Int
    let rowBytes: Int
    private(set) var bits: [UInt8]

    /// A grid of `columns × rows` cells, each `scale` pixels square, dark where `isDark`.
    init(columns: Int, rows: Int, scale: Int, isDark: (_ row: Int, _ column: Int) -> Bool) {
        width = columns * scale
        height = rows * scale
        rowBytes = (width + 7) / 8
        bits = []
        bits.reserveCapacity(rowBytes * height)
        for row in 0..<rows {
            var line = [UInt8](repeating: 0, count: rowBytes)
            for column in 0..<columns where !isDark(row, column) {
                for x in column * scale..<(column + 1) * scale {
                    line[x / 8] |= 0x80 >> UInt8(x % 8)
                }
            }
            // A cell row is `scale` identical pixel rows.
            for _ in 0..<scale { bits += line }
        }
    }
}
