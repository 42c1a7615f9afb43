/// The QR code of a TOTP enrollment link, for an authenticator app to scan
/// (docs/protocol.md §8): the normalised link in byte mode at error-correction level M, with a
/// 4-module white quiet zone, as PNG bytes, SVG text or terminal text. The same link always
/// gives the same output. It embeds the TOTP secret: never log or persist it; its
/// descriptions show only its size.
public struct TotpQRCode: Sendable {
    /// The largest side of an image, in pixels.
    public static let maximumSide = 8192

    let matrix: QRMatrix

    /// Throws `PortalAuthError.totpQrUnavailable` when the link is not an `otpauth://` link,
    /// carries no valid secret, or is too long for a QR code; `SystemLibraryUnavailable`
    /// when libqrencode cannot be loaded.
    public init(otpAuthUrl: String) throws {
        guard let link = TotpLink.normalised(otpAuthUrl), TotpLink.secret(ofNormalised: link) != nil,
              let matrix = try QRMatrix(byteMode: Array(link.utf8))
        else { throw PortalAuthError.totpQrUnavailable() }
        self.matrix = matrix
    }

    /// Modules a side, the quiet zone included: an image is `side × scale` pixels square.
    public var side: Int { matrix.side }

    /// A PNG of `scale` pixels a module, `side × scale` pixels square: pure black on opaque
    /// white (1-bit grayscale). Throws `PortalAuthError.totpQrUnavailable(acceptedScale:)`, its
    /// message giving the range, unless `scale` is a whole number from 1 with a side of at
    /// most `maximumSide` pixels; `SystemLibraryUnavailable` when libpng cannot be loaded.
    public func png(scale: Double = 10) throws -> [UInt8] {
        let bitmap = Bitmap(columns: side, rows: side, scale: try pixelsPerModule(scale)) {
            matrix.isDark(row: $0, column: $1)
        }
        guard let png = try PNGEncoding.encode(bitmap) else { throw PortalAuthError.totpQrUnavailable() }
        return png
    }

    /// The modules themselves, for a toolkit that paints the code at any scale: `side` rows
    /// of `(side + 7) / 8` bytes, top row first, the leftmost module of a row in the most
    /// significant bit of its first byte, a bit set for a dark module; the quiet zone
    /// included, and the bits that pad a row to whole bytes clear.
    public func moduleBits() -> [UInt8] {
        Bitmap(columns: side, rows: side, scale: 1, setting: .dark) { matrix.isDark(row: $0, column: $1) }.bits
    }

    /// SVG text whose view box has one unit a module, for web views and toolkits that scale
    /// it; its nominal size is `scale` pixels a module, with the rules of `png(scale:)`.
    public func svg(scale: Double = 10) throws -> String {
        SVGRendering.render(matrix, scale: try pixelsPerModule(scale))
    }

    /// Lines of text for a terminal (half blocks and spaces, quiet zone included, each line
    /// ending in a newline), drawn for a terminal whose text and background are `colors`.
    public func terminalText(colors: TerminalColors = .lightOnDark) -> String {
        TerminalRendering.render(matrix, colors: colors)
    }

    /// A whole number of pixels a module: an image cannot split a pixel between modules.
    /// - Throws: `totpQrUnavailable(acceptedScale:)`, with the range this code takes, as the
    ///   seed SDK's `qrCodeImage(scale:)` throws `totpQrUnavailable`.
    private func pixelsPerModule(_ scale: Double) throws -> Int {
        let largest = Self.maximumSide / side
        guard scale.isFinite, scale >= 1, scale.rounded(.towardZero) == scale, scale <= Double(largest) else {
            throw PortalAuthError.totpQrUnavailable(
                acceptedScale: "a whole number of pixels a module from 1 to \(largest) for this code (\(side) modules a side; an image is \(Self.maximumSide) pixels a side at most)")
        }
        return Int(scale)
    }
}

extension TotpQRCode: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "TotpQRCode(side: \(side) modules)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["side": side]) }
}

extension TotpRequiredResult {
    /// The QR code of `totpLink`. Throws `PortalAuthError.totpQrUnavailable` when there is
    /// no link or it is unusable (see `TotpQRCode.init(otpAuthUrl:)`).
    public func qrCode() throws -> TotpQRCode {
        guard let totpLink else { throw PortalAuthError.totpQrUnavailable() }
        return try TotpQRCode(otpAuthUrl: totpLink)
    }

    /// The QR code of `totpLink` as PNG bytes (`TotpQRCode.png(scale:)`).
    public func qrCodePng(scale: Double = 10) throws -> [UInt8] {
        try qrCode().png(scale: scale)
    }
}

/// The QR code of an enrollment link kept elsewhere, as PNG bytes (`TotpQRCode.png(scale:)`).
public func portalTotpQrCodePng(otpAuthUrl: String, scale: Double = 10) throws -> [UInt8] {
    try TotpQRCode(otpAuthUrl: otpAuthUrl).png(scale: scale)
}
