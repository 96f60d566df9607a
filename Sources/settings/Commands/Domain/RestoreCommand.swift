#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings restore DOMAIN GENERATION [KEY…]`: brings back a saved version, or some keys of it.
enum RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a domain, or some keys, from its history"
    static let usage = """
        usage: settings restore DOMAIN GENERATION [KEY...]

        Restores the domain's file to GENERATION (a number from 'settings history'), or only the
        KEYs given (key paths; a KEY the generation does not hold is removed). The file is changed
        under the library's lock like any write, a running program sees the change at once, and
        the restore is itself kept as a generation, so it can be undone.
        Exits 1 when the domain or the generation does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count >= 2 else { throw .usage("restore: expected DOMAIN GENERATION [KEY...]") }
        let domain = try Domain(positional[0])
        guard let number = Int(positional[1]), number > 0 else {
            throw .usage("restore: GENERATION must be a number from 'settings history' (got '\(positional[1])')")
        }
        let keys = try positional.dropFirst(2).map { text throws(CLIError) in try KeyPath(text) }
        try restore(number, keys: keys, of: domain)
    }

    /// Restores `domain`'s file to generation `number` of its history, or only `keys` of it
    /// (empty: the whole file), as one change (``Domain/edit(creating:origin:format:_:)``): the
    /// one restore of the tool, for this command (origin `restore`) and the editor's history
    /// pane (origin `tool`, as every change made on its screen).
    static func restore(_ number: Int, keys: [KeyPath] = [], of domain: Domain,
                        origin: SettingsProvenance.Origin = .restore) throws(CLIError) {
        let target = try Files.target(of: domain.path).path
        let kept: PlistDictionary
        do {
            guard let generation = try PlistHistory.generation(number, for: target) else {
                throw CLIError.failure("\(domain.path): generation \(number) is not kept in its history (see 'settings history \(domain.argument)')")
            }
            kept = try generation.contents()
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(domain.path): cannot read generation \(number): \(error)")
        }
        try domain.edit(creating: true, origin: origin) { contents throws(CLIError) in
            guard !keys.isEmpty else {
                contents = kept
                return
            }
            for key in keys { try contents.setValue(kept.value(at: key), at: key) }
        }
    }
}
