// What the tool prints for people comes partly from files others can write: key names, domain
// (directory) names, device ids and process names recorded in provenance and history. A control
// character in one of them must not end a line, move the cursor or clear the screen, or a forged
// name could print a line the tool never wrote. Every such text goes through one function.

extension String {
    /// The text with every control character escaped, so it prints as one line that shows what
    /// is there: `\n`, `\r` and `\t` as those two characters, every other C0 control, DEL, C1
    /// control, line or paragraph separator and bidirectional override as `\u{1B}` (its code
    /// point in hex). Other text, including a backslash, is unchanged.
    ///
    /// ```swift
    /// "evil\nApp".escapingControlCharacters        // evil\nApp (one line)
    /// "\u{1B}[2Jkey".escapingControlCharacters     // \u{1B}[2Jkey
    /// ```
    var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where Self.needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 controls, DEL, C1 controls, the line and paragraph separators, and the bidirectional
    /// embeddings, overrides and isolates (which reorder what follows them on the line).
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
