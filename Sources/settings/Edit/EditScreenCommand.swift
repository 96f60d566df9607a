#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings edit DOMAIN [--panes ROOT.plist]`: a full-screen settings editor built from what
/// the application wrote (its schema, its `Root.plist` panes), changing the file only through
/// ``Domain/edit(creating:origin:format:_:)``.
enum EditScreenCommand: Command {
    static let name = "edit"
    static let summary = "edit a domain's settings on a full screen in the terminal"
    static let usage = """
        usage: settings edit DOMAIN [--panes ROOT.plist]
               settings edit DOMAIN [--panes ROOT.plist] --print-screen

        Opens a settings screen for DOMAIN in the terminal, built from the schema the
        application wrote beside its file (titles, help, groups, types, ranges, choices,
        secrets) and its Settings.bundle Root.plist (and the child panes it names): the one
        given with --panes, else the one the program registered its defaults from; every
        other key of the file is shown too. Each change is applied at once, as
        'settings write' applies it (locked, checked against the schema, kept in history as one
        generation); there is nothing to save on quitting. A change made elsewhere while the
        screen is open appears on it.
        Keys: arrows or j/k move, Enter or Space edits or toggles, Esc cancels, r resets a key,
        R a page, / searches, c shows changed keys only, e explains a key, H shows the history
        with old and new values (Enter restores), ? lists the keys, q quits. Enter opens an
        array or dictionary as a page (a adds, d deletes, J/K move an element); a date is
        picked by its fields (left/right, up/down or digits) or typed in ISO 8601.
        With TERM=dumb, a numbered list and a prompt replace the screen; NO_COLOR turns off
        colors and highlighting. Exits 2 when standard input or output is not a terminal.
        --print-screen prints the first screen as text ($COLUMNS x $LINES, 80x24 when unset)
        and exits, without a terminal.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        var rest = arguments
        var panesPath: String?
        if let index = rest.firstIndex(of: "--panes") {
            guard index + 1 < rest.count else { throw .usage("edit: --panes takes a Root.plist file") }
            panesPath = rest[index + 1]
            rest.removeSubrange(index...(index + 1))
        }
        let printsScreen = rest.contains("--print-screen")
        let positional = try plainArguments(rest.filter { $0 != "--print-screen" }, command: name)
        guard positional.count == 1 else { throw .usage("edit: expected DOMAIN") }
        let domain = try Domain(positional[0])
        if printsScreen {
            var screen = try EditSession(domain: domain, panes: panesPath.map { (path) throws(CLIError) in try readPanes(path) }).screen
            let environment = SettingsLocations.processEnvironment
            screen.columns = environment("COLUMNS").flatMap { Int($0) }.map { max(20, min($0, 500)) } ?? 80
            screen.rows = environment("LINES").flatMap { Int($0) }.map { max(8, min($0, 500)) } ?? 24
            Console.print(screen.lines().map { String($0.text.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "\n"))
            return
        }
        guard Terminal.isInteractive else {
            throw .trouble("edit: standard input and output must be a terminal (use 'settings write' in scripts)")
        }
        var session = try EditSession(domain: domain, panes: panesPath.map { (path) throws(CLIError) in try readPanes(path) })
        let environment = SettingsLocations.processEnvironment
        if Terminal.isDumb(environment: environment("TERM")) {
            try session.prompt()
        } else {
            try session.fullScreen(color: (environment("NO_COLOR") ?? "").isEmpty)
        }
    }

    /// A `Root.plist` and the child panes it names, by their `File` (``Domain/settingsPanes(_:at:)``:
    /// `File.plist` beside the pane that names it; a name with a `/` is refused, so a pane cannot
    /// reach outside its bundle).
    static func readPanes(_ path: String) throws(CLIError) -> EditLayout.Panes {
        try panes(Domain.dictionary(Input(file: path).value, path: path), at: path)
    }

    /// The panes of `root`, the `Root.plist` read from `path` (see ``readPanes(_:)``).
    static func panes(_ root: PlistDictionary, at path: String) throws(CLIError) -> EditLayout.Panes {
        let entries = try Domain.settingsPanes(root, at: path)
        let byPane = Dictionary(grouping: entries, by: \.pane).mapValues { $0.map(\.specifier) }
        var children: [String: [PlistDictionary]] = [:]
        for entry in entries where entry.specifier["Type"]?.stringValue == SettingsPanes.childPaneType {
            guard let file = entry.specifier["File"]?.stringValue,
                  let child = PlistFile.childPane(named: file, inDirectory: PlistFile.directory(of: entry.pane)) else { continue }
            children[file] = byPane[child] ?? []
        }
        return EditLayout.Panes(root: byPane[path] ?? [], children: children)
    }
}

/// One `settings edit` session: the domain, what the program wrote beside it, and the screen.
struct EditSession {
    let domain: Domain
    let target: String
    let schema: PlistSchema?
    let panes: EditLayout.Panes?
    let manifest: PlistLayersManifest?
    var screen: EditScreen
    /// The file's identity when last read: a different one means it changed.
    var identity: PlistFile.Identity?
    /// The override and defaults files last read, kept until their identity changes.
    var layerFiles = EditFileCache()

    init(domain: Domain, panes: EditLayout.Panes?) throws(CLIError) {
        self.domain = domain
        target = try Files.target(of: domain.path).path
        let companion = Domain.Companion(beside: target, path: domain.path, without: "shown without the schema kept there")
        schema = companion.isUsable ? try SchemaFile.beside(target)?.schema : nil
        manifest = companion.isUsable ? try? PlistLayersManifest.read(beside: target) : nil
        // Without --panes: the Settings.bundle the program registered its defaults from, if any.
        if let panes {
            self.panes = panes
        } else {
            self.panes = try Self.registeredPanes(in: manifest)
        }
        screen = EditScreen(name: domain.argument, layout: EditLayout(), states: [])
        let (layout, states) = try load()
        screen = EditScreen(name: domain.argument, layout: layout, states: states)
    }

    /// The panes of the first Settings.bundle `Root.plist` among the defaults files the program
    /// recorded in its layers manifest (`nil` when there is none).
    static func registeredPanes(in manifest: PlistLayersManifest?) throws(CLIError) -> EditLayout.Panes? {
        for file in manifest?.defaultsFiles ?? [] {
            guard let root = try? Domain.dictionary(Input(file: file).value, path: file), SettingsPanes.isPane(root) else { continue }
            return try EditScreenCommand.panes(root, at: file)
        }
        return nil
    }

    /// The layout and states for the file as it is now.
    mutating func load() throws(CLIError) -> (EditLayout, [EditState]) {
        identity = try? PlistFile.identity(of: target)
        let contents = try domain.existingContents() ?? PlistDictionary()
        let layout = EditLayout.build(schema: schema, panes: panes, contents: contents)
        var overrides: [PlistDictionary] = [], defaults: [PlistDictionary] = []
        for file in manifest?.overrideFiles ?? [] {
            if let d = layerFiles.dictionary(at: file, { (file) throws(CLIError) in try Domain.dictionary(Input(file: file).value, path: file) }) { overrides.append(d) }
        }
        for file in manifest?.defaultsFiles ?? [] {
            if let d = layerFiles.dictionary(at: file, { (file) throws(CLIError) in try Domain.registeredDefaults(at: file) }) { defaults.append(d) }
        }
        let states = EditState.states(of: layout, contents: contents, system: domain.administratorFiles(),
                                      overrides: overrides, defaults: defaults)
        return (layout, states)
    }

    /// Reads the file again when its identity changed (a write here or elsewhere).
    ///
    /// - Returns: whether it was read again.
    @discardableResult
    mutating func reloadIfChanged(force: Bool = false) -> Bool {
        let now = try? PlistFile.identity(of: target)
        guard force || now != identity else { return false }
        defer { if case .history = screen.mode { loadHistory() } }
        do {
            let (layout, states) = try load()
            screen.update(layout: layout, states: states)
        } catch {
            screen.message = error.message
        }
        return true
    }

    /// The history pane's generations, newest first, each changed key with its value before
    /// (in the generation kept before it, when that one is kept) and after, secrets masked.
    mutating func loadHistory() {
        let generations = (try? PlistHistory.list(for: target)) ?? []
        let marks = SecretMarks.of(domain)
        let secretFields = Set(screen.layout.fields.filter(\.isSecret).map(\.path))
        var previous: (number: Int, contents: PlistDictionary?)?
        var history: [(number: Int, text: String, changes: [String])] = []
        for generation in generations {
            let contents = try? generation.contents()
            let before = previous.flatMap { $0.number == generation.number - 1 ? $0.contents : nil }
            let changes = generation.changed.map { path in
                let secret = secretFields.contains(path) || marks.isSecret(path)
                func shown(_ value: PlistValue?) -> String {
                    guard let value else { return "(not set)" }
                    return secret ? EditScreen.masked : Render.oneLine(marks.shown(value, at: [path])).escapingControlCharacters
                }
                // Before the first generation there was nothing; before one whose predecessor
                // is no longer kept, the value is not known.
                let old = generation.number == 1 ? shown(nil) : previous?.number == generation.number - 1 ? shown(before?.value(at: path)) : "?"
                return KeyPath(components: path).path.escapingControlCharacters + ": " + old + " → " + shown(contents?.value(at: path))
            }
            history.append((generation.number, generation.writer.summary.escapingControlCharacters, changes))
            previous = (generation.number, contents)
        }
        screen.history = history.reversed()
    }

    /// Carries out what the screen asked; `false` to quit.
    mutating func perform(_ action: EditAction) -> Bool {
        let fields = screen.layout.fields
        // The key's value in the file when a change found it changed elsewhere since the screen
        // showed it: the change is not made, and the screen says so.
        var conflict: PlistValue?? = .none
        do throws(CLIError) {
            switch action {
            case .quit:
                return false
            case .set(let index, let value, let expected):
                let field = fields[index]
                let key = KeyPath(components: field.path)
                try domain.edit(creating: true) { contents throws(CLIError) in
                    let now = contents.value(at: key)
                    guard now == expected else {
                        conflict = .some(now)
                        throw CLIError.silentFailure
                    }
                    try contents.setValue(value, at: key)
                }
                screen.mode = .browse
                screen.elementEdit = nil
                screen.clearProblem()
                let shown = value.map { field.isSecret ? "set" : "= " + screen.shownValue(index, .some($0)) } ?? "reset to its default"
                screen.message = "\(field.title) \(shown)"
            case .reset(let indexes):
                let keys = indexes.map { KeyPath(components: fields[$0].path) }
                try domain.edit(creating: false) { contents throws(CLIError) in
                    for key in keys { try contents.setValue(nil, at: key) }
                }
                screen.message = "\(keys.count) key\(keys.count == 1 ? "" : "s") reset to their defaults"
            case .restore(let number):
                try RestoreCommand.restore(number, of: domain, origin: .tool)
                screen.message = "restored generation \(number)"
            case .showHistory:
                loadHistory()
                screen.mode = .history(selected: 0)
            case .explain(let index):
                let field = fields[index]
                let key = KeyPath(components: field.path)
                var report = try ExplainCommand.explanation(of: key, in: domain, manifest: manifest)
                let marks = SecretMarks.of(domain)
                for row in report.rows.indices {
                    report.rows[row].value = report.rows[row].value.map { field.isSecret ? .string(PlistSecrets.redactedText) : marks.shown($0, at: [key.components]) }
                }
                let lines = report.escapingControlCharacters.text(showingSecrets: true).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                screen.mode = .text(title: "Where \(field.title) comes from (any key goes back)", lines: lines)
            }
        } catch {
            if case .set(let index, _, _) = action {
                if case .some(let now) = conflict {
                    let shown = fields[index].isSecret ? "another value" : screen.shownValue(index, .some(now))
                    if case .editing(let editing, let buffer, _) = screen.mode, editing == index {
                        screen.mode = .editing(field: index, buffer: buffer, expected: now)
                        screen.refuse(index, "\(fields[index].title) changed elsewhere to \(shown): Enter writes yours, Esc keeps it")
                    } else {
                        screen.refuse(index, "\(fields[index].title) changed elsewhere to \(shown); not changed")
                    }
                } else {
                    screen.refuse(index, Self.shortened(error.message, path: domain.path))
                }
            } else {
                screen.message = Self.shortened(error.message, path: domain.path)
            }
        }
        reloadIfChanged(force: true)
        for line in Console.takeHeldErrors() { screen.message = line }
        return true
    }

    /// A refusal without the file's path in front (the screen names the domain).
    static func shortened(_ message: String, path: String) -> String {
        message.hasPrefix(path + ": ") ? String(message.dropFirst(path.count + 2)) : message
    }
}

/// Files read again only when they change: each kept with its identity (device, inode, size,
/// modification time), and read again when ``PlistFile/identity(of:)`` differs (a symbolic link
/// is read each time).
struct EditFileCache {
    private var kept: [String: (identity: PlistFile.Identity, contents: PlistDictionary)] = [:]
    /// How many times a file was read (not taken from the cache).
    private(set) var reads = 0

    /// The dictionary `read` makes of `file`, read again only when the file changed; `nil`
    /// when it cannot be read (a missing layer is no layer).
    mutating func dictionary(at file: String, _ read: (String) throws(CLIError) -> PlistDictionary) -> PlistDictionary? {
        guard let identity = try? PlistFile.identity(of: file) else {
            kept[file] = nil
            return nil
        }
        // A link's own identity does not change with the file it leads to: read through it each time.
        let isLink = identity.mode & UInt32(S_IFMT) == UInt32(S_IFLNK)
        if !isLink, let entry = kept[file], entry.identity == identity { return entry.contents }
        reads += 1
        guard let contents = try? read(file) else {
            kept[file] = nil
            return nil
        }
        kept[file] = (identity, contents)
        return contents
    }
}
