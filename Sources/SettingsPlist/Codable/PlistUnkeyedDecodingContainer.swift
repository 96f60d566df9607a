/// Reads the elements of a plist array, in order, for `init(from:)`.
///
/// The index moves on only after an element decoded, as Foundation's decoders do, so a caller
/// may try another type after a mismatch.
struct PlistUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: PlistValueDecoder
    let elements: [PlistValue]
    /// How much of the decoder's path was this container's when it was made.
    let depth: Int
    /// The keys of the containers this one is nested in, past `depth` (empty unless nested).
    let extraPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(decoder: PlistValueDecoder, elements: [PlistValue], depth: Int, extraPath: [any CodingKey]) {
        self.decoder = decoder
        self.elements = elements
        self.depth = depth
        self.extraPath = extraPath
    }

    var codingPath: [any CodingKey] { decoder.containerPath(depth: depth, extraPath: extraPath) }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [PlistCodingKey.index(currentIndex)] }

    private func endOfArray(expected: String) -> PlistError {
        let n = elements.count
        return missingValueError("expected \(expected), found end of array (\(n) \(n == 1 ? "element" : "elements"))", at: currentPath)
    }

    /// The next element converted by `convert`; the index moves on only on success.
    @inline(__always)
    private mutating func next<T>(_ expected: String, _ convert: (PlistValue) throws(CodingFailure) -> T) throws -> T {
        guard currentIndex < elements.count else { throw endOfArray(expected: expected) }
        do {
            let result = try convert(elements[currentIndex])
            currentIndex += 1
            return result
        } catch {
            throw error.located(at: currentPath)
        }
    }

    /// Whether the next element is the `"$null"` marker that stands for `nil`; consumes it if so.
    mutating func decodeNil() throws -> Bool {
        guard currentIndex < elements.count else { throw endOfArray(expected: "a value") }
        guard elements[currentIndex].isNullMarker else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try next("bool") { v throws(CodingFailure) in try v.unboxBool() }
    }

    mutating func decode(_ type: String.Type) throws -> String {
        try next("string") { v throws(CodingFailure) in try v.unboxString() }
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        try next("real") { v throws(CodingFailure) in try v.unboxFloatingPoint(Double.self) }
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        try next("real") { v throws(CodingFailure) in try v.unboxFloatingPoint(Float.self) }
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try integer() }

    @inline(__always)
    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        try next("integer") { v throws(CodingFailure) in try v.unboxInteger(T.self) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard currentIndex < elements.count else { throw endOfArray(expected: "\(T.self)") }
        let result = try decoder.decodeNested(
            elements[currentIndex], as: type, depth: depth, extraPath: extraPath, key: PlistCodingKey.index(currentIndex)
        )
        currentIndex += 1
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        guard currentIndex < elements.count else { throw endOfArray(expected: "dict") }
        try decoder.checkDepth(depth + extraPath.count + 1, at: currentPath)
        guard case .dictionary(let nested) = elements[currentIndex] else {
            throw CodingFailure.mismatch(expected: "dict", found: elements[currentIndex]).located(at: currentPath)
        }
        let key = PlistCodingKey.index(currentIndex)
        currentIndex += 1
        return KeyedDecodingContainer(
            PlistKeyedDecodingContainer<NestedKey>(decoder: decoder, dictionary: nested, depth: depth, extraPath: extraPath + [key])
        )
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard currentIndex < elements.count else { throw endOfArray(expected: "array") }
        try decoder.checkDepth(depth + extraPath.count + 1, at: currentPath)
        guard case .array(let nested) = elements[currentIndex] else {
            throw CodingFailure.mismatch(expected: "array", found: elements[currentIndex]).located(at: currentPath)
        }
        let key = PlistCodingKey.index(currentIndex)
        currentIndex += 1
        return PlistUnkeyedDecodingContainer(decoder: decoder, elements: nested, depth: depth, extraPath: extraPath + [key])
    }

    /// A decoder for the next element, which it consumes.
    mutating func superDecoder() throws -> any Decoder {
        guard currentIndex < elements.count else { throw endOfArray(expected: "a value") }
        let sub = decoder.superDecoder(for: elements[currentIndex], at: currentPath)
        currentIndex += 1
        return sub
    }
}
