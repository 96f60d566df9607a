import SettingsPlist
import Synchronization

/// A type with a built-in way to be stored in settings: what `@Setting`, `@ReadOnlySetting`,
/// `@Archived`, ``SettingsStore/Key`` and ``SettingsStore/value(_:default:)`` accept.
///
/// Enums with raw values and `Codable` types conform with no code, as in Defaults: the
/// transformer comes from a protocol extension.
///
/// ```swift
/// enum Theme: String, SettingsValue { case light, dark }            // stored as "light" / "dark"
/// struct Profile: Codable, Sendable, SettingsValue { var name = "" } // stored as a <dict>
/// ```
///
/// Any other type says how it is stored:
///
/// ```swift
/// extension Point: SettingsValue {
///     static var settingsTransformer: SettingsTransformer<Point> {
///         SettingsTransformer(typeName: "Point",
///             encode: { ["x": .real($0.x), "y": .real($0.y)] },
///             decode: { v in
///                 guard let x = v["x"]?.doubleValue, let y = v["y"]?.doubleValue else { return nil }
///                 return Point(x: x, y: y)
///             })
///     }
/// }
/// ```
public protocol SettingsValue {
    /// How values of this type are stored.
    static var settingsTransformer: SettingsTransformer<Self> { get }
}
