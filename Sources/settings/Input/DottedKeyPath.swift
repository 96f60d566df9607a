#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// A `plutil` key path: dictionary keys and array indexes separated by `.` (`\.` for a dot
/// inside a key, `\\` for a backslash).
struct DottedKeyPath {
    let text: String
    let components: [String]

    init(_ text: String) {
        self.text = text
        self.components = EscapedPath.split(text, separator: ".")
    }

    /// How a value is put at the key path.
    enum Edit {
        /// `-insert`: the key must not exist yet (an array index inserts before it; the count appends).
        case insert
        /// `-insert ... -append`: appended to the array at the key path.
        case append
        /// `-replace`: set, whether or not the key exists (an array index must exist).
        case replace
        /// `-remove`.
        case remove
    }

    /// The value at the key path, or an error naming the first component not found (with a
    /// suggestion, see ``KeySuggestion``).
    func value(in root: PlistValue) throws(CLIError) -> PlistValue {
        guard let value = KeySuggestion.value(at: components, in: root) else {
            var found = 0
            while found < components.count, KeySuggestion.value(at: Array(components[...found]), in: root) != nil { found += 1 }
            throw notFound(upTo: min(found, components.count - 1), in: root)
        }
        return value
    }

    func notFound(upTo i: Int, in root: PlistValue? = nil) -> CLIError {
        // An index past an array's end says so, with the array's count (`tags.9` of 2 elements).
        if let root, let index = Int(components[i]),
           case .array(let items)? = i == 0 ? root : KeySuggestion.value(at: Array(components[..<i]), in: root) {
            let array = i == 0 ? "the top-level array" : "the array at '\(components[..<i].joined(separator: "."))'"
            return .failure("no value at key path '\(text)' (index \(index) is out of bounds: \(array) has \(items.count) element\(items.count == 1 ? "" : "s"))")
        }
        let hint = root.map { KeySuggestion.hint(for: text, components: components, in: $0, separator: ".") } ?? ""
        return .failure("no value at key path '\(text)' ('\(components[...i].joined(separator: "."))' not found)\(hint)")
    }

    /// Applies `edit` with `value` to `root`. Containers on the way must exist.
    func apply(_ edit: Edit, _ value: PlistValue?, to root: inout PlistValue) throws(CLIError) {
        let before = root
        do {
            try apply(edit, value, to: &root, at: 0)
        } catch {
            // A component not found: say so with a suggestion, from the document as it was.
            if error.message.hasPrefix("no value at key path"), let i = (0..<components.count).first(where: {
                KeySuggestion.value(at: Array(components[...$0]), in: before) == nil
            }) {
                throw notFound(upTo: i, in: before)
            }
            throw error
        }
    }

    private func apply(_ edit: Edit, _ value: PlistValue?, to node: inout PlistValue, at i: Int) throws(CLIError) {
        let component = components[i]
        let isLast = i == components.count - 1
        switch node {
        case .dictionary(var dict):
            if isLast && edit != .append {
                switch edit {
                case .insert:
                    guard dict[component] == nil else {
                        throw .failure("a value already exists at key path '\(text)' (use -replace)")
                    }
                    _ = dict.replaceValue(value, forKey: component)
                case .replace:
                    _ = dict.replaceValue(value, forKey: component)
                default:
                    guard dict.removeValue(forKey: component) != nil else { throw notFound(upTo: i) }
                }
            } else {
                guard var child = dict[component] else { throw notFound(upTo: i) }
                if isLast {
                    guard case .array(var items) = child, let value else {
                        throw .failure("-append: the value at key path '\(text)' is \(child.kindWithArticle), not an array")
                    }
                    items.append(value)
                    child = .array(items)
                } else {
                    try apply(edit, value, to: &child, at: i + 1)
                }
                _ = dict.replaceValue(child, forKey: component)
            }
            node = .dictionary(dict)
        case .array(var items):
            guard let index = Int(component), index >= 0 else { throw notFound(upTo: i) }
            if isLast && edit != .append {
                switch edit {
                case .insert:
                    guard index <= items.count, let value else { throw notFound(upTo: i) }
                    items.insert(value, at: index)
                case .replace:
                    guard let value, index <= items.count else { throw notFound(upTo: i) }
                    if index == items.count { items.append(value) } else { items[index] = value }
                default:
                    guard index < items.count else { throw notFound(upTo: i) }
                    items.remove(at: index)
                }
            } else {
                guard index < items.count else { throw notFound(upTo: i) }
                var child = items[index]
                if isLast {
                    guard case .array(var inner) = child, let value else {
                        throw .failure("-append: the value at key path '\(text)' is \(child.kindWithArticle), not an array")
                    }
                    inner.append(value)
                    child = .array(inner)
                } else {
                    try apply(edit, value, to: &child, at: i + 1)
                }
                items[index] = child
            }
            node = .array(items)
        default:
            throw .failure("key path '\(text)': '\(components[..<i].joined(separator: "."))' is \(node.kindWithArticle), not a dictionary or array")
        }
    }
}
