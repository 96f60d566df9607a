#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One saved version of a property-list file, kept in its history (``PlistHistory``): when it
/// was saved, by whom, which key paths that save changed, and the file's bytes.
///
/// ```swift
/// for generation in try PlistHistory.list(for: target) {
///     print(generation.number, generation.writer.summary, generation.changed)
/// }
/// ```
public struct PlistGeneration: Hashable, Sendable {
    /// Its number: 1 for the first kept, one more for each one after.
    public var number: Int
    /// Who saved it and when (its digest is unused).
    public var writer: SettingsProvenance
    /// The key paths that save changed.
    public var changed: [[String]]
    /// The file's bytes as saved.
    public var bytes: Data

    package init(number: Int, writer: SettingsProvenance, changed: [[String]], bytes: Data) {
        self.number = number
        self.writer = writer
        self.changed = changed
        self.bytes = bytes
    }

    /// The file's contents as saved.
    ///
    /// - Returns: the dictionary.
    /// - Throws: `PlistError` when the kept bytes do not parse, ``PlistFile/Failure`` when the
    ///   root is not a dictionary.
    public func contents() throws -> PlistDictionary {
        guard case .dictionary(let dictionary) = try PlistValue(decoding: bytes) else {
            throw PlistFile.Failure("generation \(number) is not a dictionary", code: EINVAL)
        }
        return dictionary
    }
}
