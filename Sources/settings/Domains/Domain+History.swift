#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

extension Domain {
    /// Whether edits keep history and provenance: always for an application's domain, and for a
    /// plain file only when a program already keeps them beside it (nothing is created beside a
    /// file in the user's project). Never in a companion directory that is not the user's.
    func keepsHistory(_ companion: Companion) -> Bool {
        switch companion {
        case .usable: true
        case .missing: isApplication
        case .foreign: false
        }
    }
}
