/// The one nesting limit shared by the readers and the writers: a writer never produces a file
/// that a reader here (or CoreFoundation) refuses as too deep.
///
/// Depth counts arrays and dictionaries, the top container being 1, empty containers included:
/// `["a": ["b": [:]]]` is 3 deep. The XML and binary readers refuse more than
/// ``maximumDepth`` (CoreFoundation's limit, and `PlistReadOptions().maximumDepth`), so the
/// writers refuse it too, naming the path to the first container too deep, and so do the settings
/// store and the `settings` tool before they change anything.
package enum PlistNesting {
    /// The deepest nesting of containers every reader accepts by default: 512.
    package static let maximumDepth = 512

    /// The error for a container nested deeper than ``maximumDepth`` at `path` (the keys and
    /// array positions leading to it).
    static func tooDeep(_ path: [PlistCodingKey]) -> PlistError {
        PlistError(
            .tooDeep, "arrays and dictionaries nested deeper than \(maximumDepth), which no reader accepts",
            codingPath: render(path))
    }

    /// `path` as a coding path; a long one is shortened to its first and last keys, with its
    /// length, so that an error about a 20,000-level value stays one readable line.
    static func render(_ path: [PlistCodingKey]) -> String {
        guard path.count > 8 else { return CodingPathText.render(path) }
        let head = CodingPathText.render(Array(path.prefix(3)))
        let tail = CodingPathText.render(Array(path.suffix(2)))
        return "\(head)…\(tail.hasPrefix("[") ? "" : ".")\(tail) (\(path.count) levels)"
    }

    /// The path to the first container of `value` nested deeper than `limit` when `value` itself
    /// sits inside `enclosingDepth` containers, or `nil` when every container fits. Walks with
    /// an explicit stack (no recursion on the value's depth) and stops at the first hit.
    ///
    /// - Parameters:
    ///   - value: the value to check.
    ///   - enclosingDepth: how many containers hold `value` (a settings key of three components
    ///     puts its value inside three dictionaries: the file's top one and two namespaces).
    ///   - limit: the deepest nesting allowed.
    /// - Returns: the keys and positions from `value` to the first container too deep.
    package static func firstPathTooDeep(
        in value: PlistValue, enclosingDepth: Int, limit: Int = maximumDepth
    ) -> [String]? {
        guard value.isContainer else { return nil }
        if enclosingDepth + 1 > limit { return [] }
        // Each frame: a container's children and the next one to visit; the frame's depth is its
        // index + enclosingDepth + 1.
        var stack: [(keys: [String]?, values: [PlistValue], next: Int)] = []
        func frame(_ v: PlistValue) -> (keys: [String]?, values: [PlistValue], next: Int) {
            switch v {
            case .array(let a): (nil, a, 0)
            case .dictionary(let d): (d.keys, d.values, 0)
            default: (nil, [], 0)
            }
        }
        stack.append(frame(value))
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].values.count else {
                stack.removeLast()
                continue
            }
            stack[top].next = index + 1
            let child = stack[top].values[index]
            guard child.isContainer else { continue }
            if enclosingDepth + stack.count + 1 > limit {
                return stack.map { f in
                    let i = f.next - 1
                    return f.keys.map { $0[i] } ?? "[\(i)]"
                }
            }
            stack.append(frame(child))
        }
        return nil
    }
}

extension PlistValue {
    /// Whether this is an array or a dictionary.
    package var isContainer: Bool {
        switch self {
        case .array, .dictionary: true
        default: false
        }
    }
}

extension PlistValue {
    /// A lower bound of the size of any file holding this value: the bytes of every string, key
    /// and data, counted once per occurrence. XML writes each occurrence in full, and the binary
    /// writer shares repeated values only while the reader's expansion limit allows, so a value
    /// above a file-size limit here cannot be read back from a file under it. Walks with an
    /// explicit stack and stops counting once past `limit`.
    ///
    /// - Parameter limit: counting stops above this (the result is then some size above it).
    /// - Returns: the byte count, or a number above `limit`.
    package func payloadSize(stoppingAbove limit: Int) -> Int {
        var total = 0
        var pending: [PlistValue] = [self]
        while let value = pending.popLast(), total <= limit {
            switch value {
            case .string(let s): total &+= s.utf8.count
            case .data(let d): total &+= d.count
            case .array(let a): pending.append(contentsOf: a)
            case .dictionary(let d):
                for key in d.keys { total &+= key.utf8.count }
                pending.append(contentsOf: d.values)
            default: total &+= 1
            }
        }
        return total
    }
}
