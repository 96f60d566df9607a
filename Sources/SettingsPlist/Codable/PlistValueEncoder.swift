#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Encoder` that ``PlistEncoder`` hands to `encode(to:)`: one per nested value, holding
/// what that value encodes. Containers requested from it write into it directly; nested
/// containers and super encoders are child encoders, merged in when this one ``finish()``es.
final class PlistValueEncoder: Encoder {
    /// What the encoded value turned out to be.
    enum Kind {
        case empty, single, dictionary, array
    }

    // Unchecked exclusivity on the storage: only this file touches it, never in overlapping
    // accesses, and the dynamic checks would cost more than the encoding of a scalar.
    @exclusivity(unchecked) private(set) var kind = Kind.empty
    @exclusivity(unchecked) private var single = PlistValue.bool(false)
    @exclusivity(unchecked) private var dictionary = PlistDictionary()
    @exclusivity(unchecked) private var array: [PlistValue] = []
    /// Nested containers and super encoders handed out, filled in later, merged by `finish()`.
    @exclusivity(unchecked) private var pendingEntries: [(key: String, encoder: PlistValueEncoder)] = []
    @exclusivity(unchecked) private var pendingElements: [(index: Int, encoder: PlistValueEncoder)] = []
    /// One bit per class (length and first byte) of the keys encoded so far: a key whose class
    /// bit is clear is certainly new. A 64-bit Bloom filter, never cleared.
    @exclusivity(unchecked) private var keyClasses: UInt64 = 0
    /// How many entries or elements to reserve when this value becomes a container: the size of
    /// the previous sibling, since arrays of models repeat one shape.
    @exclusivity(unchecked) private var capacityHint = 8
    /// The size of the last nested value finished here, handed to the next child as its hint.
    @exclusivity(unchecked) private var lastChildSize = 8
    /// A misuse that a non-throwing requirement could not report; ``finish()`` throws it.
    @exclusivity(unchecked) private var misuse: String?

    private let parent: PlistValueEncoder?
    /// This value's key in its parent, or `nil` for the top level and single-value nesting.
    private let key: (any CodingKey)?
    let userInfo: [CodingUserInfoKey: Any]

    init(parent: PlistValueEncoder?, key: (any CodingKey)?, userInfo: [CodingUserInfoKey: Any]) {
        self.parent = parent
        self.key = key
        self.userInfo = userInfo
    }

    /// Built by walking up the parents: only errors and curious `encode(to:)`s ask for it.
    var codingPath: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: PlistValueEncoder? = self
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        return keys.reversed()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        become(.dictionary)
        return KeyedEncodingContainer(PlistKeyedEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        become(.array)
        return PlistUnkeyedEncodingContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        PlistSingleValueEncodingContainer(encoder: self)
    }

    /// Switches to a container kind. Asking again for the same kind shares the container (a
    /// subclass and its superclass both encode into one dictionary); asking for another kind is
    /// a bug in the encoded type, reported when the value is finished.
    func become(_ newKind: Kind) {
        if kind == newKind { return }
        if kind != .empty, misuse == nil {
            misuse = "requested \(newKind.containerName) after encoding \(kind.containerName)"
        }
        kind = newKind
        // Room for as many entries as the previous sibling had, so that containers rarely regrow.
        if newKind == .dictionary, dictionary.isEmpty { dictionary = PlistDictionary(minimumCapacity: capacityHint) }
        if newKind == .array, array.isEmpty { array.reserveCapacity(capacityHint) }
    }

    // MARK: Writing

    /// Stores `value` as the single value; a second value is an error.
    func setSingle(_ value: PlistValue) throws(PlistError) {
        guard kind == .empty else {
            throw PlistError(.unencodable, "cannot encode a single value after encoding \(kind.containerName)",
                             codingPath: CodingPathText.render(codingPath))
        }
        kind = .single
        single = value
    }

    /// Sets the entry for `name`, replacing an earlier value for it in place.
    func setEntry(_ value: PlistValue, for name: String) {
        if !pendingEntries.isEmpty { pendingEntries.removeAll { sameCodePoints($0.key, name) } }
        if hasEntry(name) {
            dictionary[name] = value
        } else {
            dictionary.append(name, value)
        }
    }

    /// Whether `name` was encoded already. Keys are nearly always new, so ``keyClasses`` proves
    /// most of them new at once; otherwise a scan for a few keys, the dictionary's hash index
    /// beyond that.
    private func hasEntry(_ name: String) -> Bool {
        let utf8 = name.utf8
        let bit: UInt64 = 1 << UInt64((utf8.count &* 31 &+ Int(utf8.first ?? 0)) & 63)
        if keyClasses & bit == 0 {
            keyClasses |= bit
            return false
        }
        if dictionary.count > PlistDictionary.indexThreshold { return dictionary.firstIndex(of: name) != nil }
        return dictionary.keys.contains { sameCodePoints($0, name) }
    }

    /// Removes the entry for `name`: `nil` in a keyed container is an absent key.
    func removeEntry(_ name: String) {
        if !pendingEntries.isEmpty { pendingEntries.removeAll { sameCodePoints($0.key, name) } }
        dictionary.removeValue(forKey: name)
    }

    func appendElement(_ value: PlistValue) {
        array.append(value)
    }

    var elementCount: Int { array.count }

    /// A child encoder for a nested container (`childKind` `.dictionary` or `.array`) or a super
    /// encoder (`.empty`) at `key`, merged by ``finish()``.
    ///
    /// As in Foundation, containers asked for one key write into one value: a second request
    /// for the key gets the same child, and a nested container continues a dictionary or array
    /// encoded there before. Another kind of container for the key (an unkeyed one where a
    /// keyed one was made, or any container where a scalar was encoded) is a bug in the encoded
    /// type, reported with the key's coding path when the value is finished. A super encoder
    /// for a key that holds a finished value replaces it, as Foundation's does.
    func pendingEntry(_ key: any CodingKey, kind childKind: Kind) -> PlistValueEncoder {
        let name = key.stringValue
        if !pendingEntries.isEmpty, let earlier = pendingEntries.first(where: { sameCodePoints($0.key, name) }) {
            if childKind != .empty { earlier.encoder.become(childKind) }
            return earlier.encoder
        }
        let child = PlistValueEncoder(parent: self, key: key, userInfo: userInfo)
        child.kind = childKind
        if childKind != .empty, hasEntry(name), let current = dictionary[name] {
            child.continueEncoding(current)
        }
        setEntry(.dictionary(PlistDictionary()), for: name)
        pendingEntries.append((name, child))
        return child
    }

    /// Makes this nested container (already given its kind) continue `current`, the value
    /// encoded earlier for its key: entries are added to a dictionary, elements appended to an
    /// array; any other value is a misuse.
    private func continueEncoding(_ current: PlistValue) {
        switch (kind, current) {
        case (.dictionary, .dictionary(let entries)):
            dictionary = entries
            keyClasses = .max   // the Bloom filter knows none of these keys: check them all
        case (.array, .array(let elements)):
            array = elements
        default:
            misuse = "requested \(kind.containerName) after encoding \(current.codingSummary)"
        }
    }

    /// A child encoder for a nested container or super encoder appended to the array.
    func pendingElement(kind childKind: Kind) -> PlistValueEncoder {
        let index = array.count
        let child = PlistValueEncoder(parent: self, key: PlistCodingKey.index(index), userInfo: userInfo)
        child.kind = childKind
        array.append(.dictionary(PlistDictionary()))
        pendingElements.append((index, child))
        return child
    }

    // MARK: Encoding values

    /// Encodes a nested value: a plist value of its own for `Date`, `Data` and `URL`, otherwise
    /// whatever its `encode(to:)` writes into a child encoder (an empty dictionary if nothing).
    func encodeNested<T: Encodable>(_ value: T, key: (any CodingKey)?) throws -> PlistValue {
        if let direct = DirectCoding(T.self) { return Self.encodeDirectly(value, direct) }
        let child = PlistValueEncoder(parent: self, key: key, userInfo: userInfo)
        child.capacityHint = lastChildSize
        do {
            try value.encode(to: child)
        } catch {
            // Errors from the type's own code get the path here, where it is known.
            throw PlistError.coding(error, at: child.codingPath, fallback: .unencodable)
        }
        let result = try child.finish() ?? .dictionary(PlistDictionary())
        lastChildSize = min(max(child.size, 1), 64)
        return result
    }

    /// The number of entries or elements encoded so far.
    private var size: Int {
        switch kind {
        case .empty, .single: 0
        case .dictionary: dictionary.count
        case .array: array.count
        }
    }

    /// Encodes the top-level value, which must encode something.
    func encodeTopLevel<T: Encodable>(_ value: T) throws -> PlistValue {
        if let direct = DirectCoding(T.self) { return Self.encodeDirectly(value, direct) }
        try value.encode(to: self)
        guard let result = try finish() else {
            throw PlistError(.unencodable, "top-level \(T.self) did not encode any values")
        }
        return result
    }

    /// The plist value for a type that ``DirectCoding`` names, without its `encode(to:)`.
    /// Kept out of line so that the common path never asks for `T`'s metadata.
    @inline(never)
    static func encodeDirectly<T>(_ value: T, _ direct: DirectCoding) -> PlistValue {
        switch direct {
        case .string: return .string(sameType(value, as: String.self))
        case .bool: return .bool(sameType(value, as: Bool.self))
        case .double: return .real(sameType(value, as: Double.self))
        case .float: return .real(Double(sameType(value, as: Float.self)))
        case .int: return .integer(PlistInteger(Int64(sameType(value, as: Int.self))))
        case .int8: return .integer(PlistInteger(Int64(sameType(value, as: Int8.self))))
        case .int16: return .integer(PlistInteger(Int64(sameType(value, as: Int16.self))))
        case .int32: return .integer(PlistInteger(Int64(sameType(value, as: Int32.self))))
        case .int64: return .integer(PlistInteger(sameType(value, as: Int64.self)))
        case .uint: return .integer(PlistInteger(UInt64(sameType(value, as: UInt.self))))
        case .uint8: return .integer(PlistInteger(UInt64(sameType(value, as: UInt8.self))))
        case .uint16: return .integer(PlistInteger(UInt64(sameType(value, as: UInt16.self))))
        case .uint32: return .integer(PlistInteger(UInt64(sameType(value, as: UInt32.self))))
        case .uint64: return .integer(PlistInteger(sameType(value, as: UInt64.self)))
        case .date: return .date(sameType(value, as: Date.self))
        case .data: return .data(sameType(value, as: Data.self))
        case .url: return .string(sameType(value, as: URL.self).absoluteString)
        case .strings: return .array(sameType(value, as: [String].self).map { .string($0) })
        case .ints: return .array(sameType(value, as: [Int].self).map { .integer(PlistInteger(Int64($0))) })
        case .doubles: return .array(sameType(value, as: [Double].self).map { .real($0) })
        case .bools: return .array(sameType(value, as: [Bool].self).map { .bool($0) })
        }
    }

    /// What was encoded, with pending nested containers merged in; `nil` if nothing was.
    func finish() throws(PlistError) -> PlistValue? {
        if let misuse {
            throw PlistError(.unencodable, misuse, codingPath: CodingPathText.render(codingPath))
        }
        switch kind {
        case .empty:
            return nil
        case .single:
            return single
        case .dictionary:
            for (name, child) in pendingEntries {
                dictionary[name] = try child.finish() ?? .dictionary(PlistDictionary())
            }
            pendingEntries = []
            return .dictionary(dictionary)
        case .array:
            for (index, child) in pendingElements where index < array.count {
                array[index] = try child.finish() ?? .dictionary(PlistDictionary())
            }
            pendingElements = []
            return .array(array)
        }
    }
}

extension PlistValueEncoder.Kind {
    var containerName: String {
        switch self {
        case .empty: "nothing"
        case .single: "a single value"
        case .dictionary: "a keyed container"
        case .array: "an unkeyed container"
        }
    }
}

/// The plist integer for any Swift integer, or an error beyond `Int64.min ... UInt64.max`
/// (only `Int128` and `UInt128` can be).
func plistInteger<T: FixedWidthInteger>(_ value: T, at path: @autoclosure () -> [any CodingKey]) throws(PlistError) -> PlistValue {
    guard let integer = PlistInteger(exactly: value) else {
        throw PlistError(.unencodable, "\(T.self) \(value) is outside the plist integer range \(Int64.min)...\(UInt64.max)",
                         codingPath: CodingPathText.render(path()))
    }
    return .integer(integer)
}
