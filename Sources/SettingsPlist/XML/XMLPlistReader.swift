#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads XML property lists, accepting and rejecting exactly what CoreFoundation's
/// `CFPropertyListCreateWithData` does (Docs/PropertyLists.md lists the rules; the fixtures of
/// `Tests/SettingsPlistTests/Fixtures` and CI's conformance corpus check them).
///
/// The document is converted to UTF-8 first when it is in another encoding; UTF-8 input is
/// parsed in place. Parsing is a single forward pass over the bytes with an explicit stack of
/// open containers, so nesting depth costs heap, not call stack. Line and column are computed
/// only when an error is thrown.
enum XMLPlistReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        guard !buffer.isEmpty else { throw PlistError(.unknownFormat, "empty input: no XML content", at: .line(1, column: 1)) }
        let encoding = try XMLSourceEncoding.detect(buffer)
        if case .utf8(let skip) = encoding {
            return try parse(UnsafeBufferPointer(rebasing: buffer[skip...]), options: options)
        }
        let utf8 = try encoding.transcode(buffer)
        return try utf8.withUnsafeBufferPointer { (converted) throws(PlistError) -> PlistValue in
            try parse(converted, options: options)
        }
    }

    /// Parses a UTF-8 document.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            throw PlistError(.unknownFormat, "no XML content", at: .line(1, column: 1))
        }
        var parser = XMLPlistParser(base: base, count: buffer.count, maximumDepth: options.maximumDepth)
        try parser.skipProlog()
        return try parser.parseRootElement()
    }

    /// Line and column (both from 1, column in bytes) of `offset`, counting CR, LF and CRLF as
    /// one line break each, as CoreFoundation does.
    static func position(in buffer: UnsafeBufferPointer<UInt8>, offset: Int) -> PlistError.Position {
        let end = min(max(offset, 0), buffer.count)
        var line = 1, lineStart = 0, i = 0
        while i < end {
            let c = buffer[i]
            if c == UInt8(ascii: "\r") {
                if i + 1 < end, buffer[i + 1] == UInt8(ascii: "\n") { i += 1 }
                line += 1
                lineStart = i + 1
            } else if c == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return .line(line, column: end - lineStart + 1)
    }
}
