public import SettingsPlist

// Ready-made transformers: the building blocks of the built-in ones, and alternatives to pass as
// a setting's `transformer:` or to ``SettingsTransformers/register(_:)``.

extension SettingsTransformer where Value: FixedWidthInteger & Sendable {
    /// Stores an integer of any width as `<integer>`, range-checked on read.
    ///
    /// A stored integer outside `Value`'s range, or a `<real>` that is not a whole number, reads
    /// as a type mismatch (the default is used), never a trap. An integral `<real>` (`3.0`, as a
    /// hand-edited file may hold) reads as the integer, as `PlistDecoder` does.
    ///
    /// ```swift
    /// @Setting("volume", default: 80, transformer: .integer) var volume: UInt8
    /// ```
    public static var integer: SettingsTransformer<Value> {
        SettingsTransformer(
            typeName: "\(Value.self)",
            encode: { value in
                // Only a type wider than 64 bits can fail here (`Int128` above `UInt64.max`).
                guard let integer = PlistInteger(exactly: value) else {
                    throw TransformFailure("\(value) is outside a plist integer's range")
                }
                return .integer(integer)
            },
            decode: { plist in try integerValue(of: plist) }
        )
    }

    /// The integer in `plist`, `nil` when it is not a number, a failure when it does not fit.
    private static func integerValue(of plist: PlistValue) throws(TransformFailure) -> Value? {
        switch plist {
        case .integer(let integer):
            if let value = integer.value(as: Value.self) { return value }
            throw TransformFailure("\(integer) is outside \(Value.min)...\(Value.max)")
        case .real(let real):
            if let value = Value(exactly: real) { return value }
            guard real.isFinite, real.rounded(.towardZero) == real else {
                throw TransformFailure("\(real) is not a whole number")
            }
            throw TransformFailure("\(real) is outside \(Value.min)...\(Value.max)")
        default:
            return nil
        }
    }
}

extension SettingsTransformer where Value: RawRepresentable & Sendable, Value.RawValue: SettingsValue & Sendable {
    /// Stores a `RawRepresentable` value (an enum with raw values) as its raw value, which is
    /// what a person editing the file expects to see: `<string>dark</string>`, not a number or a
    /// nested dictionary.
    ///
    /// A stored raw value that names no case reads as a type mismatch naming the value. The raw
    /// value is stored by its own type's transformer (a registered one, if any).
    ///
    /// ```swift
    /// enum Theme: String { case light, dark }
    /// @Setting("theme", default: Theme.dark) var theme: Theme   // uses this transformer
    /// ```
    public static var rawValue: SettingsTransformer<Value> {
        let raw = ComponentTransformer(builtIn: Value.RawValue.settingsTransformer)
        return SettingsTransformer(
            typeName: "\(Value.self)",
            encode: { value in try raw.current.encode(value.rawValue) },
            decode: { plist in
                // A raw value of the wrong plist type is a plain mismatch (`nil`), one of the
                // right type that names no case says which value it was.
                guard let rawValue = try raw.current.decodeValue(plist) else { return nil }
                guard let value = Value(rawValue: rawValue) else {
                    throw TransformFailure("\(String(reflecting: rawValue)) is not a raw value of \(Value.self)")
                }
                return value
            }
        )
    }
}

extension SettingsTransformer where Value: Codable & Sendable {
    /// Stores a `Codable` value as a nested plist value through `PlistEncoder` and
    /// `PlistDecoder`: a struct becomes a `<dict>` with one entry per property, never opaque
    /// `<data>`, so the file stays readable and editable.
    ///
    /// A stored value that does not decode (a missing field, a wrong type inside) reads as a type
    /// mismatch whose detail gives the decoder's coding path, e.g. `at servers[2].port: ...`.
    ///
    /// ```swift
    /// struct Profile: Codable { var name = "Ada"; var age = 36 }
    /// @Setting("profile", default: Profile()) var profile: Profile   // uses this transformer
    /// ```
    public static var codable: SettingsTransformer<Value> {
        codable(encoder: PlistEncoder(), decoder: PlistDecoder())
    }

    /// Stores a `Codable` value as a nested plist value with the coders you configure (their
    /// `userInfo`, the decoder's depth limit).
    ///
    /// ```swift
    /// let coders = SettingsTransformer<Profile>.codable(
    ///     encoder: PlistEncoder(userInfo: [.profileVersion: 2]),
    ///     decoder: PlistDecoder(userInfo: [.profileVersion: 2]))
    /// ```
    ///
    /// - Parameters:
    ///   - encoder: encodes values to a `PlistValue` (its `PlistEncoder.outputFormat` is unused).
    ///   - decoder: decodes stored values.
    public static func codable(encoder: PlistEncoder, decoder: PlistDecoder) -> SettingsTransformer<Value> {
        SettingsTransformer(
            typeName: "\(Value.self)",
            encode: { value in try encoder.encodeToValue(value) },
            decode: { plist in try decoder.decode(Value.self, from: plist) }
        )
    }
}

extension SettingsTransformer where Value: LosslessStringConvertible & Sendable {
    /// Stores a value as the `<string>` of its `description`, read back with `init?(_:)`; for
    /// types whose text form is what people write (a version number, a port as text).
    ///
    /// ```swift
    /// @Setting("port", default: 8080, transformer: .string) var port: Int   // <string>8080</string>
    /// ```
    public static var string: SettingsTransformer<Value> {
        SettingsTransformer(
            typeName: "\(Value.self)",
            encode: { value in .string(value.description) },
            decode: { plist in
                guard case .string(let text) = plist else { return nil }
                guard let value = Value(text) else {
                    throw TransformFailure("\(String(reflecting: text)) is not a \(Value.self)")
                }
                return value
            }
        )
    }
}

extension SettingsTransformer {
    /// Stores an array as `<array>`, each element with `element`.
    ///
    /// A stored element that does not convert makes the whole read a type mismatch whose detail
    /// names the element (`at [2]: ...`).
    ///
    /// ```swift
    /// @Setting("ports", default: [80], transformer: .array(of: .string)) var ports: [Int]
    /// ```
    ///
    /// - Parameter element: how each element is stored.
    public static func array<Element>(of element: SettingsTransformer<Element>) -> SettingsTransformer<Value>
    where Value == [Element] {
        arrayTransformer(typeName: "[\(element.typeName)]") { element }
    }

    /// Stores a `[String: Element]` as `<dict>` (keys sorted, so the file does not change from
    /// one run to the next), each value with `element`.
    ///
    /// ```swift
    /// @Setting("limits", default: [:], transformer: .dictionary(of: .string)) var limits: [String: Int]
    /// ```
    ///
    /// - Parameter element: how each value is stored.
    public static func dictionary<Element>(of element: SettingsTransformer<Element>) -> SettingsTransformer<Value>
    where Value == [String: Element] {
        dictionaryTransformer(typeName: "[String: \(element.typeName)]") { element }
    }

    /// A transformer for another type, stored the way this one stores `Value`.
    ///
    /// ```swift
    /// struct Celsius { var degrees: Double }
    /// let celsius = Double.settingsTransformer.mapped(
    ///     typeName: "Celsius", to: { $0.degrees }, from: { Celsius(degrees: $0) })
    /// ```
    ///
    /// - Parameters:
    ///   - typeName: the new type's name, for diagnostics.
    ///   - to: the `Value` that stands for an `Other`.
    ///   - from: the `Other` for a stored `Value`, or `nil` when there is none (a type mismatch);
    ///     throw to give the mismatch a detail.
    public func mapped<Other>(
        typeName: String,
        to: @escaping @Sendable (Other) throws -> Value,
        from: @escaping @Sendable (Value) throws -> Other?
    ) -> SettingsTransformer<Other> {
        let base = self
        return SettingsTransformer<Other>(
            typeName: typeName,
            encode: { other in try base.encode(to(other)) },
            decode: { plist in try base.decodeValue(plist).flatMap(from) }
        )
    }

    /// The array transformer, with the element transformer looked up on each use.
    static func arrayTransformer<Element>(
        typeName: String, element: @escaping @Sendable () -> SettingsTransformer<Element>
    ) -> SettingsTransformer<[Element]> {
        SettingsTransformer<[Element]>(
            typeName: typeName,
            encode: { values in
                let transformer = element()
                var encoded: [PlistValue] = []
                encoded.reserveCapacity(values.count)
                for value in values { encoded.append(try transformer.encode(value)) }
                return .array(encoded)
            },
            decode: { plist in
                guard case .array(let items) = plist else { return nil }
                let transformer = element()
                var decoded: [Element] = []
                decoded.reserveCapacity(items.count)
                for index in items.indices {
                    do throws(TransformFailure) {
                        decoded.append(try transformer.decodeComponent(items[index]))
                    } catch {
                        throw error.inside(.index(index))
                    }
                }
                return decoded
            }
        )
    }

    /// The dictionary transformer, with the value transformer looked up on each use.
    static func dictionaryTransformer<Element>(
        typeName: String, element: @escaping @Sendable () -> SettingsTransformer<Element>
    ) -> SettingsTransformer<[String: Element]> {
        SettingsTransformer<[String: Element]>(
            typeName: typeName,
            encode: { values in
                let transformer = element()
                var entries: [(String, PlistValue)] = []
                entries.reserveCapacity(values.count)
                for (key, value) in values { entries.append((key, try transformer.encode(value))) }
                entries.sort { $0.0.unicodeScalars.lexicographicallyPrecedes($1.0.unicodeScalars) }
                return .dictionary(PlistDictionary(entries))
            },
            decode: { plist in
                guard case .dictionary(let entries) = plist else { return nil }
                let transformer = element()
                var decoded: [String: Element] = [:]
                decoded.reserveCapacity(entries.count)
                for index in 0..<entries.count {
                    let key = entries.keys[index]
                    do throws(TransformFailure) {
                        // Keys that differ in code points but are equal as Swift strings
                        // (precomposed and decomposed accents) collapse: the later one wins.
                        decoded[key] = try transformer.decodeComponent(entries.values[index])
                    } catch {
                        throw error.inside(.key(key))
                    }
                }
                return decoded
            }
        )
    }

    /// Decodes a part of a larger value (an element, a dictionary value): a wrong type becomes a
    /// failure naming both types, and any other error a failure with its text.
    func decodeComponent(_ plist: PlistValue) throws(TransformFailure) -> Value {
        let decoded: Value?
        do {
            decoded = try decodeValue(plist)
        } catch let failure as TransformFailure {
            throw failure
        } catch let error as PlistError where error.codingPath != nil && error.position == nil {
            // A Codable element's decoding error: its coding path continues the element's path.
            var failure = TransformFailure(error.message)
            failure.path = [.codingPath(error.codingPath ?? "")]
            throw failure
        } catch {
            throw TransformFailure("\(error)")
        }
        guard let decoded else { throw TransformFailure("found \(swiftTypeName(forPlistType: plist.typeName)), expected \(typeName)") }
        return decoded
    }
}

/// The transformer for a part of a built-in value (an array element, a dictionary value, an
/// enum's raw value): the one registered for its type when there is one, else the built-in one.
///
/// Looking the registration up on each use (one lock, once per array, not per element) lets a
/// transformer registered after a setting was created still apply; settings re-read when the
/// registry changes.
struct ComponentTransformer<Value>: Sendable {
    let builtIn: SettingsTransformer<Value>

    var current: SettingsTransformer<Value> {
        SettingsTransformers.registered(for: Value.self) ?? builtIn
    }

    /// ``current`` as a function. Made here, where `Value` has no conformances, so that the
    /// closure may be `@Sendable` for a `Value` whose metatype is not (array elements).
    var resolver: @Sendable () -> SettingsTransformer<Value> {
        { current }
    }
}

/// Why a built-in transformer refused a stored value that has the right plist type (out of
/// range, malformed, unknown raw value), and where inside it. Its text becomes the detail of the
/// ``SettingsError``: `key 'levels' has type array, expected [UInt8] (from user file) (at [1]: 300 is outside 0...255)`.
struct TransformFailure: Error, CustomStringConvertible {
    /// One step into a nested value.
    enum Step {
        case index(Int)
        case key(String)
        /// A decoder's coding path, already rendered (`age`, `servers[2].port`).
        case codingPath(String)
    }

    /// From the outermost step in.
    var path: [Step] = []
    let message: String

    init(_ message: String) {
        self.message = message
    }

    /// The same failure, one level further in.
    func inside(_ step: Step) -> TransformFailure {
        var copy = self
        copy.path.insert(step, at: 0)
        return copy
    }

    /// `message`, or `at [2].name: message`.
    var description: String {
        path.isEmpty ? message : "at \(renderedPath): \(message)"
    }

    /// Array positions as `[n]`, plain keys joined by dots, other keys quoted in brackets.
    private var renderedPath: String {
        var text = ""
        for step in path {
            switch step {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key) where Self.isPlain(key):
                text += text.isEmpty ? key : ".\(key)"
            case .key(let key):
                text += "[\(String(reflecting: key))]"
            case .codingPath(let codingPath):
                text += text.isEmpty || codingPath.hasPrefix("[") ? codingPath : ".\(codingPath)"
            }
        }
        return text
    }

    /// Whether `key` reads unambiguously without quotes: ASCII letters, digits, `_` and `-`.
    private static func isPlain(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2D
        }
    }
}
