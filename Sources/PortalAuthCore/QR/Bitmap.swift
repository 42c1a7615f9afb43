/// A black-and-white image as rows of packed bits, the leftmost pixel in the most
/// significant bit, each row padded to whole bytes: with bits set for white, PNG's 1-bit
/// grayscale; with bits set for dark, the module matrix a toolkit paints.
struct Bitmap {
    /// Which pixels have their bit set.
    enum SetBits {
        case white, dark
    }

    let width: Int
    let height: Int
    let rowBytes: Int
    private(set) var bits: [UInt8]

    /// A grid of `columns × rows` cells, each `scale` pixels square, dark where `isDark`.
    init(columns: Int, rows: Int, scale: Int, setting set: SetBits = .white, isDark: (_ row: Int, _ column: Int) -> Bool) {
        width = columns * scale
        height = rows * scale
        rowBytes = (width + 7) / 8
        bits = []
        bits.reserveCapacity(rowBytes * height)
        for row in 0..<rows {
            var line = [UInt8](repeating: 0, count: rowBytes)
            for column in 0..<columns where isDark(row, column) == (set == .dark) {
                for x in column * scale..<(column + 1) * scale {
                    line[x / 8] |= 0x80 >> UInt8(x % 8)
                }
            }
            // A cell row is `scale` identical pixel rows.
            for _ in 0..<scale { bits += line }
        }
    }
}
