import SettingsPlist

/// What to suggest when a key path finds no value: the same path in the other syntax when that
/// one would have matched (`defaults`-style commands take `Root/Sub`, `plutil`-style ones
/// `Root.Sub`), or the nearest existing key path, one misspelt component at a time
/// ("did you mean 'Network/timeout'?").
enum KeySuggestion {
    /// A hint to append to a "no value" message (starting with a space), or "" when there is none.
    /// - Parameters:
    ///   - text: the key path as typed.
    ///   - components: its components.
    ///   - separator: the separator of the command's syntax (`/` or `.`).
    static func hint(for text: String, components: [String], in root: PlistValue, separator: Character) -> String {
        let other: Character = separator == "/" ? "." : "/"
        let otherComponents = EscapedPath.split(text, separator: other)
        if otherComponents.count > 1, value(at: otherComponents, in: root) != nil {
            let rewritten = otherComponents.map { EscapedPath.escape($0, separator: separator) }.joined(separator: String(separator))
            let style = separator == "/" ? "this command takes key paths with '/'" : "plutil-style commands take key paths with '.'"
            return " (\(style): '\(rewritten)')"
        }
        if let near = nearest(components, in: root) {
            let shown = near.map { EscapedPath.escape($0, separator: separator) }.joined(separator: String(separator))
            return " (did you mean '\(shown)'?)"
        }
        return ""
    }

    /// The value at `components` (dictionary keys, and array indexes).
    static func value(at components: [String], in root: PlistValue) -> PlistValue? {
        var current = root
        for component in components {
            switch current {
            case .dictionary(let dict):
                guard let next = dict[component] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(component), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// `components` with each dictionary key that is missing replaced by the closest existing
    /// key (at most a third of its letters different, and at least one), when the result names a
    /// value; otherwise `nil`.
    static func nearest(_ components: [String], in root: PlistValue) -> [String]? {
        var fixed: [String] = []
        var current = root
        var changed = false
        for component in components {
            switch current {
            case .dictionary(let dict):
                if let next = dict[component] {
                    fixed.append(component)
                    current = next
                    continue
                }
                var best: (key: String, distance: Int)?
                let limit = max(1, component.count / 3)
                for key in dict.keys where abs(key.count - component.count) <= limit {
                    let d = distance(Array(key.lowercased()), Array(component.lowercased()), limit: limit)
                    if d <= limit, d < (best?.distance ?? .max) { best = (key, d) }
                }
                guard let best, let next = dict[best.key] else { return nil }
                fixed.append(best.key)
                current = next
                changed = true
            case .array(let items):
                guard let index = Int(component), items.indices.contains(index) else { return nil }
                fixed.append(component)
                current = items[index]
            default:
                return nil
            }
        }
        return changed ? fixed : nil
    }

    /// The edit distance of `a` and `b` (insertions, deletions, substitutions, and a swap of
    /// two neighbours), or more than `limit` as soon as it must be.
    static func distance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
        guard a.count <= 256, b.count <= 256 else { return a == b ? 0 : limit + 1 }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            row[0] = i
            var smallest = row[0]
            for j in 1...max(b.count, 1) where !b.isEmpty {
                var d = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d = min(d, before[j - 2] + 1) }
                row[j] = d
                smallest = min(smallest, d)
            }
            if smallest > limit { return limit + 1 }
            (before, previous, row) = (previous, row, before)
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
