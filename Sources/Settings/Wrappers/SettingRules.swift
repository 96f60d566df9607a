/// Chainable rules applied to a setting's value on every read and every write (Palau's rules).
///
/// ```swift
/// @Setting("volume", default: 0.5, rules: .clamp(0...1)) var volume: Double
/// @Setting("retries", rules: .whenNil(use: 3).ensure(that: { $0 >= 1 }, otherwise: 1)) var retries: Int?
/// ```
///
/// A read passes the stored value (or `nil` when there is none) through the rules in order. A write
/// passes the new value through them before storing; when a rule changes the value being written,
/// a ``SettingsDiagnostic/Kind/ruleApplied`` diagnostic says so.
public struct SettingRules<Value: Sendable>: Sendable {
    /// One step: gets the value so far (nil when missing) and returns the value after the rule.
    @usableFromInline
    struct Rule: Sendable {
        @usableFromInline var name: String
        @usableFromInline var apply: @Sendable (Value?) -> Value?
    }

    @usableFromInline var rules: [Rule] = []
    /// The range every ``clamp(_:)`` so far lets through (their intersection; the last range
    /// when they do not meet), for ``SettingsSchema``'s `minimum` and `maximum`. Never read on a
    /// read or a write.
    var bounds: (lower: Value, upper: Value)?

    /// No rules.
    public init() {}

    /// Whether there are no rules.
    public var isEmpty: Bool { rules.isEmpty }

    /// Uses `value` when there is no value (Palau's `whenNil(use:)`).
    ///
    /// ```swift
    /// @Setting("retries", rules: .whenNil(use: 3)) var retries: Int?
    /// ```
    ///
    /// - Parameter value: the replacement for a missing value.
    public func whenNil(use value: Value) -> SettingRules {
        adding("whenNil") { $0 ?? value }
    }

    /// Uses `replacement` whenever `isInvalid` is true for the value: Palau's
    /// `ensure(when:use:)`, with Palau's meaning.
    ///
    /// ```swift
    /// let lessThan10: @Sendable (Int) -> Bool = { $0 < 10 }
    /// SettingRules<Int>().whenNil(use: 10).ensure(when: lessThan10, use: 10)   // 8 reads as 10
    /// ```
    ///
    /// - Parameters:
    ///   - isInvalid: true for values that must be replaced.
    ///   - replacement: used instead of such a value.
    public func ensure(when isInvalid: @escaping @Sendable (Value) -> Bool, use replacement: Value) -> SettingRules {
        adding("ensure") { value in value.map { isInvalid($0) ? replacement : $0 } }
    }

    /// Keeps values for which `isValid` is true and uses `replacement` for the others.
    ///
    /// ```swift
    /// SettingRules<Int>().ensure(that: { $0 >= 10 }, otherwise: 10)   // 8 reads as 10
    /// ```
    ///
    /// - Parameters:
    ///   - isValid: true for acceptable values.
    ///   - replacement: used instead of an unacceptable value.
    public func ensure(that isValid: @escaping @Sendable (Value) -> Bool, otherwise replacement: Value) -> SettingRules {
        adding("ensure") { value in value.map { isValid($0) ? $0 : replacement } }
    }

    /// Not available: an unlabelled condition could mean either "the value is good" or, as in
    /// Palau, "the value is bad". Say which.
    @available(*, unavailable, message: "say what the condition means: ensure(when: isBad, use: x) replaces values for which it is true (Palau's meaning); ensure(that: isGood, otherwise: x) keeps them")
    public func ensure(_ condition: @escaping @Sendable (Value) -> Bool, use replacement: Value) -> SettingRules {
        self
    }

    /// Rules that start with ``whenNil(use:)``: `rules: .whenNil(use: 3)`.
    ///
    /// - Parameter value: the replacement for a missing value.
    public static func whenNil(use value: Value) -> SettingRules {
        SettingRules().whenNil(use: value)
    }

    /// Rules that start with ``ensure(when:use:)``: `rules: .ensure(when: { $0 < 1 }, use: 1)`.
    ///
    /// - Parameters:
    ///   - isInvalid: true for values that must be replaced.
    ///   - replacement: used instead of such a value.
    public static func ensure(when isInvalid: @escaping @Sendable (Value) -> Bool, use replacement: Value) -> SettingRules {
        SettingRules().ensure(when: isInvalid, use: replacement)
    }

    /// Rules that start with ``ensure(that:otherwise:)``: `rules: .ensure(that: { $0 >= 1 }, otherwise: 1)`.
    ///
    /// - Parameters:
    ///   - isValid: true for acceptable values.
    ///   - replacement: used instead of an unacceptable value.
    public static func ensure(that isValid: @escaping @Sendable (Value) -> Bool, otherwise replacement: Value) -> SettingRules {
        SettingRules().ensure(that: isValid, otherwise: replacement)
    }

    /// Adds a rule of your own: it gets the value so far (`nil` when missing) and returns the new one.
    ///
    /// - Parameters:
    ///   - name: named in diagnostics.
    ///   - rule: the rule.
    public func adding(_ name: String, _ rule: @escaping @Sendable (Value?) -> Value?) -> SettingRules {
        var copy = self
        copy.rules.append(Rule(name: name, apply: rule))
        return copy
    }

    /// Runs every rule in order; returns the result and the names of the rules that changed it.
    @inlinable
    func apply(_ value: Value?, changed isDifferent: (Value?, Value?) -> Bool) -> (Value?, [String]) {
        var current = value
        var fired: [String] = []
        for rule in rules {
            let next = rule.apply(current)
            if isDifferent(current, next) { fired.append(rule.name) }
            current = next
        }
        return (current, fired)
    }
}

extension SettingRules where Value: Comparable {
    /// Keeps values inside `range`: smaller ones become its lower bound, larger ones its upper bound.
    ///
    /// - Parameter range: the allowed values.
    public static func clamp(_ range: ClosedRange<Value>) -> SettingRules {
        SettingRules().clamp(range)
    }

    /// Adds a clamp to `range` after the rules so far.
    ///
    /// - Parameter range: the allowed values.
    public func clamp(_ range: ClosedRange<Value>) -> SettingRules {
        var copy = self
        if let (lower, upper) = bounds, max(lower, range.lowerBound) <= min(upper, range.upperBound) {
            copy.bounds = (max(lower, range.lowerBound), min(upper, range.upperBound))
        } else {
            copy.bounds = (range.lowerBound, range.upperBound)
        }
        return copy.adding("clamp(\(range.lowerBound)...\(range.upperBound))") { value in
            value.map { min(max($0, range.lowerBound), range.upperBound) }
        }
    }
}
