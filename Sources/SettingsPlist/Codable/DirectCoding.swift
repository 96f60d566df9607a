#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The types both coders convert directly, without their `Codable` conformance: the plist
/// scalars (`Date`, `Data` and `URL` included) and arrays of the common ones. The generic
/// requirements receive these often (`[String]`'s elements, a `Date` property), and a direct
/// conversion skips a container, a coding-path push and several runtime generic lookups.
enum DirectCoding {
    case string, bool, double, float
    case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
    case date, data, url
    case strings, ints, doubles, bools

    /// Whether this is an array type (decoded element by element in recovery mode).
    var isArray: Bool {
        switch self {
        case .strings, .ints, .doubles, .bools: true
        default: false
        }
    }

    /// The direct conversion for `type`, or `nil` for types that code themselves.
    @inline(__always)
    init?(_ type: Any.Type) {
        // Most frequent first: each test is a pointer comparison.
        if type == String.self { self = .string }
        else if type == Int.self { self = .int }
        else if type == Double.self { self = .double }
        else if type == Bool.self { self = .bool }
        else if type == Date.self { self = .date }
        else if type == [String].self { self = .strings }
        else if type == Data.self { self = .data }
        else if type == URL.self { self = .url }
        else if type == Float.self { self = .float }
        else if type == Int64.self { self = .int64 }
        else if type == UInt64.self { self = .uint64 }
        else if type == [Int].self { self = .ints }
        else if type == [Double].self { self = .doubles }
        else if type == [Bool].self { self = .bools }
        else if type == UInt.self { self = .uint }
        else if type == Int32.self { self = .int32 }
        else if type == UInt32.self { self = .uint32 }
        else if type == Int16.self { self = .int16 }
        else if type == UInt16.self { self = .uint16 }
        else if type == Int8.self { self = .int8 }
        else if type == UInt8.self { self = .uint8 }
        else { return nil }
    }
}

/// `value` as `T`, when the caller has checked that `T` is `U`.
///
/// The coders' generic requirements learn that `T` is `Date` (say) by comparing metatypes; this
/// states it to the compiler without a dynamic cast, which would cost more than the decode.
@inline(__always)
func sameType<U, T>(_ value: U, as type: T.Type) -> T {
    precondition(U.self == T.self)
    return unsafeBitCast(value, to: T.self)
}
