import SettingsPlist

/// A color for settings: red, green, blue and alpha from 0 to 1, with no platform color type
/// behind it, stored as the hex text people write (`#FF8800`, or `#FF880080` when translucent).
///
/// ```swift
/// @Setting("accent", default: SettingsColor(hex: "#FF8800") ?? .black) var accent: SettingsColor
/// accent = SettingsColor(red: 0.2, green: 0.4, blue: 1)
/// accent.hex     // "#3366FF"
/// ```
///
/// The stored form keeps 8 bits per component, so a color made from hex text reads back equal;
/// other components read back rounded to the nearest 1/255. Reading also accepts a dictionary
/// `{red, green, blue, alpha}` of numbers from 0 to 1 (`alpha` optional), the form some tools
/// write. `Codable` uses the hex text too.
public struct SettingsColor: Hashable, Sendable, CustomStringConvertible {
    /// Red, 0...1.
    public let red: Double
    /// Green, 0...1.
    public let green: Double
    /// Blue, 0...1.
    public let blue: Double
    /// Opacity, 0 (transparent) ... 1 (opaque).
    public let alpha: Double

    /// Opaque black.
    public static let black = SettingsColor(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = SettingsColor(red: 1, green: 1, blue: 1)
    /// Fully transparent black.
    public static let clear = SettingsColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// Creates a color from components, each clamped to 0...1 (NaN counts as 0).
    ///
    /// ```swift
    /// let orange = SettingsColor(red: 1, green: 0.53, blue: 0)
    /// ```
    ///
    /// - Parameters:
    ///   - red: red, 0...1.
    ///   - green: green, 0...1.
    ///   - blue: blue, 0...1.
    ///   - alpha: opacity, 0...1 (default: opaque).
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = Self.clamped(red)
        self.green = Self.clamped(green)
        self.blue = Self.clamped(blue)
        self.alpha = Self.clamped(alpha)
    }

    /// Parses hex text: `#RGB`, `#RGBA`, `#RRGGBB` or `#RRGGBBAA`, in either case, with or
    /// without the `#`. Returns `nil` for anything else (no surrounding spaces either).
    ///
    /// ```swift
    /// SettingsColor(hex: "#f80")       // same as "#FF8800"
    /// SettingsColor(hex: "FF880080")   // half-transparent orange
    /// SettingsColor(hex: "orange")     // nil
    /// ```
    ///
    /// - Parameter hex: the text.
    public init?(hex: String) {
        var digits: [UInt8] = []
        digits.reserveCapacity(8)
        for (offset, byte) in hex.utf8.enumerated() {
            if offset == 0 && byte == UInt8(ascii: "#") { continue }
            guard digits.count < 8, let digit = Self.hexDigit(byte) else { return nil }
            digits.append(digit)
        }
        let bytes: [UInt8]
        switch digits.count {
        case 3, 4: bytes = digits.map { $0 &* 17 }  // #F80 means #FF8800
        case 6, 8: bytes = stride(from: 0, to: digits.count, by: 2).map { digits[$0] &<< 4 | digits[$0 + 1] }
        default: return nil
        }
        self.init(red: Double(bytes[0]) / 255, green: Double(bytes[1]) / 255, blue: Double(bytes[2]) / 255,
                  alpha: bytes.count == 4 ? Double(bytes[3]) / 255 : 1)
    }

    /// `#RRGGBB` in uppercase, or `#RRGGBBAA` when the color is not opaque at 8 bits.
    public var hex: String {
        let alphaByte = Self.byte(alpha)
        var components = [Self.byte(red), Self.byte(green), Self.byte(blue)]
        if alphaByte != 255 { components.append(alphaByte) }
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = [UInt8(ascii: "#")]
        for component in components {
            text.append(digits[Int(component >> 4)])
            text.append(digits[Int(component & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The ``hex`` text.
    public var description: String { hex }

    /// A color from `{red, green, blue, alpha}` numbers from 0 to 1, `nil` when one is missing
    /// or out of range.
    init?(components: PlistValue) {
        guard let red = Self.unit(components["red"]), let green = Self.unit(components["green"]),
              let blue = Self.unit(components["blue"]) else { return nil }
        let alpha: Double
        if let stored = components["alpha"] {
            guard let value = Self.unit(stored) else { return nil }
            alpha = value
        } else {
            alpha = 1
        }
        self.init(red: red, green: green, blue: blue, alpha: alpha)
    }

    private static func clamped(_ component: Double) -> Double {
        component.isNaN ? 0 : min(max(component, 0), 1)
    }

    /// The component at 8 bits, rounded to nearest.
    private static func byte(_ component: Double) -> UInt8 {
        UInt8((component * 255).rounded())  // in 0...255: components are clamped
    }

    private static func unit(_ value: PlistValue?) -> Double? {
        guard let number = value?.doubleValue, number >= 0, number <= 1 else { return nil }
        return number
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension SettingsColor: Codable {
    private enum ComponentKey: String, CodingKey {
        case red, green, blue, alpha
    }

    /// Decodes the hex text (or a `{red, green, blue, alpha}` dictionary).
    ///
    /// - Parameter decoder: the decoder.
    /// - Throws: `DecodingError.dataCorrupted` for text that is not a color or components out of 0...1.
    public init(from decoder: any Decoder) throws {
        if let components = try? decoder.container(keyedBy: ComponentKey.self) {
            let values = try [ComponentKey.red, .green, .blue].map { try components.decode(Double.self, forKey: $0) }
            let alpha = try components.decodeIfPresent(Double.self, forKey: .alpha) ?? 1
            guard (values + [alpha]).allSatisfy({ $0 >= 0 && $0 <= 1 }) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "color components must be from 0 to 1"))
            }
            self.init(red: values[0], green: values[1], blue: values[2], alpha: alpha)
            return
        }
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let color = SettingsColor(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(String(reflecting: text)) is not a hex color")
        }
        self = color
    }

    /// Encodes the ``hex`` text.
    ///
    /// - Parameter encoder: the encoder.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

extension SettingsColor: SettingsValue {
    /// Stored as `<string>#RRGGBB</string>` (`#RRGGBBAA` when translucent); reads any form
    /// ``init(hex:)`` accepts, or a `{red, green, blue, alpha}` dictionary.
    public static var settingsTransformer: SettingsTransformer<SettingsColor> {
        SettingsTransformer(
            typeName: "SettingsColor",
            encode: { .string($0.hex) },
            decode: { plist in
                switch plist {
                case .string(let text):
                    guard let color = SettingsColor(hex: text) else {
                        throw TransformFailure("\(String(reflecting: text)) is not a color (#RGB, #RGBA, #RRGGBB or #RRGGBBAA)")
                    }
                    return color
                case .dictionary:
                    guard let color = SettingsColor(components: plist) else {
                        throw TransformFailure("a color dict needs red, green and blue (and optionally alpha) from 0 to 1")
                    }
                    return color
                default:
                    return nil
                }
            }
        )
    }
}
