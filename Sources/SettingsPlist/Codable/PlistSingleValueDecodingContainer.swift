/// Reads the decoder's current value as one scalar, for `init(from:)` of wrapper types.
struct PlistSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: PlistValueDecoder
    /// How much of the decoder's path was this container's when it was made.
    let depth: Int

    var codingPath: [any CodingKey] { decoder.containerPath(depth: depth, extraPath: []) }

    @inline(__always)
    private func unbox<T>(_ convert: (PlistValue) throws(CodingFailure) -> T) throws -> T {
        do {
            return try convert(decoder.value)
        } catch {
            throw error.located(at: codingPath)
        }
    }

    /// Whether the value is the `"$null"` marker that stands for `nil`.
    func decodeNil() -> Bool { decoder.value.isNullMarker }

    func decode(_ type: Bool.Type) throws -> Bool { try unbox { v throws(CodingFailure) in try v.unboxBool() } }
    func decode(_ type: String.Type) throws -> String { try unbox { v throws(CodingFailure) in try v.unboxString() } }
    func decode(_ type: Double.Type) throws -> Double {
        try unbox { v throws(CodingFailure) in try v.unboxFloatingPoint(Double.self) }
    }
    func decode(_ type: Float.Type) throws -> Float {
        try unbox { v throws(CodingFailure) in try v.unboxFloatingPoint(Float.self) }
    }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer() }

    @inline(__always)
    private func integer<T: FixedWidthInteger>() throws -> T {
        try unbox { v throws(CodingFailure) in try v.unboxInteger(T.self) }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeCurrentValue(as: type)
    }
}
