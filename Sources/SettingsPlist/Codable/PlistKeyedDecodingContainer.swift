/// Reads the entries of a plist dictionary for `init(from:)`.
///
/// A class, not a struct: the standard library's type-erasing box copies its container for
/// every call, and copying one reference is far cheaper than copying a dictionary's three.
///
/// Lookups compare keys by code points without allocating. The first candidate is the entry
/// after the previous hit, so a type decoding its keys in the order they were encoded (as
/// synthesised `Codable` does) finds each one with a single comparison.
final class PlistKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: PlistValueDecoder
    let dictionary: PlistDictionary
    /// How much of the decoder's path was this container's when it was made.
    let depth: Int
    /// The keys of the containers this one is nested in, past `depth` (empty unless nested).
    let extraPath: [any CodingKey]
    /// The entry a lookup tries first. Unchecked exclusivity: a plain guess, read and written
    /// in one place, and the dynamic check would cost more than the lookup.
    @exclusivity(unchecked) private var nextIndex = 0

    init(decoder: PlistValueDecoder, dictionary: PlistDictionary, depth: Int, extraPath: [any CodingKey]) {
        self.decoder = decoder
        self.dictionary = dictionary
        self.depth = depth
        self.extraPath = extraPath
    }

    var codingPath: [any CodingKey] { decoder.containerPath(depth: depth, extraPath: extraPath) }

    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { position(of: key) != nil }

    // MARK: Lookup

    /// The index of `key` in the dictionary, trying the guessed position first.
    @inline(__always)
    private func position(of key: Key) -> Int? {
        let name = key.stringValue
        let guess = nextIndex
        if guess < dictionary.count, sameCodePoints(dictionary.keys[guess], name) {
            nextIndex = guess &+ 1
            return guess
        }
        guard let found = search(name) else { return nil }
        nextIndex = found &+ 1
        return found
    }

    /// A full search: hashed for large dictionaries, a scan for small ones.
    private func search(_ name: String) -> Int? {
        if dictionary.count > PlistDictionary.indexThreshold { return dictionary.firstIndex(of: name) }
        return dictionary.keys.firstIndex { sameCodePoints($0, name) }
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    private func missing(_ key: Key, expected: String) -> PlistError {
        missingValueError("missing key \(String(reflecting: key.stringValue)) (expected \(expected))", at: path(key))
    }

    /// The value for `key` converted by `convert`; a missing key or failed conversion throws.
    @inline(__always)
    private func unbox<T>(_ key: Key, _ expected: String, _ convert: (PlistValue) throws(CodingFailure) -> T) throws -> T {
        guard let i = position(of: key) else {
            return try fallback(key, missing(key, expected: expected), convert, missingKey: true)
        }
        do {
            return try convert(dictionary.values[i])
        } catch {
            return try fallback(key, error.located(at: path(key)), convert)
        }
    }

    /// Like ``unbox(_:_:_:)`` but `nil` for a missing key or the `"$null"` marker.
    @inline(__always)
    private func unboxIfPresent<T>(_ key: Key, _ convert: (PlistValue) throws(CodingFailure) -> T) throws -> T? {
        guard let i = position(of: key) else { return nil }
        let value = dictionary.values[i]
        if value.isNullMarker { return nil }
        do {
            return try convert(value)
        } catch {
            return try fallbackIfPresent(key, error.located(at: path(key)), convert)
        }
    }

    // MARK: Recovery mode

    /// In recovery mode, the default for `key` in place of a value that failed with `error`;
    /// otherwise (or without a default) `error` is thrown. A key that is missing (`missingKey`)
    /// and has a default takes it without being recorded: nothing stored was replaced.
    @inline(never)
    private func fallback<T>(
        _ key: Key, _ error: any Error, _ convert: (PlistValue) throws -> T, missingKey: Bool = false
    ) throws -> T {
        guard let recovery = decoder.recovery else { throw error }
        let keyPath = path(key)
        guard let value = recovery.defaultValue(at: keyPath), let converted = try? convert(value) else { throw error }
        if missingKey { return converted }
        recovery.record(error, at: keyPath, .fellBack)
        return converted
    }

    /// In recovery mode, the default for optional `key` in place of a value that failed with
    /// `error`, or `nil` without a default; otherwise `error` is thrown.
    @inline(never)
    private func fallbackIfPresent<T>(_ key: Key, _ error: any Error, _ convert: (PlistValue) throws -> T) throws -> T? {
        guard let recovery = decoder.recovery else { throw error }
        let keyPath = path(key)
        let converted = recovery.defaultValue(at: keyPath).flatMap { try? convert($0) }
        recovery.record(error, at: keyPath, .fellBack)
        return converted
    }

    // MARK: Decoding

    /// `true` for a missing key too: ``PlistEncoder`` writes `nil` by leaving the key out.
    func decodeNil(forKey key: Key) throws -> Bool {
        guard let i = position(of: key) else { return true }
        return dictionary.values[i].isNullMarker
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try unbox(key, "bool") { v throws(CodingFailure) in try v.unboxBool() }
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try unbox(key, "string") { v throws(CodingFailure) in try v.unboxString() }
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try unbox(key, "real") { v throws(CodingFailure) in try v.unboxFloatingPoint(Double.self) }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try unbox(key, "real") { v throws(CodingFailure) in try v.unboxFloatingPoint(Float.self) }
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try unbox(key, "integer") { v throws(CodingFailure) in try v.unboxInteger(T.self) }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let i = position(of: key) else {
            return try fallback(key, missing(key, expected: "\(T.self)"), nested(type, key), missingKey: true)
        }
        do {
            return try decoder.decodeNested(dictionary.values[i], as: type, depth: depth, extraPath: extraPath, key: key)
        } catch {
            return try fallback(key, error, nested(type, key))
        }
    }

    /// Decodes a value found at `key` as a `T` (for a default in recovery mode).
    private func nested<T: Decodable>(_ type: T.Type, _ key: Key) -> (PlistValue) throws -> T {
        { [decoder, depth, extraPath] value in
            try decoder.decodeNested(value, as: type, depth: depth, extraPath: extraPath, key: key)
        }
    }

    // MARK: Decoding optionals in one lookup (the default implementations take three)

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try unboxIfPresent(key) { v throws(CodingFailure) in try v.unboxBool() }
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try unboxIfPresent(key) { v throws(CodingFailure) in try v.unboxString() }
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try unboxIfPresent(key) { v throws(CodingFailure) in try v.unboxFloatingPoint(Double.self) }
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try unboxIfPresent(key) { v throws(CodingFailure) in try v.unboxFloatingPoint(Float.self) }
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try integerIfPresent(key) }

    @inline(__always)
    private func integerIfPresent<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        try unboxIfPresent(key) { v throws(CodingFailure) in try v.unboxInteger(T.self) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let i = position(of: key) else { return nil }
        let value = dictionary.values[i]
        if value.isNullMarker { return nil }
        do {
            return try decoder.decodeNested(value, as: type, depth: depth, extraPath: extraPath, key: key)
        } catch {
            return try fallbackIfPresent(key, error, nested(type, key))
        }
    }

    // MARK: Nested containers and super decoders

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try unbox(key, "dict") { v throws(CodingFailure) in v }
        try decoder.checkDepth(depth + extraPath.count + 1, at: path(key))
        guard case .dictionary(let nested) = value else {
            throw CodingFailure.mismatch(expected: "dict", found: value).located(at: path(key))
        }
        return KeyedDecodingContainer(
            PlistKeyedDecodingContainer<NestedKey>(decoder: decoder, dictionary: nested, depth: depth, extraPath: extraPath + [key])
        )
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try unbox(key, "array") { v throws(CodingFailure) in v }
        try decoder.checkDepth(depth + extraPath.count + 1, at: path(key))
        guard case .array(let elements) = value else {
            throw CodingFailure.mismatch(expected: "array", found: value).located(at: path(key))
        }
        return PlistUnkeyedDecodingContainer(decoder: decoder, elements: elements, depth: depth, extraPath: extraPath + [key])
    }

    /// The decoder for the value at `"super"`, which must be present.
    func superDecoder() throws -> any Decoder {
        try superDecoder(named: PlistCodingKey.superKey)
    }

    /// The decoder for the value at `key`, which must be present.
    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key)
    }

    private func superDecoder(named key: some CodingKey) throws -> any Decoder {
        let keyPath = codingPath + [key]
        guard let i = search(key.stringValue) else {
            throw missingValueError("missing key \(String(reflecting: key.stringValue)) (expected a super decoder's value)", at: keyPath)
        }
        return decoder.superDecoder(for: dictionary.values[i], at: keyPath)
    }
}

/// Whether two keys have the same code points, as ``CodePointKey`` compares them, but comparing
/// the UTF-8 bytes in place (small strings too) a word at a time rather than walking two
/// `UTF8View`s, which costs several times more. This runs at least once per decoded property.
@inline(__always)
func sameCodePoints(_ a: String, _ b: String) -> Bool {
    let count = a.utf8.count
    guard count == b.utf8.count else { return false }
    let inPlace = a.utf8.withContiguousStorageIfAvailable { pa in
        b.utf8.withContiguousStorageIfAvailable { pb in sameBytes(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) }
    }
    if let inPlace, let equal = inPlace { return equal }
    return a.utf8.elementsEqual(b.utf8)
}

/// Whether two buffers hold the same bytes, compared eight (or four) at a time.
@inline(__always)
func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let n = a.count
    guard n == b.count else { return false }
    if n >= 8 {
        var i = 0
        while i &+ 8 <= n {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i &+= 8
        }
        // The tail as one overlapping word.
        return i == n
            || a.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
    }
    if n >= 4 {
        return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
            && a.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self) == b.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
    }
    var i = 0
    while i < n {
        if a[i] != b[i] { return false }
        i &+= 1
    }
    return true
}
