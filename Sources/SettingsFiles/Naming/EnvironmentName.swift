import SettingsPlist
/// How an environment variable's name spells a key path, shared by the `Settings` library (which
/// reads `PREFIX_KEY=value` variables) and the `settings` tool (which shows them in `explain`).
package enum EnvironmentName {
    /// `A__B__C` -> `["A", "B", "C"]` (`__` found left to right; `A___B` is `A` / `_B`).
    package static func components(_ name: Substring) -> [String] {
        var parts: [String] = []
        var current = ""
        var scalars = Array(name.unicodeScalars)[...]
        while let c = scalars.first {
            if c == "_", scalars.dropFirst().first == "_" {
                parts.append(current)
                current = ""
                scalars = scalars.dropFirst(2)
            } else {
                current.unicodeScalars.append(c)
                scalars = scalars.dropFirst()
            }
        }
        parts.append(current)
        return parts
    }

    /// A name compared loosely: letters and digits only, lowercased (`AUTO_PLAY` and `autoPlay`
    /// are the same).
    package static func loose(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != "." })
    }
}
