#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

extension PlistDictionary {
    /// The value at a key path.
    func value(at key: KeyPath) -> PlistValue? {
        value(at: key.components)
    }

    /// Sets (or with `nil` removes) the value at a key path, creating dictionaries on the way.
    /// A value in the way that is not a dictionary is an error naming it.
    mutating func setValue(_ value: PlistValue?, at key: KeyPath) throws(CLIError) {
        if value != nil, let (prefix, other) = firstNonDictionary(on: key.components) {
            throw .failure("key '\(KeyPath(components: prefix).path)' holds \(other.kindWithArticle), not a dictionary")
        }
        setValue(value, at: key.components[...])
    }

    /// Every leaf key path, depth first, in file order (an empty dictionary is a leaf).
    func leafPaths(prefix: [String] = []) -> [(KeyPath, PlistValue)] {
        var out: [(KeyPath, PlistValue)] = []
        // A stack of dictionaries being walked, each with its path and the next entry to visit:
        // no recursion on the file's depth.
        var stack: [(path: [String], entries: [(String, PlistValue)], next: Int)] = [(prefix, Array(self), 0)]
        while let top = stack.last {
            guard top.next < top.entries.count else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let (key, value) = top.entries[top.next]
            let path = top.path + [key]
            if case .dictionary(let child) = value, !child.isEmpty {
                stack.append((path, Array(child), 0))
            } else {
                out.append((KeyPath(components: path), value))
            }
        }
        return out
    }
}
