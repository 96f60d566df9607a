#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` that ``PlistDecoder`` hands to `init(from:)`.
///
/// One instance serves a whole decode: nested values do not get decoders of their own. Before a
/// nested `init(from:)` runs, the decoder swaps in the nested value and pushes its key on
/// ``path``; afterwards it restores both. That saves an allocation per nested value, and the
/// path costs nothing until an error needs it.
final class PlistValueDecoder: Decoder {
    /// The value that `container(keyedBy:)` and friends read now.
    var value: PlistValue
    /// The coding path of ``value``: pushed and popped around every nested decode.
    var path: [any CodingKey]
    /// The entry a keyed lookup tries first: the one after the previous hit.
    var keyGuess = 0
    /// The deepest ``path`` allowed, so that recursive types cannot run away.
    let maximumDepth: Int
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]

    /// `userInfo` as `Decoder` spells it, converted once on first use.
    private(set) lazy var userInfo: [CodingUserInfoKey: Any] = sendableUserInfo

    init(value: PlistValue, path: [any CodingKey], maximumDepth: Int, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.path = path
        self.path.reserveCapacity(path.count + 16)
        self.maximumDepth = maximumDepth
        self.sendableUserInfo = userInfo
    }

    var codingPath: [any CodingKey] { path }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let dictionary) = value else {
            throw CodingFailure.mismatch(expected: "dict", found: value).located(at: path)
        }
        keyGuess = 0
        return KeyedDecodingContainer(
            PlistKeyedDecodingContainer<Key>(decoder: self, dictionary: dictionary, depth: path.count, extraPath: [])
        )
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw CodingFailure.mismatch(expected: "array", found: value).located(at: path)
        }
        return PlistUnkeyedDecodingContainer(decoder: self, elements: elements, depth: path.count, extraPath: [])
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        PlistSingleValueDecodingContainer(decoder: self, depth: path.count)
    }

    /// The path of a container made at `depth` (with `extraPath` for a nested container).
    func containerPath(depth: Int, extraPath: [any CodingKey]) -> [any CodingKey] {
        Array(path.prefix(depth)) + extraPath
    }

    /// Decodes ``value`` itself as a `T` (top level, or through a single-value container).
    func decodeCurrentValue<T: Decodable>(as type: T.Type) throws -> T {
        if let special = try specialValue(value, as: T.self, at: path) { return special }
        return try T(from: self)
    }

    /// Decodes `value`, found at `key` of a container, as a `T`.
    ///
    /// - Parameters:
    ///   - value: the nested value.
    ///   - depth, extraPath: the container's path (see ``containerPath(depth:extraPath:)``).
    ///   - key: the key or array position of `value` in the container.
    func decodeNested<T: Decodable>(
        _ value: PlistValue, as type: T.Type, depth: Int, extraPath: [any CodingKey], key: any CodingKey
    ) throws -> T {
        if let special = try specialValue(value, as: T.self, at: containerPath(depth: depth, extraPath: extraPath) + [key]) {
            return special
        }
        let mark = path.count
        guard mark < maximumDepth else {
            throw PlistError(.tooDeep, "values nested deeper than \(maximumDepth) levels",
                             codingPath: CodingPathText.render(path + [key]))
        }
        if !extraPath.isEmpty { path.append(contentsOf: extraPath) }
        path.append(key)
        let outerValue = self.value
        let outerGuess = keyGuess
        self.value = value
        defer {
            self.value = outerValue
            keyGuess = outerGuess
            if path.count > mark { path.removeSubrange(mark...) }
        }
        do {
            return try T(from: self)
        } catch {
            // Errors from the type's own code get the path here, where it is known.
            throw PlistError.coding(error, at: path, fallback: .invalidValue)
        }
    }

    /// `Date`, `Data` and `URL` are plist values of their own rather than containers; `nil` for
    /// other types (and for a URL stored in `URL`'s own keyed form).
    @inline(__always)
    private func specialValue<T>(_ value: PlistValue, as type: T.Type, at path: @autoclosure () -> [any CodingKey]) throws -> T? {
        guard T.self == Date.self || T.self == Data.self || T.self == URL.self else { return nil }
        do {
            if T.self == Date.self { return try value.unboxDate() as? T }
            if T.self == Data.self { return try value.unboxData() as? T }
            return try value.unboxURL() as? T
        } catch {
            throw error.located(at: path())
        }
    }

    /// A decoder of its own for `superDecoder()`: the caller may keep it past this container's use.
    func superDecoder(for value: PlistValue, at path: [any CodingKey]) -> PlistValueDecoder {
        PlistValueDecoder(value: value, path: path, maximumDepth: maximumDepth, userInfo: sendableUserInfo)
    }
}

/// The error for a missing key or array element.
func missingValueError(_ message: String, at path: [any CodingKey]) -> PlistError {
    PlistError(.missingValue, message, codingPath: CodingPathText.render(path))
}
