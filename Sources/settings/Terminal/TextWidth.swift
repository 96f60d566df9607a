/// How many columns a terminal gives text: East Asian wide and fullwidth characters and emoji
/// take two, a combining mark or a format character standing alone none, everything else one.
/// The screen lays out and cuts its lines by this, so an 80-column line never wraps.
extension Character {
    /// The columns this character takes in a terminal (0, 1 or 2).
    var terminalColumns: Int {
        let scalars = unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.isASCII { return first.value < 0x20 || first.value == 0x7F ? 0 : 1 }
        if first.value < 0x300 && scalars.count == 1 { return first.value < 0xA0 ? 0 : 1 }  // Latin-1 and Latin Extended
        if first.properties.isEmojiPresentation || scalars.contains("\u{FE0F}") || Self.isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return 1
        }
    }

    /// Whether a code point is East Asian Wide or Fullwidth (Unicode's EastAsianWidth W and F:
    /// Hangul Jamo, CJK, Kana, Hangul syllables, compatibility ideographs, fullwidth forms, and
    /// the supplementary ideographic planes).
    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
             0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}

extension String {
    /// The columns this text takes in a terminal (``Swift/Character/terminalColumns``).
    var terminalColumns: Int {
        if utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return utf8.count }
        return reduce(0) { $0 + $1.terminalColumns }
    }
}
