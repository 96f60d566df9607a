#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

extension PlistValue {
    /// The type as `defaults read-type` names it.
    var defaultsTypeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        case .uid: "uid"
        }
    }
}

extension PlistValue {
    /// The type as `plutil -type` names it.
    var plutilTypeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        case .uid: "uid"
        }
    }
}

extension PlistValue {
    /// `a string`, `an integer`, `an array`... for messages.
    var kindWithArticle: String {
        let name = typeName == "dict" ? "dictionary" : typeName
        return ("aeiou".contains(name.first ?? "x") ? "an " : "a ") + name
    }
}
