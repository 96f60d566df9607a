#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// A `DOMAIN` argument: a file, or an application name resolved as the Settings library resolves
/// its shared store (`$XDG_CONFIG_HOME/<name>/settings.plist`, `~/.config` when unset).
///
/// An argument is a file when it contains a `/`, ends in `.plist`, `.bplist` or `.json`, or
/// names an existing file; anything else is an application name.
struct Domain {
    let argument: String
    let path: String
    /// Whether the domain was named by application (its file and directories are owner-only).
    let isApplication: Bool

    init(_ argument: String) throws(CLIError) {
        guard !argument.isEmpty else { throw .usage("DOMAIN must not be empty") }
        self.argument = argument
        if Self.isFileArgument(argument) {
            try Self.checkFile(argument)
            path = argument
            isApplication = false
        } else {
            guard argument != "." && argument != ".." else {
                throw .usage("DOMAIN '\(argument)' is not an application name (its file would be outside \(Self.configDirectory())/NAME/); name a file as ./FILE.plist")
            }
            path = SettingsLocations.userFile(application: argument, environment: SettingsLocations.processEnvironment)
            isApplication = true
        }
    }

    /// A domain named by its file (`path`), for the `plutil`-style verbs.
    private init(managedFile path: String, isApplication: Bool) {
        argument = path
        self.path = path
        self.isApplication = isApplication
    }

    /// The domain whose file `file` is, when the Settings library manages it: an application's
    /// settings file (`$XDG_CONFIG_HOME/NAME/settings.plist`), or any file with the library's
    /// lock file or companion directory beside it. The `plutil`-style verbs change such a file
    /// only through ``edit(creating:origin:format:_:)``: locked, checked, kept in history.
    ///
    /// - Parameter file: a FILE argument (`-` is standard input or output: never a domain).
    /// - Returns: the domain, or `nil` for a file the library does not manage.
    static func managing(file: String) -> Domain? {
        guard file != "-", !file.isEmpty else { return nil }
        let target = (try? PlistFile.target(of: file).path) ?? file
        var s = stat()
        let isApplication = PlistFile.name(of: target) == "settings.plist"
            && canonical(PlistFile.directory(of: PlistFile.directory(of: target))) == canonical(configDirectory())
        guard isApplication
            || lstat(PlistFile.lockPath(for: target), &s) == 0
            || lstat(PlistFile.companionDirectory(for: target), &s) == 0 else { return nil }
        return Domain(managedFile: file, isApplication: isApplication)
    }

    /// `path` with links and `.`/`..` resolved, when it exists.
    private static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Refuses a `DOMAIN` with a `/` that cannot name a file: one ending in `/`, `.` or `..`.
    /// (Any other path that is a directory fails when it is read, as every command that reads a
    /// file says: "cannot read file: it is a directory, not a file".)
    private static func checkFile(_ argument: String) throws(CLIError) {
        let last = argument.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard !last.isEmpty, last != ".", last != ".." else {
            throw .usage("DOMAIN '\(argument)' is a directory, not a settings file or an application name")
        }
    }

    static func isFileArgument(_ argument: String) -> Bool {
        if argument.contains("/") { return true }
        for suffix in [".plist", ".bplist", ".json"] where argument.hasSuffix(suffix) { return true }
        var s = stat()
        return stat(argument, &s) == 0 && (s.st_mode & S_IFMT) == S_IFREG
    }

    /// Where application domains live (``SettingsLocations/userConfigDirectory(environment:)``).
    static func configDirectory() -> String {
        SettingsLocations.userConfigDirectory(environment: SettingsLocations.processEnvironment)
    }

    /// The domain's dictionary, or `nil` when its file does not exist. A file that cannot be
    /// read or parsed, or whose root is not a dictionary, is an error naming it.
    func existingContents() throws(CLIError) -> PlistDictionary? {
        try existingContents(at: path)
    }

    /// The dictionary of the domain's file at `file` (its path after the link rule).
    private func existingContents(at file: String) throws(CLIError) -> PlistDictionary? {
        if case .missing = try Files.status(file) { return nil }
        return try Self.dictionary(Input(file: file, named: path).value, path: path)
    }

    /// The domain's dictionary; a domain that does not exist is an error saying so.
    func contents() throws(CLIError) -> PlistDictionary {
        guard let contents = try existingContents() else { throw missing }
        return contents
    }

    /// The error for a domain whose file does not exist: for a file argument, the one every
    /// command that reads a file gives (`print`, `lint`: "cannot read file: no such file").
    var missing: CLIError {
        if !isApplication {
            do { _ = try Files.read(path) } catch { return error }
        }
        return .failure("\(path): domain '\(argument)' does not exist")
    }

    /// The error for a key path with no value in `contents`, with a suggestion when one is near
    /// ("did you mean 'Network/timeout'?", or the dotted form that would have matched).
    func noValue(_ key: KeyPath, in contents: PlistDictionary) -> CLIError {
        .failure("\(path): no value for key '\(key.path)'"
                 + KeySuggestion.hint(for: key.path, components: key.components, in: .dictionary(contents), separator: "/"))
    }

    /// The defaults a program registered from the file at `path` (recorded in its layers
    /// manifest): the file's dictionary, or, for a Settings.bundle pane (`Root.plist`), the
    /// defaults it and its child panes give, read as the library reads them (``SettingsPanes``).
    static func registeredDefaults(at path: String) throws(CLIError) -> PlistDictionary {
        let root = try dictionary(Input(file: path).value, path: path)
        guard SettingsPanes.isPane(root) else { return root }
        return SettingsPanes.defaults(of: try settingsPanes(root, at: path))
    }

    /// Every entry of the Settings.bundle pane `root` (read from `path`) and of the child panes
    /// it names, in pane order, read as the library reads them (``SettingsPanes``).
    static func settingsPanes(_ root: PlistDictionary, at path: String) throws(CLIError) -> [SettingsPanes.Entry] {
        try SettingsPanes.entries(
            ofRoot: root, at: path,
            reading: { (child, _, _) throws(CLIError) in try dictionary(Input(file: child).value, path: child) },
            failure: { path, detail, namedBy in
                .failure("\(path): \(detail)" + (namedBy.map { " (child pane '\($0.file)' of \($0.parent))" } ?? ""))
            })
    }

    static func dictionary(_ value: PlistValue, path: String) throws(CLIError) -> PlistDictionary {
        guard case .dictionary(let dictionary) = value else {
            throw .failure("\(path): the root is \(value.kindWithArticle), expected a dictionary")
        }
        return dictionary
    }

    /// Changes the domain's file as the Settings library saves one: one
    /// ``SettingsFileTransaction`` (the change every writer of a settings file makes). Under the
    /// library's advisory lock, `body` edits the file's current contents, the change is checked
    /// against the schema the program wrote beside the file, recorded in the file's history and
    /// provenance, and the result replaces the file atomically and durably, keeping its format,
    /// permissions and owner. A running program that uses the domain sees the change (it
    /// reloads the file and announces the changed keys).
    ///
    /// A file that cannot be read or does not parse is refused with one line naming it (and the
    /// line and column): it is left exactly where and as it is. Nothing is written when `body`
    /// changes nothing (and `format` does not change the file's format). A change that would
    /// discard contents no generation holds is refused when that generation cannot be kept
    /// (``PlistRecorder/refusesUnkeptDiscard``).
    ///
    /// - Parameters:
    ///   - creating: whether a missing file is created (`write`, `import`); otherwise a missing
    ///     domain is an error.
    ///   - origin: what the file's history and provenance record as the writer.
    ///   - format: the format to write (`create`, `convert`); `nil` keeps the file's own.
    func edit(creating: Bool, origin: SettingsProvenance.Origin = .tool, format: PlistFormat? = nil,
              _ body: (inout PlistDictionary) throws(CLIError) -> Void) throws(CLIError) {
        // The file a link leads to is edited only when the link rule allows it (the link is
        // the user's own), and the file is refused unless it is a property list: a planted
        // link never makes the tool replace a file that is not one.
        let target = try Files.target(of: path).path
        // Refuse a malformed or unreadable file (or one in another syntax) before anything else
        // touches the directory.
        let before = try existingContents(at: target)
        if before == nil && !creating { throw missing }
        // The companion directory (history, schema, the program's manifest): another user's is
        // ignored, with one warning, and never stops the user's own edit.
        let companion = Companion(beside: target, path: path)
        // The schema the application wrote beside the file, if any: a change must fit it.
        let schema = companion.isUsable ? try SchemaFile.beside(target) : nil
        let manifest = companion.isUsable ? try? PlistLayersManifest.read(beside: target) : nil
        var options = SettingsFileTransaction.Options()
        options.lockWait = .upTo(.seconds(2))
        // A lock file left beside a file that is not a domain would litter the user's folder;
        // in a directory that is not the user's, a plain file is edited without one.
        options.removesCreatedLockFile = !isApplication
        options.lockOptionalWhereNotOwned = !isApplication
        options.format = format
        // History keeps what the program asked for (its layers.plist; a limit of 0 keeps nothing
        // and removes what was kept).
        var recorder: PlistRecorder? = keepsHistory(companion)
            ? PlistRecorder(limits: manifest?.historyLimits ?? PlistHistory.Limits(), refusesUnkeptDiscard: true) : nil
        var refusal: CLIError?
        let outcome: SettingsFileTransaction.Outcome
        do throws(SettingsFileTransaction.Failure) {
            outcome = try SettingsFileTransaction.run(
                at: path, options: options, known: nil, recorder: &recorder,
                check: { (old, new) throws(SettingsFileTransaction.Failure) in
                    do throws(CLIError) {
                        try refuseLockedChange(from: old ?? PlistDictionary(), to: new)  // the administrator's locks: PlistLocks decides
                        try schema?.checkChange(from: old ?? PlistDictionary(), to: new, file: path, renames: manifest?.renames ?? [])
                    } catch {
                        refusal = error
                        throw SettingsFileTransaction.Failure(.refused, target, "\(error)")
                    }
                }
            ) { (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
                let existed = current.contents != nil
                var dictionary = current.contents ?? PlistDictionary()
                let original = dictionary
                do throws(CLIError) {
                    guard existed || creating else { throw missing }
                    try body(&dictionary)
                } catch {
                    refusal = error
                    throw SettingsFileTransaction.Failure(.refused, target, "\(error)")
                }
                let reformats = existed && format != nil && format != current.format
                guard dictionary != original || !existed || reformats else { return nil }
                return .init(contents: dictionary, changed: dictionary.changedLeaves(from: original),
                             writer: SettingsProvenance.thisProcess(origin))
            }
        } catch {
            if let refusal { throw refusal }
            if case .malformed(_, let problem) = error.kind { throw .failure(problem.inFile(path).description) }
            throw .failure("\(path): \(error.detail)")
        }
        guard case .written(let written) = outcome else { return }
        if let reason = written.fellBackToBinary {
            Console.error(SettingsFileTransaction.binaryFallbackMessage(path, reason))
        }
        if let problem = written.historyProblem {
            Console.error("warning: \(path): \(problem); the change is made")
        }
    }

    /// The companion directory (``PlistFile/companionDirectory(for:)``) beside a domain's file,
    /// as an edit may use it.
    enum Companion {
        /// There is none yet.
        case missing
        /// It exists and is this user's own, closed to others.
        case usable
        /// It exists but is not safe to use (another user's, a link, open to others): it is
        /// ignored for this edit (no history, schema or manifest read or written there).
        case foreign

        /// Looks at the companion directory of `target`; a foreign one is reported once on
        /// standard error, saying what is done without it (`without`).
        init(beside target: String, path: String, without: String = "this edit keeps no history there and uses no schema from it") {
            do {
                self = try PlistFile.existingCompanionDirectory(for: target) == nil ? .missing : .usable
            } catch {
                Console.error("warning: \(path): \(error.operation); ignored: \(without)")
                self = .foreign
            }
        }

        var isUsable: Bool {
            if case .usable = self { true } else { false }
        }
    }
}
