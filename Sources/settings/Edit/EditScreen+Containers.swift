import SettingsPlist

/// A step into an array (an index) or a dictionary (a key).
enum EditStep: Equatable {
    case index(Int)
    case key(String)

    /// How the step is shown: `[2]` or the key.
    var label: String {
        switch self {
        case .index(let i): "[\(i)]"
        case .key(let key): key
        }
    }
}

/// An array or dictionary opened as a page: the field that holds it and where inside its value.
struct EditContainerPage: Equatable {
    var field: Int
    var path: [EditStep]
    /// The cursor on the page below, to go back to.
    var returnCursor: Int
}

/// What an edit typed inside an opened array or dictionary changes.
enum EditElementEdit: Equatable {
    /// The value at this path inside the field's value (the whole value when empty).
    case replace([EditStep])
    /// A new element of the array (or entry of the dictionary, typed `key = value`) at this path.
    case add([EditStep])
}

/// The list and dictionary editors: each element or entry on a line, edited with the control of
/// its type; nested arrays and dictionaries open further pages. Every change makes a new value
/// of the whole key, which the command writes as one change (``EditAction/set(field:value:expected:)``).
extension EditScreen {
    /// An element's or entry's line: where it is, and its value.
    struct Entry: Equatable {
        var step: EditStep
        var value: PlistValue
    }

    /// The elements of the array, or entries of the dictionary, `page` shows.
    func entries(of page: EditContainerPage) -> [Entry] {
        switch Self.value(states[page.field].value, at: page.path) {
        case .array(let items)?: items.enumerated().map { Entry(step: .index($0.offset), value: $0.element) }
        case .dictionary(let entries)?: entries.map { Entry(step: .key($0.key), value: $0.value) }
        default: []
        }
    }

    /// The titles of the opened pages, for the title line: the key, then each step inside it.
    var containerTitles: [String] {
        guard let first = containers.first else { return [] }
        return [layout.fields[first.field].title] + (containers.last?.path.map(\.label) ?? [])
    }

    /// The value at `path` inside `root`, iteratively.
    static func value(_ root: PlistValue?, at path: [EditStep]) -> PlistValue? {
        var current = root
        for step in path {
            switch (step, current) {
            case (.index(let i), .array(let items)?) where items.indices.contains(i): current = items[i]
            case (.key(let key), .dictionary(let entries)?): current = entries[key]
            default: return nil
            }
        }
        return current
    }

    /// `root` with the value at `path` replaced by `new` (removed when `nil`), or `nil` when the
    /// path does not lead there; iterative (each level is rebuilt from the innermost out).
    static func replacing(in root: PlistValue, at path: [EditStep], with new: PlistValue?) -> PlistValue? {
        var chain: [PlistValue] = [root]
        for step in path.dropLast() {
            guard let last = chain.last, let next = value(last, at: [step]) else { return nil }
            chain.append(next)
        }
        guard !path.isEmpty else { return new }
        var child = new
        for (step, parent) in zip(path, chain).reversed() {
            switch (step, parent) {
            case (.index(let i), .array(var items)) where items.indices.contains(i):
                if let child { items[i] = child } else { items.remove(at: i) }
                child = .array(items)
            case (.key(let key), .dictionary(var entries)):
                entries[key] = child
                child = .dictionary(entries)
            default: return nil
            }
        }
        return child
    }

    /// Opens the array or dictionary at `path` of `field` as a page.
    mutating func openContainer(field: Int, path: [EditStep]) {
        containers.append(EditContainerPage(field: field, path: path, returnCursor: cursor))
        cursor = 0
        message = nil
        clearProblem()
    }

    /// After the file changed: the pages still open, by the key's path, as far as they still
    /// lead to an array or a dictionary.
    mutating func reopenContainers(byPath paths: [[String]]) {
        var kept: [EditContainerPage] = []
        for (page, path) in zip(containers, paths) {
            guard let index = layout.fields.firstIndex(where: { $0.path == path }) else { break }
            switch Self.value(states[index].value, at: page.path) {
            case .array?, .dictionary?: kept.append(EditContainerPage(field: index, path: page.path, returnCursor: page.returnCursor))
            default: break
            }
            if kept.count < containers.count, kept.last?.path != page.path { break }
        }
        if kept.count < containers.count {
            cursor = containers[kept.count].returnCursor
            containers = kept
            if case .editing = mode, elementEdit != nil { mode = .browse; elementEdit = nil }
        }
        if let page = containers.last { cursor = max(0, min(cursor, entries(of: page).count - 1)) }
    }

    /// A key on an opened array or dictionary.
    mutating func containerBrowse(_ key: Key) -> EditAction? {
        guard let page = containers.last else { return nil }
        let entries = entries(of: page)
        let field = page.field
        let moving = max(1, bodyHeight - 1)
        switch key {
        case .up, .character("k"), .down, .character("j"), .tab, .pageUp, .pageDown, .home, .character("g"), .end, .character("G"):
            clearProblem()
            let step = switch key {
            case .up, .character("k"): -1
            case .down, .character("j"), .tab: 1
            case .pageUp: -moving
            case .pageDown: moving
            case .home, .character("g"): -cursor
            default: entries.count
            }
            cursor = max(0, min(entries.count - 1, cursor + step))
        case .escape, .left, .character("h"), .backspace:
            clearProblem()
            message = nil
            cursor = containers.removeLast().returnCursor
        case .enter, .character(" "), .right, .character("l"):
            guard cursor < entries.count else { return nil }
            let entry = entries[cursor], path = page.path + [entry.step]
            switch entry.value {
            case .array, .dictionary:
                openContainer(field: field, path: path)
                return nil
            default: break
            }
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            clearProblem()
            message = nil
            elementEdit = .replace(path)
            let expected = states[field].userValue
            switch entry.value {
            case .bool(let on):
                elementEdit = nil
                return changing(field, at: path, to: .bool(!on))
            case .date:
                mode = .picking(field: field, date: EditDate(entry.value), expected: expected)
            default:
                mode = .editing(field: field, buffer: layout.fields[field].isSecret ? "" : Self.editText(entry.value), expected: expected)
            }
        case .character("a"):
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            clearProblem()
            elementEdit = .add(page.path)
            mode = .editing(field: field, buffer: "", expected: states[field].userValue)
        case .character("="):
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            elementEdit = .replace(page.path)
            let whole = Self.value(states[field].value, at: page.path)
            mode = .editing(field: field, buffer: layout.fields[field].isSecret ? "" : whole.map(Self.editText) ?? "", expected: states[field].userValue)
        case .character("d"):
            guard cursor < entries.count else { return nil }
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            let action = changing(field, at: page.path + [entries[cursor].step], to: nil)
            cursor = max(0, min(cursor, entries.count - 2))
            return action
        case .character("J"), .character("K"):
            let down = key == .character("J")
            guard case .array(var items)? = Self.value(states[field].value, at: page.path) else { return nil }
            let other = cursor + (down ? 1 : -1)
            guard items.indices.contains(cursor), items.indices.contains(other) else { return nil }
            if let refusal = refusal(field) { refuse(field, refusal); return nil }
            items.swapAt(cursor, other)
            cursor = other
            return changing(field, at: page.path, to: .array(items))
        case .character("q"), .ctrl("d"), .character("?"), .character("H"):
            return browse(key)  // as on any page
        default: break
        }
        return nil
    }

    /// The change that puts `new` (or nothing) at `path` inside `field`'s value.
    func changing(_ field: Int, at path: [EditStep], to new: PlistValue?) -> EditAction? {
        guard let whole = states[field].value, let changed = Self.replacing(in: whole, at: path, with: new) else { return nil }
        return .set(field: field, value: changed, expected: states[field].userValue)
    }

    /// The whole new value of `field` for a typed element edit, checked as that element's type.
    func elementValue(_ text: String, field: Int, edit: EditElementEdit) -> Result<PlistValue, CLIError> {
        let whole = states[field].value ?? (layout.fields[field].control == .dictionary ? .dictionary([:]) : .array([]))
        let base = layout.fields[field]
        switch edit {
        case .replace(let path):
            guard let old = Self.value(whole, at: path) else { return .failure(.failure("\(base.title) changed: the element is gone")) }
            var element = base
            element.control = EditLayout.control(for: old, secure: base.isSecret)
            return Self.parse(text, for: element).flatMap { new in
                Self.replacing(in: whole, at: path, with: new).map { .success($0) } ?? .failure(.failure("\(base.title) changed: the element is gone"))
            }
        case .add(let path):
            switch Self.value(whole, at: path) {
            case .array(var items)?:
                items.append(Self.typedLiteral(text))
                return Self.replacing(in: whole, at: path, with: .array(items)).map { .success($0) } ?? .failure(.failure("\(base.title) changed"))
            case .dictionary(var entries)?:
                guard let equals = text.firstIndex(of: "=") else { return .failure(.failure("type the new entry as key = value")) }
                let name = String(text[..<equals]).trimmingSpaces
                guard !name.isEmpty else { return .failure(.failure("the new entry needs a key: key = value")) }
                guard entries[name] == nil else { return .failure(.failure("\(base.title) already has '\(name)': edit it instead")) }
                entries[name] = Self.typedLiteral(String(text[text.index(after: equals)...]))
                return Self.replacing(in: whole, at: path, with: .dictionary(entries)).map { .success($0) } ?? .failure(.failure("\(base.title) changed"))
            default:
                return .failure(.failure("\(base.title) changed: it is no longer a list or a dictionary"))
            }
        }
    }

    /// A typed element: a number, a Boolean, an array or dictionary literal, else the text.
    static func typedLiteral(_ text: String) -> PlistValue {
        let trimmed = text.trimmingSpaces
        if trimmed == "true" || trimmed == "false" { return .bool(trimmed == "true") }
        if let value = try? PlistValue(literal: trimmed, inferringTypes: true) { return value }
        return .string(trimmed)
    }

    /// The lines of an opened array or dictionary: each element or entry, its value and type.
    func containerLines(_ page: EditContainerPage) -> [EditLine] {
        let entries = entries(of: page)
        let field = layout.fields[page.field]
        guard !entries.isEmpty else { return [EditLine(text: "  (empty: a adds)")] }
        let labelWidth = max(6, min(24, (columns - 2) / 3))
        let typeWidth = 10
        let valueWidth = max(4, columns - 2 - labelWidth - 1 - 1 - typeWidth)
        var lines: [EditLine] = []
        let locked = refusal(page.field) != nil
        for (i, entry) in entries.enumerated() {
            let value: String = field.isSecret ? Self.masked : Self.elementText(entry.value)
            let text = (i == cursor ? "> " : "  ") + Self.fit(entry.step.label.escapingControlCharacters, labelWidth) + " "
                + Self.fit(value, valueWidth) + " " + Self.fit(entry.value.typeName, typeWidth)
            let style: EditLine.Style = locked ? (i == cursor ? .selectedDim : .dim) : (i == cursor ? .selected : .normal)
            lines.append(EditLine(text: text, style: style))
            if i == cursor, let reason = problemLine(page.field) { lines.append(reason) }
        }
        return lines
    }

    /// An element's value on its line.
    static func elementText(_ value: PlistValue) -> String {
        switch value {
        case .bool(let on): on ? "[x] true" : "[ ] false"
        case .string(let text): text.escapingControlCharacters
        case .date(let date): PlistValue.date(date).description
        case .data(let data): "<\(data.count) bytes>"
        case .array(let items): "( \(items.count) item\(items.count == 1 ? "" : "s") )  ›"
        case .dictionary(let entries): "{ \(entries.count) key\(entries.count == 1 ? "" : "s") }  ›"
        default: value.literalText.escapingControlCharacters
        }
    }
}
