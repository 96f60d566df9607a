import SettingsPlist

/// What a store refuses to hold because no reader could read it back: a key and value nested
/// deeper than ``PlistNesting/maximumDepth`` (512 levels, counting the file's top dictionary and
/// each namespace), or a value larger than the settings file may be. The store checks before it
/// changes anything, so a refused write leaves memory and the file as they were.
extension SettingsKey {
    /// The error for storing `value` under this key, or `nil` when a reader can read it back.
    ///
    /// - Parameters:
    ///   - value: the value (`nil`, a removal, is always allowed unless the key itself is too deep).
    ///   - sizeLimit: the largest file that will be read back (a file store's
    ///     `maximumFileSize`), or `nil` for a store without a file; asked only for a value
    ///     whose size can grow.
    /// - Returns: an ``SettingsError/Code/unstorable`` error naming the key and the rule.
    @inline(__always)
    func refusal(toStore value: PlistValue?, sizeLimit: @autoclosure () -> Int?) -> SettingsError? {
        // The common writes, a number, a Bool or a date (or a removal), under a key within the
        // depth: such a value nests nothing, and the size rule is for what grows with the value
        // (strings, data, containers; a fixed 8 bytes is never checked). So only the key's own
        // depth can refuse it, compared here without a call.
        switch value {
        case nil, .integer?, .real?, .bool?, .date?, .uid?:
            if components.count <= PlistNesting.maximumDepth { return nil }
        default:
            break
        }
        return checkedRefusal(toStore: value, sizeLimit: sizeLimit())
    }

    /// ``refusal(toStore:sizeLimit:)`` for any value.
    private func checkedRefusal(toStore value: PlistValue?, sizeLimit: Int?) -> SettingsError? {
        let enclosing = components.count  // the file's top dictionary, then one per namespace
        if enclosing > PlistNesting.maximumDepth {
            return SettingsError(.unstorable, key: self, detail: "a key of \(enclosing) components nests deeper than the \(PlistNesting.maximumDepth) levels readers accept")
        }
        guard let value else { return nil }
        switch value {  // the common writes, scalars, cost a comparison or two
        case .string(let s): return tooLarge(s.utf8.count, sizeLimit)
        case .data(let d): return tooLarge(d.count, sizeLimit)
        case .array, .dictionary: break
        default: return nil
        }
        if let inside = PlistNesting.firstPathTooDeep(in: value, enclosingDepth: enclosing) {
            let at = inside.isEmpty ? "" : " (at \(SettingsKey.abbreviate(inside.joined(separator: "/"))) inside the value)"
            return SettingsError(.unstorable, key: self, detail: "the key and its value nest deeper than the \(PlistNesting.maximumDepth) levels readers accept\(at)")
        }
        guard let sizeLimit else { return nil }
        return tooLarge(value.payloadSize(stoppingAbove: sizeLimit), sizeLimit)
    }

    private func tooLarge(_ size: Int, _ sizeLimit: Int?) -> SettingsError? {
        guard let sizeLimit, size > sizeLimit else { return nil }
        return SettingsError(.unstorable, key: self, detail: "the value holds more than \(sizeLimit) bytes, the largest settings file this store reads (PersistenceOptions.maximumFileSize)")
    }

    /// The path for messages: shortened to its start and end when very long, so that an error
    /// about a 20,000-component key stays one readable line.
    var abbreviatedPath: String { Self.abbreviate(path, components: components.count) }

    static func abbreviate(_ text: String, components: Int? = nil) -> String {
        guard text.utf8.count > 160 else { return text }
        let count = components.map { ", \($0) components" } ?? ""
        return "\(text.prefix(80))…\(text.suffix(40)) (\(text.utf8.count) bytes\(count))"
    }
}

extension PlistDictionary {
    /// The error for holding this dictionary as a whole layer (registered defaults, overrides
    /// from code), or `nil` when a reader can read it back.
    func nestingRefusal() -> SettingsError? {
        guard let path = PlistNesting.firstPathTooDeep(in: .dictionary(self), enclosingDepth: 0) else { return nil }
        return SettingsError(.unstorable, key: SettingsKey(components: path), detail: "nested deeper than the \(PlistNesting.maximumDepth) levels readers accept")
    }
}
