import SettingsPlist

/// What `lint` warns about: XML `<date>` and `<data>` text that CoreFoundation (and so this
/// package) reads leniently but Python's plistlib and a strict reader reject: dates whose
/// fields are out of range (CoreFoundation rolls them over: month 13 is next January) and data
/// that is not well-formed base64 (CoreFoundation skips characters outside the alphabet).
enum Strict {
    struct Warning {
        var line: Int
        var column: Int
        var message: String
    }

    /// The warnings for an XML plist's bytes (UTF-8; other encodings are not checked).
    static func warnings(xml bytes: [UInt8]) -> [Warning] {
        var out: [Warning] = []
        var i = 0
        let n = bytes.count
        var line = 1, lineStart = 0
        func advance(to target: Int) {
            while i < target && i < n {
                if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
                i += 1
            }
        }
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard needle.count <= n else { return nil }
            var j = start
            while j + needle.count <= n {
                if bytes[j] == needle[0], Array(bytes[j..<j + needle.count]) == needle { return j }
                j += 1
            }
            return nil
        }
        let skips: [([UInt8], [UInt8])] = [
            (Array("<!--".utf8), Array("-->".utf8)),
            (Array("<![CDATA[".utf8), Array("]]>".utf8)),
            (Array("<?".utf8), Array("?>".utf8)),
        ]
        scan: while i < n {
            guard bytes[i] == UInt8(ascii: "<") else {
                advance(to: i + 1)
                continue
            }
            for (open, close) in skips where bytes[i...].starts(with: open) {
                advance(to: (find(close, from: i + open.count) ?? n) + close.count)
                continue scan
            }
            for element in ["date", "data"] where bytes[i...].starts(with: Array("<\(element)>".utf8)) {
                let start = i + element.utf8.count + 2
                guard let end = find(Array("</\(element)>".utf8), from: start) else { break scan }
                advance(to: start)
                let (l, c) = (line, i - lineStart + 1)
                let text = Array(bytes[start..<end])
                if element == "date" {
                    if !isDate(text) {
                        out.append(Warning(line: l, column: c, message: "<date>\(String(decoding: text, as: UTF8.self))</date> is not a valid date (CoreFoundation reads it by rolling the fields over; plistlib rejects it)"))
                    }
                } else if !isBase64(text) {
                    out.append(Warning(line: l, column: c, message: "<data> is not valid base64 (CoreFoundation reads it by skipping the characters outside the alphabet; plistlib rejects it)"))
                }
                advance(to: end)
                continue scan
            }
            advance(to: i + 1)
        }
        return out
    }

    /// `[-]YYYY-MM-DDTHH:MM:SSZ` with every field in range.
    static func isDate(_ text: [UInt8]) -> Bool {
        var text = text[...]
        if text.first == UInt8(ascii: "-") { text = text.dropFirst() }
        return (try? PlistValue.fromDefaultsArgument(type: "-date", [String(decoding: text, as: UTF8.self)])) != nil
    }

    /// Base64 as RFC 4648 has it, whitespace allowed anywhere: only the alphabet, at most two
    /// `=` and only at the end, a multiple of four characters.
    static func isBase64(_ text: [UInt8]) -> Bool {
        var count = 0, padding = 0
        for c in text {
            switch c {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "="): padding += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "/"):
                guard padding == 0 else { return false }
            default: return false
            }
            count += 1
        }
        return padding <= 2 && count % 4 == 0
    }
}
