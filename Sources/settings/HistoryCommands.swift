#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings history DOMAIN`: the saved versions of a domain's file.
enum HistoryCommand: Command {
    static let name = "history"
    static let summary = "list the saved versions (generations) of a domain"
    static let usage = """
        usage: settings history DOMAIN
               settings history --purge DOMAIN

        Lists the generations kept of the domain's file, oldest first: number, who saved it and
        when, and the keys that save changed. Programs using the Settings library keep one at each
        save (20 by default), and every change made with this tool keeps one too, as many as the
        program keeps (it says so in layers.plist beside the file).
        'settings restore DOMAIN GENERATION' brings one back.
        Generations are whole copies of the file, secrets included (a rotated token stays in
        the generations saved before): --purge removes every generation of the domain, under
        the library's lock (the file itself is not changed).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let purge = arguments.contains("--purge")
        let positional = try plainArguments(arguments.filter { $0 != "--purge" }, command: name)
        guard positional.count == 1 else { throw .usage("history: expected DOMAIN") }
        let domain = try Domain(positional[0])
        let target = try Files.target(of: domain.path).path
        if purge { return try Self.purge(domain, target: target) }
        let generations: [PlistGeneration]
        do {
            generations = try PlistHistory.summaries(for: target)
        } catch {
            throw .failure("\(domain.path): cannot read its history: \(error)")
        }
        guard !generations.isEmpty else {
            if try domain.existingContents() == nil { throw domain.missing }
            Console.print("\(domain.path): no history kept yet")
            return
        }
        for generation in generations {
            let keys = generation.changed.map { KeyPath(components: $0).path }
            let shown = keys.count > 8 ? keys.prefix(8).joined(separator: ", ") + ", … (\(keys.count) keys)" : keys.joined(separator: ", ")
            let line = "\(generation.number)\t\(generation.writer.summary.escapingControlCharacters)\t\(shown.isEmpty ? "(no keys)" : shown.escapingControlCharacters)"
            Console.print(line)
        }
    }

    /// `--purge`: removes every generation of the domain, under its lock.
    static func purge(_ domain: Domain, target: String) throws(CLIError) {
        let count: Int
        do {
            count = try PlistHistory.summaries(for: target).count  // counted without reading every kept file whole
        } catch {
            throw .failure("\(domain.path): cannot read its history: \(error)")
        }
        guard count > 0 else {
            if try domain.existingContents() == nil { throw domain.missing }
            Console.print("\(domain.path): no history kept")
            return
        }
        let lock = try Files.lock(for: target, path: domain.path, isApplication: domain.isApplication)
        defer { Files.unlock(lock, isApplication: domain.isApplication) }
        PlistHistory.removeAll(for: target)
        Console.print("\(domain.path): removed \(count) generation\(count == 1 ? "" : "s")")
    }
}

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
        try domain.edit(creating: true, origin: .restore) { contents throws(CLIError) in
            guard !keys.isEmpty else {
                contents = kept
                return
            }
            for key in keys { try contents.setValue(kept.value(at: key), at: key) }
        }
    }
}

/// `settings reset DOMAIN`: removes every user value, after keeping a generation.
enum ResetCommand: Command {
    static let name = "reset"
    static let summary = "remove every value of a domain, keeping it in history"
    static let usage = """
        usage: settings reset DOMAIN

        Removes every value of the domain (the file stays, empty), after keeping its current
        contents as a generation: 'settings restore DOMAIN GENERATION' brings them back.
        Exits 1 when the domain does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 1 else { throw .usage("reset: expected DOMAIN") }
        try Domain(positional[0]).edit(creating: false) { contents in contents = PlistDictionary() }
    }
}

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
