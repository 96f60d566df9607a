/// A key typed at the terminal, decoded from the bytes it sends.
enum Key: Equatable, Sendable {
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, backspace, tab, delete
    /// A control key: `ctrl("d")` for Ctrl-D.
    case ctrl(Character)
    case character(Character)

    /// The keys in `bytes` (one read's worth): CSI and SS3 sequences for the arrows and the
    /// paging keys, C0 controls, UTF-8 text. An unknown sequence is dropped whole.
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x1B:
                guard i + 1 < bytes.count, bytes[i + 1] == 0x5B || bytes[i + 1] == 0x4F else {
                    keys.append(.escape)
                    i += 1
                    continue
                }
                // ESC [ params final, or ESC O final.
                var j = i + 2
                while j < bytes.count, (0x30...0x3F).contains(bytes[j]) { j += 1 }
                guard j < bytes.count else { return keys }
                let parameters = String(decoding: bytes[(i + 2)..<j], as: UTF8.self)
                if let key = sequence(final: bytes[j], parameters: parameters) { keys.append(key) }
                i = j + 1
            case 0x0D, 0x0A: keys.append(.enter); i += 1
            case 0x7F, 0x08: keys.append(.backspace); i += 1
            case 0x09: keys.append(.tab); i += 1
            case 0x01...0x1A:
                keys.append(.ctrl(Character(Unicode.Scalar(byte + 0x60))))
                i += 1
            case 0x00, 0x1C...0x1F: i += 1
            default:
                let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                let end = min(bytes.count, i + length)
                for character in String(decoding: bytes[i..<end], as: UTF8.self) { keys.append(.character(character)) }
                i = end
            }
        }
        return keys
    }

    private static func sequence(final: UInt8, parameters: String) -> Key? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "~"):
            switch parameters {
            case "1", "7": .home
            case "4", "8": .end
            case "3": .delete
            case "5": .pageUp
            case "6": .pageDown
            default: nil
            }
        default: nil
        }
    }
}
