import Foundation
import OneTimeCode
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §8: the enrollment link's QR code, as PNG, SVG and terminal text, each
/// read back by a real QR decoder (zbarimg) to exactly the normalised link.
@Suite struct TotpQRTests {
    static let link = "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal"

    /// A link of `count` bytes that carries a secret.
    static func link(ofLength count: Int) -> String {
        let head = "otpauth://totp/x?secret=JBSWY3DP&issuer="
        return head + String(repeating: "p", count: count - head.utf8.count)
    }

    /// Links and the normalised link their code must carry.
    static let links: [(String, String)] = [
        (link, link),
        ("  \(link)\n", link),
        ("otpauth%3A%2F%2Ftotp%2FPortal%3Aada%40example.com%3Fsecret%3DJBSWY3DPEHPK3PXP", "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP"),
        ("OTPAUTH://totp/P%C3%B6rtal?secret=jbswy3dp", "OTPAUTH://totp/P%C3%B6rtal?secret=jbswy3dp"),
        // Bytes beyond ASCII go in byte mode as UTF-8.
        ("otpauth://totp/Pörtal:zoë@example.com?secret=JBSWY3DP", "otpauth://totp/Pörtal:zoë@example.com?secret=JBSWY3DP"),
        // The most a version-40 code holds at level M in byte mode.
        (link(ofLength: 2331), link(ofLength: 2331)),
    ]

    @Test(arguments: links)
    func thePNGReadsBackAsTheNormalisedLink(link: String, normalised: String) throws {
        let png = try TotpQRCode(otpAuthUrl: link).png()
        #expect(try zbarRead(png: png) == normalised)
    }

    @Test(arguments: [1, 3, 10])
    func pixelsAreWholeModulesOfPureBlackOnOpaqueWhiteWithAQuietZone(scale: Int) throws {
        let code = try TotpQRCode(otpAuthUrl: Self.link)
        let modules = code.side - 8
        #expect(modules >= 21 && (modules - 21) % 4 == 0, "a QR code is 21 + 4k modules a side")
        let png = try code.png(scale: Double(scale))
        let image = try #require(DecodedPNG(png))
        #expect(image.fileFormat == 0, "grayscale with no alpha channel: opaque")
        #expect(image.width == (modules + 8) * scale && image.height == image.width)
        #expect(pngChunkNames(png).filter { $0 != "IDAT" } == ["IHDR", "IEND"], "no time or text chunk")

        var dark = Set<[Int]>()
        for y in 0..<image.height {
            for x in 0..<image.width {
                let pixel = Array(image.pixel(x, y))
                #expect(pixel == [0, 0, 0, 255] || pixel == [255, 255, 255, 255], "(\(x), \(y)) is \(pixel)")
                let module = [y / scale, x / scale]
                let isDark = pixel == [0, 0, 0, 255]
                // Every pixel of a module has the module's colour: that of its top-left pixel.
                let first = Array(image.pixel(module[1] * scale, module[0] * scale)) == [0, 0, 0, 255]
                if isDark != first { Issue.record("module \(module) is not one colour"); return }
                if isDark { dark.insert(module) }
            }
        }
        let quietZone = (0..<code.side).flatMap { row in (0..<code.side).map { [row, $0] } }
            .filter { $0.contains { $0 < 4 || $0 >= code.side - 4 } }
        #expect(quietZone.allSatisfy { !dark.contains($0) })
        // The three finder patterns' dark corners sit just inside the quiet zone, each with a
        // white separator 7 modules on.
        #expect(dark.isSuperset(of: [[4, 4], [4, code.side - 5], [code.side - 5, 4]]))
        #expect(dark.isDisjoint(with: [[11, 4], [4, 11], [4, code.side - 12], [code.side - 12, 4]]))
    }

    @Test func theSameLinkGivesTheSameBytes() throws {
        #expect(try TotpQRCode(otpAuthUrl: Self.link).png() == (try TotpQRCode(otpAuthUrl: " \(Self.link) ").png()))
        #expect(try TotpQRCode(otpAuthUrl: Self.link).svg() == (try TotpQRCode(otpAuthUrl: Self.link).svg()))
        #expect(try TotpQRCode(otpAuthUrl: Self.link).png() != (try TotpQRCode(otpAuthUrl: Self.link + "x").png()))
    }

    @Test func theLargestSideIs8192Pixels() throws {
        let code = try TotpQRCode(otpAuthUrl: Self.link)
        let largest = TotpQRCode.maximumSide / code.side
        let image = try #require(DecodedPNG(try code.png(scale: Double(largest))))
        #expect(image.width == code.side * largest && image.width <= 8192)
        let refused = Self.scaleRefused(code)
        #expect(throws: refused) { try code.png(scale: Double(largest + 1)) }
        #expect(throws: refused) { try code.svg(scale: Double(largest + 1)) }
    }

    @Test(arguments: [0, -1, 0.5, 2.5, .nan, .infinity, -.infinity, 1e300, Double(Int32.max)])
    func anUnusableScaleIsTotpQrUnavailableAndGivesTheRange(scale: Double) throws {
        let code = try TotpQRCode(otpAuthUrl: Self.link)
        #expect(throws: Self.scaleRefused(code)) { try code.png(scale: scale) }
        #expect(throws: Self.scaleRefused(code)) { try code.svg(scale: scale) }
        let thrown = #expect(throws: PortalAuthError.self) { try code.png(scale: scale) }
        let message = String(describing: try #require(thrown))
        #expect(message.contains("scale must be a whole number of pixels a module from 1 to \(TotpQRCode.maximumSide / code.side)"))
    }

    /// The error of a scale `code` cannot take: the seed SDK's `totpQrUnavailable`.
    static func scaleRefused(_ code: TotpQRCode) -> PortalAuthError {
        let largest = TotpQRCode.maximumSide / code.side
        return .totpQrUnavailable(
            acceptedScale: "a whole number of pixels a module from 1 to \(largest) for this code (\(code.side) modules a side; an image is 8192 pixels a side at most)")
    }

    @Test(arguments: [
        "", "   ", "https://example.com/?secret=JBSWY3DP", "otpauth://totp/x", "otpauth://totp/x?secret=",
        "otpauth://totp/x?secret=AB1C", "otpauth://totp/x#?secret=JBSWY3DP", "otpauth\u{1A}//totp/x?secret=JBSWY3DP",
        link(ofLength: 2332),
    ])
    func anUnusableLinkIsUnavailable(link: String) {
        #expect(throws: PortalAuthError.totpQrUnavailable()) { try TotpQRCode(otpAuthUrl: link) }
        #expect(throws: PortalAuthError.totpQrUnavailable()) { try portalTotpQrCodePng(otpAuthUrl: link) }
    }

    /// 200,000 characters: each link is unusable or too long, and is refused after linear work.
    @Test(arguments: ["A", "%", "&", "=", "?", " ", "#", "é"])
    func hostileLinksAreUnavailable(character: String) {
        let run = String(repeating: character, count: 200_000)
        for link in ["otpauth://totp/x?secret=" + run + "&y=1", "otpauth://totp/x?" + run + "&secret=JBSWY3DP",
                     "x" + run + "otpauth://x?secret=JBSWY3DP", "otpauth%3A%2F%2Fx%3Fsecret%3DAA%26y%3D" + run + "z"] {
            #expect(throws: PortalAuthError.totpQrUnavailable()) { try TotpQRCode(otpAuthUrl: link) }
        }
    }

    @Test func whitespaceAroundALinkIsTrimmedHoweverLong() throws {
        let padding = String(repeating: " \n\t", count: 100_000)
        #expect(try zbarRead(png: TotpQRCode(otpAuthUrl: padding + Self.link + padding).png()) == Self.link)
    }

    @Test func theStepsHelpersDrawItsLink() throws {
        let step = TotpRequiredResult(userJwt: "j", totpLink: Self.link, endUserId: "e")
        let png = try TotpQRCode(otpAuthUrl: Self.link).png(scale: 4)
        #expect(try step.qrCodePng(scale: 4) == png)
        #expect(try step.qrCode().png(scale: 4) == png)
        #expect(try portalTotpQrCodePng(otpAuthUrl: Self.link, scale: 4) == png)
        #expect(try portalTotpQrCodePng(otpAuthUrl: Self.link) == (try step.qrCodePng()))
        let enrolled = TotpRequiredResult(userJwt: "j", totpLink: nil, endUserId: "e")
        #expect(throws: PortalAuthError.totpQrUnavailable()) { try enrolled.qrCodePng() }
    }

    /// First enrollment against the emulator: the authenticator scans the step's QR code,
    /// computes a code from the link it read, and the code completes the sign-in.
    @Test func anAuthenticatorThatScansTheStepsCodeCompletesTheSignIn() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        let scanned = try zbarRead(png: step.qrCodePng())
        #expect(scanned == step.totpLink.flatMap(TotpLink.normalised))
        let secret = try #require(portalTotpSecret(otpAuthUrl: scanned))
        #expect(secret == step.totpSecret)
        let code = try #require(OneTimeCode.now(secret: secret))
        #expect(try await client.verifyTotp(code, userJwt: step.userJwt).session.endUserId == step.endUserId)
    }

    @Test func neitherTheErrorNorTheCodesDescriptionsCarryTheLink() throws {
        let link = "otpauth://totp/Portal:ada@example.com?secret=SECRETSECRETSECR"
        let code = try TotpQRCode(otpAuthUrl: link)
        var dumped = ""
        dump(code, to: &dumped)
        for text in [String(describing: code), String(reflecting: code), dumped,
                     String(describing: PortalAuthError.totpQrUnavailable())] {
            #expect(!text.contains("SECRET") && !text.contains("otpauth"), "\(text)")
        }
        #expect(dumped.contains("side"))
    }

    @Test(arguments: links)
    func theSVGRendersAndReadsBackAsTheNormalisedLink(link: String, normalised: String) throws {
        let code = try TotpQRCode(otpAuthUrl: link)
        let svg = try code.svg(scale: 4)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(code.side * 4)\" height=\"\(code.side * 4)\" viewBox=\"0 0 \(code.side) \(code.side)\""))
        // librsvg (Debian's rsvg-convert) draws it; zbarimg reads the drawing.
        let drawn = try withTemporaryFile(Array(svg.utf8), suffix: ".svg") { file in
            let png = file.deletingPathExtension().appendingPathExtension("png")
            defer { try? FileManager.default.removeItem(at: png) }
            _ = try Subprocess.run("/usr/bin/rsvg-convert", ["--background-color", "white", "-o", png.path, file.path])
            return try Data(contentsOf: png)
        }
        let image = try #require(DecodedPNG(Array(drawn)))
        #expect(image.width == code.side * 4)
        #expect(try zbarRead(png: Array(drawn)) == normalised)
    }

    @Test(arguments: links.prefix(3))
    func theTerminalTextReadsBackAsTheNormalisedLinkInEitherColours(link: String, normalised: String) throws {
        let code = try TotpQRCode(otpAuthUrl: link)
        for colors in [TerminalColors.lightOnDark, .darkOnLight] {
            let text = code.terminalText(colors: colors)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.last == "" && lines.count - 1 == (code.side + 1) / 2)
            #expect(lines.dropLast().allSatisfy { $0.count == code.side && $0.allSatisfy { " ▀▄█".contains($0) } })
            #expect(try zbarRead(png: pngOfGrid(terminalScreen(text, colors: colors))) == normalised)
        }
    }

    @Test func theTerminalTextDrawsTheQuietZoneForALightOnDarkTerminal() throws {
        let text = try TotpQRCode(otpAuthUrl: Self.link).terminalText()
        let lines = text.split(separator: "\n")
        // Two lines of blocks above, and two block columns on either side of every line.
        #expect(lines.prefix(2).allSatisfy { $0.allSatisfy { $0 == "█" } })
        #expect(lines.allSatisfy { $0.hasPrefix("████") && $0.hasSuffix("████") || $0.allSatisfy { $0 == "▀" } })
    }

    /// A terminal showing `text`: each character cell is two rows of one pixel column, lit in
    /// the text's colour where a half block covers it, with the terminal's background around
    /// the text. True is dark.
    private func terminalScreen(_ text: String, colors: TerminalColors, margin: Int = 3) -> [[Bool]] {
        let textIsDark = colors == .darkOnLight
        let lines = text.split(separator: "\n").map(Array.init)
        let width = (lines.map(\.count).max() ?? 0) + 2 * margin
        let background = [Bool](repeating: !textIsDark, count: width)
        var screen = [[Bool]](repeating: background, count: 2 * margin)
        for line in lines {
            var top = background
            var bottom = background
            for (index, character) in line.enumerated() {
                if "▀█".contains(character) { top[margin + index] = textIsDark }
                if "▄█".contains(character) { bottom[margin + index] = textIsDark }
            }
            screen += [top, bottom]
        }
        return screen + [[Bool]](repeating: background, count: 2 * margin)
    }
}
