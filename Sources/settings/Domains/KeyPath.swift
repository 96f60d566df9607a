#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// A `KEY` argument: `Root/Sub/Key` key paths, `\/` for a slash and `\\` for a backslash inside a key.
struct KeyPath {
    let components: [String]

    init(_ text: String) throws(CLIError) {
        guard !text.isEmpty else { throw .usage("KEY must not be empty") }
        self.components = EscapedPath.split(text, separator: "/")
        try Self.checkDepth(components.count)
    }

    /// Refuses a key path that no file can hold: each component is a dictionary level, and
    /// readers accept at most ``PlistNesting/maximumDepth`` of them (so does every write).
    static func checkDepth(_ count: Int) throws(CLIError) {
        guard count <= PlistNesting.maximumDepth else {
            throw .failure("the key path has \(count) components, but property lists nest at most \(PlistNesting.maximumDepth) levels; no file can hold it")
        }
    }

    init(components: [String]) { self.components = components }

    /// The canonical text: components joined by `/`, with `/` and `\` escaped.
    var path: String {
        components.map { EscapedPath.escape($0, separator: "/") }.joined(separator: "/")
    }
}
