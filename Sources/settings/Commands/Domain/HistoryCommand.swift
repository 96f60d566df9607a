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
