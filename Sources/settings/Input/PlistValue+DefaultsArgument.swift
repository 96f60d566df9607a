#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

// `defaults write` argument typing: only the `settings` tool reads it.

extension PlistValue {
    /// The value for a typed `defaults write` argument: `defaults write domain key -type values...`.
    ///
    /// ```swift
    /// try PlistValue.fromDefaultsArgument(type: "-int", ["42"])            // .integer(42)
    /// try PlistValue.fromDefaultsArgument(type: "-bool", ["yes"])          // .bool(true)
    /// try PlistValue.fromDefaultsArgument(type: "-array", ["a", "b"])      // ["a", "b"]
    /// try PlistValue.fromDefaultsArgument(type: "-dict", ["k", "v"])       // ["k": "v"]
    /// ```
    ///
    /// The types (the leading `-` is optional):
    /// - `-string`: the text as it is;
    /// - `-int`, `-integer`: `[+-]digits` within `Int64`;
    /// - `-float`: a decimal number (`3`, `-1.5`, `2e-3`), finite;
    /// - `-bool`, `-boolean`: `YES`/`NO`/`true`/`false`/`1`/`0`, any letter case;
    /// - `-date`: `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DD HH:MM:SS ±HHMM`, fields range-checked;
    /// - `-data`: hex digits, pairs optionally separated by whitespace, optionally inside `< >`;
    /// - `-array`: every remaining value, as strings (none gives an empty array);
    /// - `-dict`: key value pairs, values as strings; a repeated key keeps its last value.
    ///
    /// - Parameters:
    ///   - type: the type flag, e.g. `"-int"`.
    ///   - values: the arguments after it; scalar types take exactly one.
    /// - Throws: ``PlistError/Code/invalidValue`` naming the type and the text it could not read.
    static func fromDefaultsArgument(type: String, _ values: [String]) throws(PlistError) -> PlistValue {
        try DefaultsArgument.value(type: type, values)
    }
}
