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
///
/// Types that plists store directly (strings, numbers, dates, data, URLs and arrays of the
/// common ones) are read straight from the tree when they arrive through the generic
/// `decode<T>` requirements, without running `init(from:)` and its containers.
final class PlistValueDecoder: Decoder {
    /// The value that `container(keyedBy:)` and friends read now.
    ///
    /// Unchecked exclusivity: only this file's LIFO swaps write it, and dynamic checks on it
    /// cost more than the decode of a scalar.
    @exclusivity(unchecked) private(set) var value: PlistValue
    /// The coding path of ``value``: pushed and popped around every nested decode.
    @exclusivity(unchecked) private(set) var path: [any CodingKey]
    /// The deepest ``path`` allowed, so that recursive types cannot run away.
    let maximumDepth: Int
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    /// Set for a decode in recovery mode (see ``PlistDecoder/decodeRecovering(_:from:defaults:)``):
    /// keyed values fall back to defaults, collections leave out elements that do not decode.
    let recovery: PlistDecodingRecovery?

    /// `userInfo` as `Decoder` spells it, converted once on first use.
    private(set) lazy var userInfo: [CodingUserInfoKey: Any] = sendableUserInfo

    init(
        value: PlistValue, path: [any CodingKey], maximumDepth: Int, userInfo: [CodingUserInfoKey: any Sendable],
        recovery: PlistDecodingRecovery? = nil
    ) {
        self.value = value
        self.recovery = recovery
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

    // MARK: Decoding values

    /// Decodes ``value`` itself as a `T` (top level, or through a single-value container).
    /// `type` may name a subclass of `T` (`Employee.self as Person.Type`): its `init(from:)` runs.
    func decodeCurrentValue<T: Decodable>(as type: T.Type) throws -> T {
        if let direct = DirectCoding(T.self), recovery == nil || !direct.isArray {
            if direct == .url, case .dictionary = value {
                return sameType(try URL(from: self), as: T.self)
            }
            return try decodeDirectly(value, direct, as: T.self, at: path)
        }
        return try initialise(type)
    }

    /// Runs `type.init(from:)` on the current value, or in recovery mode decodes a collection
    /// element by element.
    private func initialise<T: Decodable>(_ type: T.Type) throws -> T {
        if recovery != nil, let collection = T.self as? any PlistRecoverableCollection.Type {
            return try decodeCollection(collection, as: T.self)
        }
        return try type.init(from: self)
    }

    private func decodeCollection<C: PlistRecoverableCollection, T>(_ collection: C.Type, as type: T.Type) throws -> T {
        sameType(try C.decodeRecovering(from: self), as: T.self)
    }

    /// Decodes `value`, found at `key` of a container, as a `T` (or the subclass `type` names).
    ///
    /// - Parameters:
    ///   - value: the nested value.
    ///   - depth, extraPath: the container's path (see ``containerPath(depth:extraPath:)``).
    ///   - key: the key or array position of `value` in the container.
    func decodeNested<T: Decodable>(
        _ value: PlistValue, as type: T.Type, depth: Int, extraPath: [any CodingKey], key: any CodingKey
    ) throws -> T {
        if let direct = DirectCoding(T.self), recovery == nil || !direct.isArray {
            if direct == .url, case .dictionary = value {
                return sameType(try decodeInside(value, as: URL.self, extraPath: extraPath, key: key), as: T.self)
            }
            return try decodeDirectly(value, direct, as: T.self, at: containerPath(depth: depth, extraPath: extraPath) + [key])
        }
        return try decodeInside(value, as: type, extraPath: extraPath, key: key)
    }

    /// Runs `T.init(from:)` on `value`, with the path and value swapped in and restored after.
    private func decodeInside<T: Decodable>(_ value: PlistValue, as type: T.Type, extraPath: [any CodingKey], key: any CodingKey) throws -> T {
        let mark = path.count
        try checkDepth(mark + extraPath.count + 1, at: path + extraPath + [key])
        if !extraPath.isEmpty { path.append(contentsOf: extraPath) }
        path.append(key)
        let outerValue = self.value
        self.value = value
        defer {
            self.value = outerValue
            while path.count > mark { path.removeLast() }
        }
        do {
            return try initialise(type)
        } catch {
            // Errors from the type's own code get the path here, where it is known.
            throw PlistError.coding(error, at: path, fallback: .invalidValue)
        }
    }

    /// Decodes a type that ``DirectCoding`` names straight from `value`.
    ///
    /// Kept out of line so that the common path never asks for `T`'s metadata.
    @inline(never)
    private func decodeDirectly<T>(
        _ value: PlistValue, _ direct: DirectCoding, as type: T.Type, at path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        do {
            switch direct {
            case .string: return sameType(try value.unboxString(), as: T.self)
            case .bool: return sameType(try value.unboxBool(), as: T.self)
            case .double: return sameType(try value.unboxFloatingPoint(Double.self), as: T.self)
            case .float: return sameType(try value.unboxFloatingPoint(Float.self), as: T.self)
            case .int: return sameType(try value.unboxInteger(Int.self), as: T.self)
            case .int8: return sameType(try value.unboxInteger(Int8.self), as: T.self)
            case .int16: return sameType(try value.unboxInteger(Int16.self), as: T.self)
            case .int32: return sameType(try value.unboxInteger(Int32.self), as: T.self)
            case .int64: return sameType(try value.unboxInteger(Int64.self), as: T.self)
            case .uint: return sameType(try value.unboxInteger(UInt.self), as: T.self)
            case .uint8: return sameType(try value.unboxInteger(UInt8.self), as: T.self)
            case .uint16: return sameType(try value.unboxInteger(UInt16.self), as: T.self)
            case .uint32: return sameType(try value.unboxInteger(UInt32.self), as: T.self)
            case .uint64: return sameType(try value.unboxInteger(UInt64.self), as: T.self)
            case .date: return sameType(try value.unboxDate(), as: T.self)
            case .data: return sameType(try value.unboxData(), as: T.self)
            case .url: return sameType(try value.unboxURL(), as: T.self)
            case .strings: return sameType(try value.unboxArray { e throws(CodingFailure) in try e.unboxString() }, as: T.self)
            case .ints: return sameType(try value.unboxArray { e throws(CodingFailure) in try e.unboxInteger(Int.self) }, as: T.self)
            case .doubles:
                return sameType(try value.unboxArray { e throws(CodingFailure) in try e.unboxFloatingPoint(Double.self) }, as: T.self)
            case .bools: return sameType(try value.unboxArray { e throws(CodingFailure) in try e.unboxBool() }, as: T.self)
            }
        } catch {
            throw error.located(at: path() + error.elementPath)
        }
    }

    /// Throws ``PlistError/Code/tooDeep`` when a coding path of `length` keys would pass
    /// ``maximumDepth``: a recursive type cannot recurse further than its data nests.
    func checkDepth(_ length: Int, at path: @autoclosure () -> [any CodingKey]) throws(PlistError) {
        guard length <= maximumDepth else {
            throw PlistError(.tooDeep, "values nested deeper than \(maximumDepth) levels", codingPath: CodingPathText.render(path()))
        }
    }

    /// A decoder of its own for `superDecoder()`: the caller may keep it past this container's use.
    func superDecoder(for value: PlistValue, at path: [any CodingKey]) -> PlistValueDecoder {
        PlistValueDecoder(value: value, path: path, maximumDepth: maximumDepth, userInfo: sendableUserInfo, recovery: recovery)
    }
}

/// The error for a missing key or array element.
func missingValueError(_ message: String, at path: [any CodingKey]) -> PlistError {
    PlistError(.missingValue, message, codingPath: CodingPathText.render(path))
}
