#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Recognises integers, reals and Booleans in unquoted words (ASCII bytes).
package enum LiteralScalars {
    static func infer(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> PlistValue? {
        guard let first = word.first else { return nil }
        if first >= UInt8(ascii: "A") {
            if matches(word, "yes") || matches(word, "true") { return .bool(true) }
            if matches(word, "no") || matches(word, "false") { return .bool(false) }
            return nil
        }
        if let integer = integer(word) { return .integer(integer) }
        guard isDecimal(word) else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: word), as: UTF8.self)
        guard let real = Double(text), real.isFinite else { return nil }
        return .real(real)
    }

    /// Case-insensitive comparison with a lowercase ASCII word.
    static func matches(_ word: Slice<UnsafeBufferPointer<UInt8>>, _ lower: StaticString) -> Bool {
        guard word.count == lower.utf8CodeUnitCount else { return false }
        let target = UnsafeBufferPointer(start: lower.utf8Start, count: lower.utf8CodeUnitCount)
        return zip(word, target).allSatisfy { a, b in a | 0x20 == b }
    }

    /// `[+-]digits` within `Int64.min ... UInt64.max`.
    package static func integer(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> PlistInteger? {
        var digits = word[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative || digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var magnitude: UInt64 = 0
        for c in digits {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        guard negative else { return PlistInteger(magnitude) }
        if magnitude == UInt64(Int64.max) + 1 { return PlistInteger(Int64.min) }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return PlistInteger(-Int64(magnitude))
    }

    /// `[+-](digits[.digits] | .digits)[(e|E)[+-]digits]` with a `.` or an exponent.
    package static func isDecimal(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var i = word.startIndex
        let end = word.endIndex
        func isDigit(_ at: Int) -> Bool { at < end && word[at] >= UInt8(ascii: "0") && word[at] <= UInt8(ascii: "9") }
        if i < end, word[i] == UInt8(ascii: "+") || word[i] == UInt8(ascii: "-") { i += 1 }
        var mantissaDigits = 0
        while isDigit(i) { i += 1; mantissaDigits += 1 }
        var hasPoint = false
        if i < end, word[i] == UInt8(ascii: ".") {
            hasPoint = true
            i += 1
            while isDigit(i) { i += 1; mantissaDigits += 1 }
        }
        guard mantissaDigits > 0 else { return false }
        var hasExponent = false
        if i < end, word[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < end, word[i] == UInt8(ascii: "+") || word[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return false }
            while isDigit(i) { i += 1 }
            hasExponent = true
        }
        return i == end && (hasPoint || hasExponent)
    }
}
