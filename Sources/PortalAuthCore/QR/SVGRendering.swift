/// A QR matrix as SVG text: one unit a module in the view box (so toolkits and web views
/// scale it without blur), `scale` pixels a module as its nominal size. Dark modules are
/// one path of horizontal runs over a white square that covers the quiet zone.
enum SVGRendering {
    static func render(_ matrix: QRMatrix, scale: Int) -> String {
        let side = matrix.side
        var path = ""
        for row in 0..<side {
            var column = 0
            while column < side {
                guard matrix.isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < side && matrix.isDark(row: row, column: column) { column += 1 }
                path += "M\(start) \(row)h\(column - start)v1h-\(column - start)z"
            }
        }
        let pixels = side * scale
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#ffffff"/>\
            <path fill="#000000" d="\(path)"/></svg>

            """
    }
}
