#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// What the tool leaves for the end of the process to reclaim.
enum ProcessExit {
    /// Keeps `value` alive until the process exits. `convert` returns to `exit` right after its
    /// last file, and freeing a large decoded tree first (a release and a `free` per node) is
    /// about an eighth of a whole conversion; the kernel takes the pages back at once.
    static func keepUntilExit(_ value: PlistValue) {
        _ = Unmanaged.passRetained(Kept(value))
    }

    private final class Kept: Sendable {
        let value: PlistValue
        init(_ value: PlistValue) { self.value = value }
    }
}
