#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// What one setting can tell a schema about itself, in stored (plist) form: its type, the
/// default it reads as when no layer has it, the range its `clamp` rules let through and, for
/// an enum, the values it can take. Asked only by ``SettingsSchema``, never on a read or a write.
@usableFromInline
struct SettingFacts: Sendable {
    /// The Swift type (`Double`, `Theme`).
    var typeName = ""
    /// The default, stored form; `nil` when the setting reads as `nil` with no layer.
    var defaultValue: PlistValue?
    /// The stored form of the lowest and highest values the clamp rules let through.
    var minimum: PlistValue?
    var maximum: PlistValue?
    /// The stored form of every case, for a `CaseIterable` type.
    var allowedValues: [PlistValue]?
    /// A stored value of the type when there is no default (the first case, say), so the
    /// schema can still name its JSON type.
    var sample: PlistValue?
    /// The JSON type the Swift type is stored as when no value shows it (`integer` for `Int`).
    var declaredJSONType: String?
    /// The setting's human title and help (`title:` and `help:`), if given.
    var title: String?
    var help: String?

    @usableFromInline init() {}

    /// The facts of a setting whose store holds `Stored` values converted by `transformer`.
    ///
    /// - Parameters:
    ///   - transformer: the transformer the setting uses now.
    ///   - builtIn: whether it is the type's own (so the Swift type says how values are stored).
    ///   - rules: the setting's rules (`whenNil` gives a default, `clamp` a range).
    ///   - defaultInCode: the default of a non-optional setting, asked only when it has one.
    @usableFromInline
    static func of<Stored>(
        transformer: SettingsTransformer<Stored>, builtIn: Bool, rules: SettingRules<Stored>,
        defaultInCode: (() -> Stored?)?
    ) -> SettingFacts {
        var facts = SettingFacts()
        facts.typeName = transformer.typeName
        let encode = { (value: Stored) -> PlistValue? in try? transformer.encode(value) }
        var stored = rules.isEmpty ? nil : rules.apply(nil, changed: { _, _ in false }).0
        if stored == nil, let defaultInCode { stored = defaultInCode() }
        facts.defaultValue = stored.flatMap(encode)
        if let (lower, upper) = rules.bounds {
            facts.minimum = encode(lower)
            facts.maximum = encode(upper)
        } else if builtIn, let integer = Stored.self as? any FixedWidthInteger.Type {
            (facts.minimum, facts.maximum) = limits(of: integer)
        }
        if let cases = Stored.self as? any CaseIterable.Type {
            facts.allowedValues = allCases(of: cases).compactMap { ($0 as? Stored).flatMap(encode) }
            facts.sample = facts.allowedValues?.first
        }
        if builtIn { facts.declaredJSONType = jsonType(of: Stored.self) }
        return facts
    }

    /// The range an integer type narrower than a plist integer reads (`UInt8`: 0...255; `UInt`:
    /// at least 0): a stored value outside it is a type mismatch.
    private static func limits<T: FixedWidthInteger>(of type: T.Type) -> (PlistValue?, PlistValue?) {
        let minimum = T.isSigned && T.bitWidth >= 64 ? nil : PlistInteger(exactly: T.min).map(PlistValue.integer)
        let maximum = T.bitWidth >= 64 ? nil : PlistInteger(exactly: T.max).map(PlistValue.integer)
        return (minimum, maximum)
    }

    /// Every case of a `CaseIterable` type.
    private static func allCases<T: CaseIterable>(of type: T.Type) -> [Any] {
        type.allCases.map { $0 as Any }
    }

    /// The JSON type a built-in type is stored as, when one can tell from the type alone.
    private static func jsonType(of type: Any.Type) -> String? {
        switch type {
        case is Bool.Type: "boolean"
        case is any BinaryInteger.Type: "integer"
        case is any BinaryFloatingPoint.Type: "number"
        case is String.Type, is URL.Type, is UUID.Type, is SettingsColor.Type: "string"
        case is Date.Type: "date"
        case is Data.Type: "data"
        default: nil
        }
    }
}
