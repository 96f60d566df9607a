/// Key paths written as text: components between separators, a backslash escaping the next
/// character (`\/` or `\.` for a separator inside a component, `\\` for a backslash). Shared by
/// `SettingsKey` (`/`), the `settings` tool's `KEY` arguments (`/`) and `plutil`'s dotted paths (`.`).
package enum EscapedPath {
    /// The components of `text`; empty components are kept, a trailing lone backslash is literal.
    package static func split(_ text: String, separator: Character) -> [String] {
        var components: [String] = []
        var current = ""
        var escaping = false
        for ch in text {
            if escaping {
                current.append(ch)
                escaping = false
            } else if ch == "\\" {
                escaping = true
            } else if ch == separator {
                components.append(current)
                current = ""
            } else {
                current.append(ch)
            }
        }
        if escaping { current.append("\\") }
        components.append(current)
        return components
    }

    /// `component` written so that ``split(_:separator:)`` reads it back as one component.
    package static func escape(_ component: String, separator: Character) -> String {
        guard component.contains(where: { $0 == separator || $0 == "\\" }) else { return component }
        var out = ""
        for ch in component {
            if ch == separator || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }
}
