import SettingsPlist
import SettingsFiles

/// Where a key's value comes from, as the screen tells it.
struct EditState: Equatable {
    /// The value that wins.
    var value: PlistValue?
    /// The value in the user's file (what an edit changes).
    var userValue: PlistValue?
    /// `default`, `system`, `user`, `override` or `locked`.
    var layer: String
    /// The `locked.plist` that locks the key, if one does.
    var lockedBy: String?

    /// Each field's state, from the layers the program reads (top wins): an administrator's
    /// lock, override files, the user's file, system defaults, defaults files, the schema's
    /// default.
    static func states(of layout: EditLayout, contents: PlistDictionary, system: PlistSystemLayers,
                       overrides: [PlistDictionary] = [], defaults: [PlistDictionary] = []) -> [EditState] {
        let systemDefaults = system.defaults, locks = system.locks
        return layout.fields.map { field in
            let user = contents.value(at: field.path)
            if let file = system.lockingFile(of: field.path) {
                return EditState(value: locks.value(at: field.path) ?? user ?? field.defaultValue, userValue: user, layer: "locked", lockedBy: file)
            }
            for file in overrides.reversed() {
                if let value = file.value(at: field.path) { return EditState(value: value, userValue: user, layer: "override") }
            }
            if let user { return EditState(value: user, userValue: user, layer: "user") }
            if let value = systemDefaults.value(at: field.path) { return EditState(value: value, userValue: nil, layer: "system") }
            for file in defaults.reversed() {
                if let value = file.value(at: field.path) { return EditState(value: value, userValue: nil, layer: "default") }
            }
            return EditState(value: field.defaultValue, userValue: nil, layer: "default")
        }
    }
}

/// What the screen asks the command to do.
enum EditAction: Equatable {
    /// Sets (or with `nil` removes) a field's key in the user's file, if it still holds `expected`.
    case set(field: Int, value: PlistValue?, expected: PlistValue?)
    /// Removes these fields' keys from the user's file (back to their defaults), in one change.
    case reset(fields: [Int])
    /// Brings back a generation of the file.
    case restore(generation: Int)
    /// Shows the history pane.
    case showHistory
    /// Shows where a key's value comes from.
    case explain(field: Int)
    case quit
}

/// A line of the screen and how it is drawn.
struct EditLine: Equatable {
    enum Style: Equatable { case normal, selected, dim, selectedDim, heading }
    var text: String
    var style: Style = .normal
}

/// The `settings edit` screen: its state, what each key does, and what it shows, apart from
/// any terminal or file (the command feeds it keys and file states, and does its actions).
struct EditScreen {
    enum Mode: Equatable {
        case browse
        case editing(field: Int, buffer: String, expected: PlistValue?)
        case choosing(field: Int, selected: Int)
        /// A date edited by its fields (``EditDate``).
        case picking(field: Int, date: EditDate, expected: PlistValue?)
        case searching
        case help
        case history(selected: Int)
        case text(title: String, lines: [String])
    }

    /// The domain as named, for the title line.
    var name: String
    var layout: EditLayout
    var states: [EditState]
    var rows = 24, columns = 80
    var mode = Mode.browse
    /// The pages opened, the root first.
    var pages = [0]
    /// The selected line among ``visibleRows``, and the first one shown.
    var cursor = 0, top = 0
    var search = ""
    var changedOnly = false
    /// The line under the keys: a result or a reason.
    var message: String?
    /// The field whose last change was refused, and why: the reason is drawn on the line under
    /// it until the field is edited again or the cursor moves.
    var problemField: Int?
    var problemReason: String?
    /// Generations for the history pane, newest first: number, who and when, and each changed
    /// key's old → new value.
    var history: [(number: Int, text: String, changes: [String])] = []
    /// The arrays and dictionaries opened as pages, the outermost first (``EditContainerPage``).
    var containers: [EditContainerPage] = []
    /// What an edit in progress changes inside an opened array or dictionary, if it is one.
    var elementEdit: EditElementEdit?

    init(name: String, layout: EditLayout, states: [EditState]) {
        self.name = name
        self.layout = layout
        self.states = states
        cursor = firstSelectable(from: 0, step: 1) ?? 0
    }

    // MARK: Rows

    /// Whether a search or the "changed only" filter is on: then every page's matching keys show.
    var isFiltering: Bool { !search.isEmpty || changedOnly }

    /// The lines of the current page, or the matching keys of every page when filtering.
    var visibleRows: [EditRow] {
        guard isFiltering else {
            let page = pages.last ?? 0
            return layout.pages.indices.contains(page) ? layout.pages[page].rows : []
        }
        let needle = search.lowercased()
        return layout.fields.indices.filter { index in
            let field = layout.fields[index]
            if changedOnly && !isChanged(index) { return false }
            return needle.isEmpty || field.title.lowercased().contains(needle) || field.keyPath.lowercased().contains(needle)
        }.map(EditRow.field)
    }

    /// Whether the user's file sets the key to something other than its default.
    func isChanged(_ index: Int) -> Bool {
        guard let user = states[index].userValue else { return false }
        return user != layout.fields[index].defaultValue
    }

    private func isSelectable(_ row: EditRow) -> Bool {
        if case .group = row { false } else { true }
    }

    private func firstSelectable(from start: Int, step: Int) -> Int? {
        let rows = visibleRows
        var index = start
        while index >= 0 && index < rows.count {
            if isSelectable(rows[index]) { return index }
            index += step
        }
        return nil
    }

    /// The field on the selected line, if it is one.
    var selectedField: Int? {
        let rows = visibleRows
        guard cursor < rows.count, case .field(let index) = rows[cursor] else { return nil }
        return index
    }

    private mutating func move(by step: Int) {
        let target = max(0, min(visibleRows.count - 1, cursor + step))
        cursor = firstSelectable(from: target, step: step > 0 ? 1 : -1)
            ?? firstSelectable(from: target, step: step > 0 ? -1 : 1) ?? cursor
    }

    /// Keeps the cursor on a selectable line after the rows changed.
    private mutating func settle() {
        let count = visibleRows.count
        if cursor >= count { cursor = max(0, count - 1) }
        cursor = firstSelectable(from: cursor, step: 1) ?? firstSelectable(from: cursor, step: -1) ?? 0
    }

    /// New states (the file changed, here or elsewhere); an edit in progress whose key changed
    /// elsewhere is told so, and is not written over without the user seeing it.
    mutating func update(layout newLayout: EditLayout, states newStates: [EditState]) {
        // The same key in the new layout (keys may have come or gone before it).
        func moved(_ field: Int) -> Int? {
            let path = layout.fields[field].path
            return newLayout.fields.firstIndex { $0.path == path }
        }
        if let field = problemField {
            problemField = moved(field)
            if problemField == nil { problemReason = nil }
        }
        switch mode {
        case .editing(let field, let buffer, let expected):
            if let index = moved(field) {
                if newStates[index].userValue != expected {
                    refuse(index, "\(layout.fields[field].title) changed elsewhere to \(shownValue(index, in: newLayout, newStates[index].userValue)): Enter writes yours, Esc keeps it")
                }
                mode = .editing(field: index, buffer: buffer, expected: newStates[index].userValue)
            } else {
                mode = .browse
                elementEdit = nil
            }
        case .choosing(let field, let selected):
            mode = moved(field).map { .choosing(field: $0, selected: selected) } ?? .browse
        case .picking(let field, let date, let expected):
            // `expected` stays: applying the date then finds the change and says so.
            mode = moved(field).map { .picking(field: $0, date: date, expected: expected) } ?? .browse
        default: break
        }
        if newLayout != layout {
            if pages.contains(where: { $0 >= newLayout.pages.count }) { pages = [0] }
        }
        let paths = containers.map { layout.fields[$0.field].path }
        layout = newLayout
        states = newStates
        reopenContainers(byPath: paths)
        if containers.isEmpty { settle() }
    }

    /// Records why a change of `field` was refused: on the status line and under the field.
    mutating func refuse(_ field: Int, _ reason: String) {
        message = reason
        problemField = field
        problemReason = reason
    }

    /// Forgets a refusal (the field is edited again, or the cursor moved).
    mutating func clearProblem() {
        problemField = nil
        problemReason = nil
    }

    // MARK: Keys

    /// What `key` does; an action for the command to carry out, if any.
    mutating func handle(_ key: Key) -> EditAction? {
        switch mode {
        case .browse: return containers.isEmpty ? browse(key) : containerBrowse(key)
        case .editing(let field, let buffer, let expected): return editing(key, field: field, buffer: buffer, expected: expected)
        case .choosing(let field, let selected): return choosing(key, field: field, selected: selected)
        case .picking(let field, let date, let expected): return picking(key, field: field, date: date, expected: expected)
        case .searching:
            switch key {
            case .enter: mode = .browse
            case .escape: search = ""; mode = .browse
            case .backspace: search = String(search.dropLast())
            case .character(let c): search.append(c)
            default: break
            }
            cursor = 0
            settle()
            return nil
        case .history(let selected):
            switch key {
            case .up, .character("k"): mode = .history(selected: max(0, selected - 1))
            case .down, .character("j"): mode = .history(selected: min(max(0, history.count - 1), selected + 1))
            case .enter:
                guard selected < history.count else { return nil }
                mode = .browse
                return .restore(generation: history[selected].number)
            case .escape, .character("q"), .left, .character("h"), .character("H"): mode = .browse
            default: break
            }
            return nil
        case .help, .text:
            mode = .browse
            return nil
        }
    }

    mutating func browse(_ key: Key) -> EditAction? {
        let page = max(1, bodyHeight - 1)
        switch key {
        case .up, .character("k"), .down, .character("j"), .tab, .pageUp, .pageDown, .home, .character("g"), .end, .character("G"),
             .escape, .left, .character("h"), .backspace:
            clearProblem()
        default: break
        }
        switch key {
        case .up, .character("k"): move(by: -1)
        case .down, .character("j"), .tab: move(by: 1)
        case .pageUp: move(by: -page)
        case .pageDown: move(by: page)
        case .home, .character("g"): cursor = 0; move(by: 0); settle()
        case .end, .character("G"): cursor = max(0, visibleRows.count - 1); move(by: 0)
        case .enter, .character(" "), .right, .character("l"): return activate()
        case .escape, .left, .character("h"), .backspace:
            if isFiltering {
                search = ""
                changedOnly = false
            } else if pages.count > 1 {
                pages.removeLast()
            }
            message = nil
            cursor = 0
            settle()
        case .character("/"): mode = .searching; search = ""; cursor = 0
        case .character("c"):
            changedOnly.toggle()
            cursor = 0
            settle()
        case .character("r"):
            guard let field = selectedField else { return nil }
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            return .set(field: field, value: nil, expected: states[field].userValue)
        case .character("R"):
            let fields = visibleRows.compactMap { row -> Int? in
                guard case .field(let index) = row, states[index].lockedBy == nil, layout.fields[index].control != .readOnly else { return nil }
                return index
            }
            return .reset(fields: fields)
        case .character("H"): return .showHistory
        case .character("e"): return selectedField.map { .explain(field: $0) }
        case .character("?"): mode = .help
        case .character("q"), .ctrl("d"): return .quit
        default: break
        }
        return nil
    }

    /// Why a field cannot be changed, or `nil`.
    func refusal(_ field: Int) -> String? {
        if let file = states[field].lockedBy { return "\(layout.fields[field].title) is locked by \(file): it cannot be changed" }
        if layout.fields[field].control == .readOnly { return "\(layout.fields[field].title) is read-only" }
        return nil
    }

    /// Enter or Space on the selected line.
    private mutating func activate() -> EditAction? {
        let rows = visibleRows
        guard cursor < rows.count else { return nil }
        switch rows[cursor] {
        case .group: return nil
        case .pane(_, let page):
            pages.append(page)
            cursor = 0
            settle()
            return nil
        case .field(let index):
            clearProblem()
            if let refusal = refusal(index) { refuse(index, refusal); return nil }
            let field = layout.fields[index], state = states[index]
            message = nil
            elementEdit = nil
            switch field.control {
            case .toggle(let on, let off):
                return .set(field: index, value: state.value == on ? off : on, expected: state.userValue)
            case .choice(let values, _):
                mode = .choosing(field: index, selected: values.firstIndex { $0 == state.value } ?? 0)
            case .list, .dictionary:
                openContainer(field: index, path: [])
            case .date:
                mode = .picking(field: index, date: EditDate(state.value), expected: state.userValue)
            default:
                let start = field.isSecret ? "" : state.value.map(Self.editText) ?? ""
                mode = .editing(field: index, buffer: start, expected: state.userValue)
            }
            return nil
        }
    }

    /// A value as it is typed in an edit.
    static func editText(_ value: PlistValue) -> String {
        switch value {
        case .string(let text): text
        case .date(let date): PlistValue.date(date).description
        case .data(let data): data.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        default: value.literalText
        }
    }

    private mutating func editing(_ key: Key, field: Int, buffer: String, expected: PlistValue?) -> EditAction? {
        switch key {
        case .escape:
            mode = .browse
            message = "\(layout.fields[field].title): not changed"
            elementEdit = nil
            clearProblem()
        case .backspace: mode = .editing(field: field, buffer: String(buffer.dropLast()), expected: expected); clearProblem()
        case .ctrl("u"): mode = .editing(field: field, buffer: "", expected: expected); clearProblem()
        case .character(let c): mode = .editing(field: field, buffer: buffer + String(c), expected: expected); clearProblem()
        case .enter:
            let parsed = elementEdit.map { elementValue(buffer, field: field, edit: $0) } ?? Self.parse(buffer, for: layout.fields[field])
            switch parsed {
            case .success(let value):
                return .set(field: field, value: value, expected: expected)
            case .failure(let reason):
                refuse(field, reason.message)
            }
        default: break
        }
        return nil
    }

    private mutating func choosing(_ key: Key, field: Int, selected: Int) -> EditAction? {
        guard case .choice(let values, _) = layout.fields[field].control else { mode = .browse; return nil }
        switch key {
        case .up, .character("k"): mode = .choosing(field: field, selected: max(0, selected - 1))
        case .down, .character("j"): mode = .choosing(field: field, selected: min(values.count - 1, selected + 1))
        case .escape, .character("q"), .left, .character("h"): mode = .browse
        case .enter, .character(" "):
            mode = .browse
            guard selected < values.count else { return nil }
            return .set(field: field, value: values[selected], expected: states[field].userValue)
        default: break
        }
        return nil
    }

    /// A typed value for a field, checked against its control (its type and range); the schema
    /// checks the rest when it is written.
    static func parse(_ text: String, for field: EditField) -> Result<PlistValue, CLIError> {
        let trimmed = text.trimmingSpaces
        switch field.control {
        case .number(let integer, let minimum, let maximum):
            let number: Double
            let value: PlistValue
            if integer {
                guard let whole = Int64(trimmed) else { return .failure(.failure("'\(text)' is not a whole number")) }
                number = Double(whole)
                value = .integer(PlistInteger(whole))
            } else {
                guard let real = Double(trimmed), real.isFinite else { return .failure(.failure("'\(text)' is not a number")) }
                number = real
                value = .real(real)
            }
            if (minimum.map { number < $0 } ?? false) || (maximum.map { number > $0 } ?? false) {
                return .failure(.failure("\(trimmed) is out of range: \(range(minimum, maximum))"))
            }
            return .success(value)
        case .date:
            do { return .success(try PlistValue.fromDefaultsArgument(type: "-date", [trimmed])) } catch { return .failure(.failure(error.message)) }
        case .data:
            do { return .success(try PlistValue.fromDefaultsArgument(type: "-data", [trimmed])) } catch { return .failure(.failure(error.message)) }
        case .list, .dictionary:
            let value: PlistValue
            do { value = try PlistValue(literal: text, inferringTypes: true) } catch { return .failure(.failure("the value does not parse: \(error)")) }
            let wanted = field.control == .list ? "an array" : "a dictionary"
            switch (field.control, value) {
            case (.list, .array), (.dictionary, .dictionary): return .success(value)
            default: return .failure(.failure("expected \(wanted) literal (\(field.control == .list ? "( a, b )" : "{ key = value; }")), not \(value.kindWithArticle)"))
            }
        default:
            return .success(.string(text))
        }
    }

    static func range(_ minimum: Double?, _ maximum: Double?) -> String {
        func shown(_ bound: Double?) -> String {
            guard let bound else { return "" }
            return bound.rounded() == bound && abs(bound) < 1e15 ? String(Int64(bound)) : String(bound)
        }
        return "\(shown(minimum))…\(shown(maximum))"
    }

    // MARK: Drawing

    /// Lines for keys and values: the screen less the title, rules, detail and status lines.
    var bodyHeight: Int { max(1, rows - 5) }

    /// How a secret that is set is shown, wherever the editor shows values.
    static let masked = "••••••••"

    /// A field's value as shown: a secret never, only whether it is set.
    func shownValue(_ index: Int, in layout: EditLayout? = nil, _ value: PlistValue??) -> String {
        let field = (layout ?? self.layout).fields[index]
        let value = value ?? states[index].value
        guard let value else { return "(not set)" }
        if field.isSecret { return Self.masked }
        switch (field.control, value) {
        case (.toggle(let on, let off), _):
            if value == on { return "[x] on" }
            if value == off { return "[ ] off" }
        case (.choice(let values, let titles), _):
            if let i = values.firstIndex(of: value) { return "‹ \(titles[i]) ›" }
        case (.number(_, let minimum?, let maximum?), _):
            if let number = value.doubleValue, maximum > minimum {
                let filled = Int(((number - minimum) / (maximum - minimum) * 10).rounded())
                let cells = max(0, min(10, filled))
                return value.literalText + " " + String(repeating: "■", count: cells) + String(repeating: "·", count: 10 - cells)
            }
        default: break
        }
        switch value {
        case .string(let text): return text.escapingControlCharacters
        case .date(let date): return PlistValue.date(date).description
        case .data(let data): return "<\(data.count) bytes>"
        case .array(let items): return "( \(items.count) item\(items.count == 1 ? "" : "s") )"
        case .dictionary(let entries): return "{ \(entries.count) key\(entries.count == 1 ? "" : "s") }"
        default: return value.literalText.escapingControlCharacters
        }
    }

    /// `text` cut or padded to exactly `width` terminal columns (``Swift/String/terminalColumns``:
    /// a wide character takes two, a combining mark none), so a line never wraps.
    static func fit(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        let columns = text.terminalColumns
        if columns <= width { return text + String(repeating: " ", count: width - columns) }
        var cut = "", used = 0
        for character in text {
            let next = character.terminalColumns
            if used + next > width - 1 { break }
            cut.append(character)
            used += next
        }
        return cut + "…" + String(repeating: " ", count: width - 1 - used)
    }

    /// The line of a key: its title, value, whether it differs from its default, and its layer.
    func fieldLine(_ index: Int, selected: Bool) -> EditLine {
        let field = layout.fields[index], state = states[index]
        let titleWidth = max(10, min(32, (columns - 2) * 2 / 5))
        let layerWidth = 9
        let valueWidth = max(4, columns - 2 - titleWidth - 1 - 3 - layerWidth)
        var value = shownValue(index, nil)
        if problemField == index { value = "! " + value }
        let mark = isChanged(index) ? "*" : " "
        let text = (selected ? "> " : "  ") + Self.fit(field.title, titleWidth) + " " + Self.fit(value, valueWidth)
            + " " + mark + " " + Self.fit(state.layer, layerWidth)
        let locked = state.lockedBy != nil || field.control == .readOnly
        return EditLine(text: Self.fit(text, columns), style: locked ? (selected ? .selectedDim : .dim) : (selected ? .selected : .normal))
    }

    /// Every line of the screen, exactly ``rows`` of exactly ``columns`` characters.
    func lines() -> [EditLine] {
        var body: [EditLine] = []
        var top = self.top
        switch mode {
        case .help:
            body = Self.helpLines.map { EditLine(text: $0) }
        case .text(let title, let lines):
            body = [EditLine(text: title, style: .heading)] + lines.map { EditLine(text: $0) }
        case .history(let selected):
            body = [EditLine(text: "History (newest first): Enter restores, Esc goes back", style: .heading)]
            if history.isEmpty { body.append(EditLine(text: "  no history kept yet")) }
            var selectedLines = 0..<0
            for (i, generation) in history.enumerated() {
                let start = body.count
                body.append(EditLine(text: (i == selected ? "> " : "  ") + "\(generation.number)  " + generation.text, style: i == selected ? .selected : .normal))
                for change in generation.changes.prefix(Self.changesShown) { body.append(EditLine(text: "      " + change)) }
                if generation.changes.count > Self.changesShown { body.append(EditLine(text: "      … \(generation.changes.count - Self.changesShown) more")) }
                if i == selected { selectedLines = start..<body.count }
            }
            top = max(0, min(selectedLines.lowerBound, selectedLines.upperBound - bodyHeight))
        case .choosing(let field, let selected):
            body = [EditLine(text: "Choose \(layout.fields[field].title): Enter picks, Esc cancels", style: .heading)]
            if case .choice(let values, let titles) = layout.fields[field].control {
                for i in values.indices {
                    let current = values[i] == states[field].value
                    body.append(EditLine(text: (i == selected ? "> " : "  ") + (current ? "(•) " : "( ) ") + titles[i], style: i == selected ? .selected : .normal))
                }
            }
            top = max(0, selected + 2 - bodyHeight)
        case .browse, .editing, .searching, .picking:
            if let page = containers.last {
                body = containerLines(page)
                top = scrolledTop
            } else {
                // Only the rows on screen are drawn (a 1,000-key page draws its first lines).
                let rows = visibleRows
                if rows.isEmpty { body.append(EditLine(text: isFiltering ? "  no key matches" : "  no keys")) }
                let first = scrolledTop
                for (i, row) in zip(rows.indices, rows).dropFirst(first).prefix(bodyHeight) {
                    switch row {
                    case .group(let title): body.append(EditLine(text: title.isEmpty ? "" : "── \(title) ──", style: .heading))
                    case .pane(let title, _): body.append(EditLine(text: (i == cursor ? "> " : "  ") + title + "  ›", style: i == cursor ? .selected : .normal))
                    case .field(let index):
                        body.append(fieldLine(index, selected: i == cursor))
                        if i == cursor, let reason = problemLine(index) { body.append(reason) }
                    }
                }
                top = 0
            }
        }
        var out: [EditLine] = []
        var title = " settings edit \(name)"
        if pages.count > 1 { title += " › " + pages.dropFirst().map { layout.pages[$0].title }.joined(separator: " › ") }
        if !containers.isEmpty { title += " › " + containerTitles.joined(separator: " › ") }
        if !search.isEmpty || mode == .searching { title += "   /" + search }
        if changedOnly { title += "   [changed only]" }
        out.append(EditLine(text: Self.fit(title, columns), style: .heading))
        out.append(EditLine(text: String(repeating: "─", count: columns)))
        for i in 0..<bodyHeight {
            let index = top + i
            out.append(index < body.count ? EditLine(text: Self.fit(body[index].text, columns), style: body[index].style) : EditLine(text: Self.fit("", columns)))
        }
        out.append(EditLine(text: String(repeating: "─", count: columns)))
        out.append(EditLine(text: Self.fit(detail, columns)))
        out.append(EditLine(text: Self.fit(status, columns), style: message != nil ? .heading : .normal))
        return Array(out.prefix(rows))
    }

    /// The history pane shows this many changed keys under each generation.
    static let changesShown = 3

    /// The first body line shown in the key list, so that the cursor (and the reason of a
    /// refusal under it) is on screen.
    var scrolledTop: Int {
        let count = containers.last.map { entries(of: $0).count } ?? visibleRows.count
        let extra = problemReason != nil && problemField != nil ? 1 : 0
        return min(cursor, Self.scrolled(top: top, cursor: cursor + extra, height: bodyHeight, count: max(count + extra, 1)))
    }

    /// The line under a field that tells why its last change was refused.
    func problemLine(_ field: Int) -> EditLine? {
        guard problemField == field, let problemReason else { return nil }
        return EditLine(text: "    ↳ " + problemReason.escapingControlCharacters, style: .heading)
    }

    /// The first body line shown so that the cursor is on screen.
    static func scrolled(top: Int, cursor: Int, height: Int, count: Int) -> Int {
        var top = top
        if cursor < top { top = cursor }
        if cursor >= top + height { top = cursor - height + 1 }
        return max(0, min(top, max(0, count - height)))
    }

    /// The line above the status: the edit being typed, else the selected key's path and help
    /// (or the file that locks it).
    var detail: String {
        if case .picking(let field, let date, _) = mode {
            return " \(layout.fields[field].title): \(date.shown) UTC"
        }
        if case .editing(let field, let buffer, _) = mode {
            let f = layout.fields[field]
            if case .add(let path)? = elementEdit {
                let shown = f.isSecret ? String(repeating: "•", count: buffer.count) : buffer.escapingControlCharacters
                let isArray = switch Self.value(states[field].value, at: path) {
                case .array?: true
                case nil: f.control == .list
                default: false
                }
                return " add to \(f.title)\(isArray ? "" : " (key = value)"): \(shown)▏"
            }
            let shown = f.isSecret ? String(repeating: "•", count: buffer.count) : buffer.escapingControlCharacters
            var hint = ""
            if case .number(_, let minimum, let maximum) = f.control, minimum != nil || maximum != nil { hint = " (" + Self.range(minimum, maximum) + ")" }
            return " \(f.title)\(hint): \(shown)▏"
        }
        if mode == .searching { return " search: \(search)▏" }
        guard let index = selectedField else { return "" }
        let field = layout.fields[index]
        if let file = states[index].lockedBy { return " \(field.keyPath): locked by \(file)" }
        return " \(field.keyPath)" + (field.help.map { ": " + $0.escapingControlCharacters } ?? "")
    }

    /// The bottom line: the last result or reason, else the keys of the mode.
    var status: String {
        if let message { return " " + message.escapingControlCharacters }
        switch mode {
        case .editing: return " Enter applies  Esc cancels"
        case .picking: return " ←→ field  ↑↓ or digits change it  Enter applies  Esc cancels"
        case .searching: return " Enter keeps the filter  Esc clears it"
        case .browse where !containers.isEmpty: return " ↑↓ move  Enter edit  a add  d delete  J K move down/up  Esc back"
        default: return " ↑↓ move  Enter edit  r reset  / search  H history  ? keys  q quit"
        }
    }

    /// The `?` screen: every key.
    static let helpLines = [
        "Keys (any key goes back)",
        "  ↑ ↓  k j        move (PgUp PgDn, Home End, g G)",
        "  Enter  Space    toggle, pick a choice, edit; open a pane, list or dictionary",
        "  Esc             cancel an edit; back from a pane, a list or a filter",
        "  a  d  = J  K    list or dictionary: add, delete, edit whole as a literal;",
        "                  move an element down, up",
        "  ← → ↑ ↓ 0-9     date: pick the field, change it (or type ISO 8601 text)",
        "  r               reset the key to its default",
        "  R               reset every key on this page (one change)",
        "  /               search titles and keys",
        "  c               show only keys changed from their default",
        "  e               where the value comes from (every layer)",
        "  H               history, old → new values: Enter restores a generation",
        "  ?               this list",
        "  q               quit (changes are already saved)",
        "",
        "Columns: title, value, * when it differs from its default, its layer",
        "(default, system, user, override, locked).",
    ]
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
