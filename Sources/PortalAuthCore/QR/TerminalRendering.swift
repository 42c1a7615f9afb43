/// Which of a terminal's two colours is the text's: the block characters of a terminal QR
/// code are drawn in it, and the background shows through the spaces.
public enum TerminalColors: Sendable {
    /// Light text on a dark background, as most terminals are: the blocks draw the white
    /// modules and the quiet zone.
    case lightOnDark
    /// Dark text on a light background: the blocks draw the dark modules.
    case darkOnLight
}

/// A QR matrix as text for a terminal: one column a module and two module rows a line,
/// with the half blocks `▀ ▄ █` and spaces, so that modules come out about square in a
/// terminal's tall cells and a phone camera reads them from the screen.
enum TerminalRendering {
    static func render(_ matrix: QRMatrix, colors: TerminalColors) -> String {
        // Whether a cell is drawn in the text's colour. Below an odd last row is the
        // terminal's background, never text.
        func isText(_ row: Int, _ column: Int) -> Bool {
            guard row < matrix.side else { return false }
            switch colors {
            case .lightOnDark: return !matrix.isDark(row: row, column: column)
            case .darkOnLight: return matrix.isDark(row: row, column: column)
            }
        }
        var text = ""
        for row in stride(from: 0, to: matrix.side, by: 2) {
            for column in 0..<matrix.side {
                switch (isText(row, column), isText(row + 1, column)) {
                case (true, true): text += "\u{2588}"    // █
                case (true, false): text += "\u{2580}"   // ▀
                case (false, true): text += "\u{2584}"   // ▄
                case (false, false): text += " "
                }
            }
            text += "\n"
        }
        return text
    }
}
