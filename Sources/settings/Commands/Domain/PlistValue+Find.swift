#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

extension PlistValue {
    /// Whether a key or a scalar's text anywhere in this value contains `word` (lower-cased).
    func contains(_ word: String) -> Bool {
        switch self {
        case .dictionary(let dict):
            return dict.contains { $0.key.lowercased().contains(word) || $0.value.contains(word) }
        case .array(let items):
            return items.contains { $0.contains(word) }
        default:
            return displayText.lowercased().contains(word)
        }
    }
}
