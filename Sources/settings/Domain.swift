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

    static func dictionary(_ value: PlistValue, path: String) throws(CLIError) -> PlistDictionary {
        guard case .dictionary(let dictionary) = value else {
            throw .failure("\(path): the root is \(value.typeNameWithArticle), expected a dictionary")
        }
        return dictionary
    }

    /// Changes the domain's file as the Settings library saves one: under the library's advisory
    /// lock, `body` edits the file's current contents, and the result replaces the file
    /// atomically and durably, keeping its format, permissions and owner. A running program that
    /// uses the domain sees the change (it reloads the file and announces the changed keys).
    ///
    /// A file that cannot be read or does not parse is refused with one line naming it (and the
    /// line and column): it is left exactly where and as it is. Nothing is written when `body`
    /// changes nothing (and `format` does not change the file's format). A change that would
    /// discard contents no generation holds is refused when that generation cannot be kept
    /// (``keepHistory(target:original:result:bytes:origin:companion:limits:)``).
    ///
    /// - Parameters:
    ///   - creating: whether a missing file is created (`write`, `import`); otherwise a missing
    ///     domain is an error.
    ///   - origin: what the file's history and provenance record as the writer (HistoryCommands.swift).
    ///   - format: the format to write (`create`, `convert`); `nil` keeps the file's own.
    func edit(creating: Bool, origin: PlistProvenance.Origin = .tool, format: PlistFormat? = nil,
              _ body: (inout PlistDictionary) throws(CLIError) -> Void) throws(CLIError) {
        // The file a link leads to is edited only when the link rule allows it (the link is
        // the user's own), and the file is refused unless it is a property list: a planted
        // link never makes the tool replace a file that is not one.
        let target = try Files.target(of: path).path
        // Refuse a malformed or unreadable file before anything else touches the directory.
        let before = try existingContents(at: target)
        if before == nil && !creating { throw missing }
        // The companion directory (history, schema, the program's manifest): another user's is
        // ignored, with one warning, and never stops the user's own edit.
        let companion = Companion(beside: target, path: path)
        // The schema the application wrote beside the file, if any: a change must fit it.
        let schema = companion.isUsable ? try SchemaFile.beside(target) : nil
        let manifest = companion.isUsable ? try? PlistLayersManifest.read(beside: target) : nil
        if before == nil { try Files.createDirectories(for: target) }
        let lock = try Files.lock(for: target, path: path, isApplication: isApplication)
        defer { Files.unlock(lock, isApplication: isApplication) }
        // Read again under the lock: another writer may have changed it meanwhile.
        var syntax = InputSyntax.xml
        var dictionary = PlistDictionary()
        var existed = false
        if case .missing = try Files.status(target) {
            guard creating else { throw missing }
        } else {
            let input = try Input(file: target, named: path)
            guard input.syntax.isPropertyListFile else {
                throw .failure("\(path): it is \(input.syntax.name), not a property list; convert it first (settings convert xml1 \(path))")
            }
            syntax = input.syntax
            dictionary = try Self.dictionary(input.value, path: path)
            existed = true
        }
        let original = dictionary
        try body(&dictionary)
        let wanted: PlistFormat = format ?? (syntax == .binary ? .binary : .xml)
        let reformats = existed && wanted != (syntax == .binary ? .binary : .xml)
        guard dictionary != original || !existed || reformats else { return }
        try refuseLockedChange(from: original, to: dictionary)  // hook (locks): PlistLocks decides
        try schema?.checkChange(from: original, to: dictionary, file: path, renames: manifest?.renames ?? [])
        var bytes: [UInt8]
        do {
            bytes = try PlistValue.dictionary(dictionary).encodedBytes(as: wanted)
        } catch {
            guard wanted == .xml else { throw .failure(error.inFile(path).description) }
            do {
                bytes = try PlistValue.dictionary(dictionary).encodedBytes(as: .binary)
                Console.error("\(path): saved as a binary property list, because XML cannot carry a value in it (\(error.message))")
            } catch {
                throw .failure(error.inFile(path).description)
            }
        }
        try keepHistory(target: target, original: existed ? original : nil, result: dictionary, bytes: bytes, origin: origin,
                        companion: companion, limits: manifest?.historyLimits ?? PlistHistory.Limits())
        try Files.replace(target, with: bytes, new: .ownerOnly)
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

extension PlistDictionary {
    /// The value at a key path.
    func value(at key: KeyPath) -> PlistValue? {
        var current: PlistValue = .dictionary(self)
        for component in key.components {
            guard case .dictionary(let dict) = current, let next = dict[component] else { return nil }
            current = next
        }
        return current
    }

    /// Sets (or with `nil` removes) the value at a key path, creating dictionaries on the way.
    /// A value in the way that is not a dictionary is an error naming it.
    mutating func setValue(_ value: PlistValue?, at key: KeyPath) throws(CLIError) {
        try setValue(value, at: key.components[...], prefix: [])
    }

    private mutating func setValue(_ value: PlistValue?, at components: ArraySlice<String>, prefix: [String]) throws(CLIError) {
        guard let first = components.first else { return }
        let rest = components.dropFirst()
        if rest.isEmpty {
            _ = replaceValue(value, forKey: first)
            return
        }
        var child: PlistDictionary
        switch self[first] {
        case .dictionary(let existing)?: child = existing
        case nil:
            guard value != nil else { return }
            child = PlistDictionary()
        case let other?:
            let at = KeyPath(components: prefix + [first]).path
            throw .failure("key '\(at)' holds \(other.typeNameWithArticle), not a dictionary")
        }
        try child.setValue(value, at: rest, prefix: prefix + [first])
        _ = replaceValue(.dictionary(child), forKey: first)
    }

    /// Every leaf key path, depth first, in file order (an empty dictionary is a leaf).
    func leafPaths(prefix: [String] = []) -> [(KeyPath, PlistValue)] {
        var out: [(KeyPath, PlistValue)] = []
        for (key, value) in self {
            let path = prefix + [key]
            if case .dictionary(let child) = value, !child.isEmpty {
                out += child.leafPaths(prefix: path)
            } else {
                out.append((KeyPath(components: path), value))
            }
        }
        return out
    }
}
