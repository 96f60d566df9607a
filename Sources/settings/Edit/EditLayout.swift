import SettingsPlist
import SettingsFiles

/// How a key is edited on the `settings edit` screen.
enum EditControl: Equatable {
    /// A switch between two values (`true`/`false`, or a pane's `TrueValue`/`FalseValue`).
    case toggle(on: PlistValue, off: PlistValue)
    /// One of a list of values, each with a title.
    case choice(values: [PlistValue], titles: [String])
    /// A number, within a range where the schema or the pane gives one.
    case number(integer: Bool, minimum: Double?, maximum: Double?)
    /// Text; a secure field is masked and never shown.
    case text(secure: Bool)
    case date, data
    /// An array or a dictionary, edited as a property-list literal (`( a, b )`, `{ k = v; }`).
    case list, dictionary
    /// Shown, never changed (a pane's `PSTitleValueSpecifier`).
    case readOnly
}

/// One key on the screen.
struct EditField: Equatable {
    var path: [String]
    var title: String
    var help: String?
    var control: EditControl
    /// The value in code, as the schema gives it (or the pane's `DefaultValue`).
    var defaultValue: PlistValue?
    var isSecret: Bool

    /// The key path as the tool writes it (`Network/timeout`).
    var keyPath: String { KeyPath(components: path).path }
}

/// A line of a page: a group title, a key, or a link to a child pane.
enum EditRow: Equatable {
    case group(String)
    case field(Int)
    case pane(title: String, page: Int)
}

/// A page of the screen: the root one, or a `PSChildPaneSpecifier`'s.
struct EditPage: Equatable {
    var title: String
    var rows: [EditRow]
}

/// What the screen shows, built from what the application wrote: its schema (titles, help,
/// groups, order, types, ranges, enum values and titles, secret marks), its `Root.plist` panes
/// when given, and every other key of the file as a typed tree.
struct EditLayout: Equatable {
    var fields: [EditField] = []
    var pages: [EditPage] = []

    /// A `Settings.bundle` pane file, read: its `PreferenceSpecifiers`, and the child panes
    /// by `File` name.
    struct Panes {
        var root: [PlistDictionary]
        var children: [String: [PlistDictionary]]
    }

    /// Builds the pages: the panes first when given (their keys in pane order, child panes as
    /// pages), then the schema's keys no pane shows (by `x-group`, in `x-order`), then the keys
    /// the file holds that neither names ("Other keys").
    static func build(schema: PlistSchema?, panes: Panes?, contents: PlistDictionary) -> EditLayout {
        var layout = EditLayout()
        var seen: Set<[String]> = []
        let described = schema.map(schemaKeys) ?? []
        var bySchema: [[String]: PlistDictionary] = [:]
        for (path, node) in described { bySchema[path] = node }
        layout.pages.append(EditPage(title: "Settings", rows: []))
        if let panes {
            layout.addPane(panes.root, page: 0, panes: panes, bySchema: bySchema, seen: &seen)
        }
        var group: String?? = .none
        for (path, node) in described where !seen.contains(path) {
            seen.insert(path)
            let name = node["x-group"]?.stringValue ?? (path.count > 1 ? path.dropLast().joined(separator: "/") : nil)
            if group != .some(name) {
                group = .some(name)
                layout.pages[0].rows.append(.group(name ?? "General"))
            }
            layout.append(field(path: path, schema: node, value: contents.value(at: path)), page: 0)
        }
        var others = false
        for (key, value) in contents.leafPaths() where !seen.contains(key.components) {
            if !others {
                layout.pages[0].rows.append(.group("Other keys"))
                others = true
            }
            seen.insert(key.components)
            layout.append(field(path: key.components, schema: [:], value: value), page: 0)
        }
        return layout
    }

    private mutating func append(_ field: EditField, page: Int) {
        fields.append(field)
        pages[page].rows.append(.field(fields.count - 1))
    }

    /// The schema's keys (a property with no `properties` of its own, or one the program
    /// described with `x-order`), in `x-order` where given, else in document order; iterative.
    static func schemaKeys(_ schema: PlistSchema) -> [([String], PlistDictionary)] {
        var found: [([String], PlistDictionary)] = []
        var pending: [([String], PlistValue)] = [([], schema.root)]
        while let (path, node) = pending.popLast() {
            guard case .dictionary(let properties)? = node["properties"] else { continue }
            for (name, child) in properties.reversed() {
                guard case .dictionary(let dictionary) = child else { continue }
                if dictionary["properties"] == nil || dictionary["x-order"] != nil {
                    found.append((path + [name], dictionary))
                } else {
                    pending.append((path + [name], child))
                }
            }
        }
        found.reverse()
        let hasOrder = found.contains { $0.1["x-order"] != nil }
        guard hasOrder else { return found }
        return found.enumerated().sorted { a, b in
            let x = a.element.1["x-order"]?.doubleValue ?? Double(Int.max), y = b.element.1["x-order"]?.doubleValue ?? Double(Int.max)
            return x == y ? a.offset < b.offset : x < y
        }.map(\.element)
    }

    /// A key's field from its schema (or, with none, from the value it holds).
    static func field(path: [String], schema: PlistDictionary, value: PlistValue?) -> EditField {
        let secret = schema["x-secret"] == .bool(true) || path.contains(where: PlistSecrets.isSecretName)
        let type = schema["type"]?.stringValue
        var control: EditControl
        if let values = schema["enum"]?.arrayValue {
            let titles = schema["x-enum-titles"]?.arrayValue?.compactMap(\.stringValue) ?? []
            control = .choice(values: values, titles: titles.count == values.count ? titles : values.map(Self.plainText))
        } else {
            switch type {
            case "boolean"?: control = .toggle(on: true, off: false)
            case "integer"?: control = .number(integer: true, minimum: schema["minimum"]?.doubleValue, maximum: schema["maximum"]?.doubleValue)
            case "number"?: control = .number(integer: false, minimum: schema["minimum"]?.doubleValue, maximum: schema["maximum"]?.doubleValue)
            case "array"?: control = .list
            case "object"?: control = .dictionary
            case "string"?:
                control = schema["format"] == "date-time" ? .date : schema["contentEncoding"] == "base64" ? .data : .text(secure: secret)
            default: control = Self.control(for: value, secure: secret)
            }
        }
        if schema["readOnly"] == .bool(true), schema["x-locked-by"] == nil { control = .readOnly }
        return EditField(path: path, title: schema["title"]?.stringValue ?? KeyPath(components: path).path,
                         help: schema["description"]?.stringValue, control: control,
                         defaultValue: schema["default"], isSecret: secret)
    }

    /// The control for a key no schema describes: by the type of its value.
    static func control(for value: PlistValue?, secure: Bool) -> EditControl {
        switch value {
        case .bool?: .toggle(on: true, off: false)
        case .integer?: .number(integer: true, minimum: nil, maximum: nil)
        case .real?: .number(integer: false, minimum: nil, maximum: nil)
        case .date?: .date
        case .data?: .data
        case .array?: .list
        case .dictionary?: .dictionary
        default: .text(secure: secure)
        }
    }

    /// Adds a pane's entries to `page`, and its child panes as pages (each file once: panes
    /// that name each other end). Iterative over child panes.
    private mutating func addPane(_ entries: [PlistDictionary], page: Int, panes: Panes,
                                  bySchema: [[String]: PlistDictionary], seen: inout Set<[String]>) {
        var pending: [([PlistDictionary], Int)] = [(entries, page)]
        var opened: Set<String> = []
        while let (entries, page) = pending.popLast() {
            for entry in entries {
                let type = entry["Type"]?.stringValue ?? ""
                let title = entry["Title"]?.stringValue
                switch type {
                case "PSGroupSpecifier":
                    pages[page].rows.append(.group(title ?? ""))
                    continue
                case "PSChildPaneSpecifier":
                    guard let file = entry["File"]?.stringValue, let child = panes.children[file], opened.insert(file).inserted else { continue }
                    pages.append(EditPage(title: title ?? file, rows: []))
                    pages[page].rows.append(.pane(title: title ?? file, page: pages.count - 1))
                    pending.append((child, pages.count - 1))
                    continue
                default: break
                }
                guard let key = entry["Key"]?.stringValue, !key.isEmpty else { continue }
                let path = [key]
                seen.insert(path)
                var field = Self.field(path: path, schema: bySchema[path] ?? [:], value: entry["DefaultValue"])
                if let title { field.title = title }
                if field.defaultValue == nil { field.defaultValue = entry["DefaultValue"] }
                switch type {
                case "PSToggleSwitchSpecifier":
                    field.control = .toggle(on: entry["TrueValue"] ?? true, off: entry["FalseValue"] ?? false)
                case "PSMultiValueSpecifier", "PSRadioGroupSpecifier":
                    let values = entry["Values"]?.arrayValue ?? []
                    let titles = (entry["Titles"]?.arrayValue ?? []).compactMap(\.stringValue)
                    field.control = .choice(values: values, titles: titles.count == values.count ? titles : values.map(Self.plainText))
                case "PSSliderSpecifier":
                    let integer = if case .number(let integer, _, _) = field.control { integer } else { false }
                    field.control = .number(integer: integer, minimum: entry["MinimumValue"]?.doubleValue, maximum: entry["MaximumValue"]?.doubleValue)
                case "PSTextFieldSpecifier":
                    let secure = entry["IsSecure"] == .bool(true) || field.isSecret
                    field.isSecret = secure
                    if entry["KeyboardType"]?.stringValue == "NumberPad" {
                        field.control = .number(integer: true, minimum: nil, maximum: nil)
                    } else if case .number = field.control {
                        // a number field the schema types stays a number
                    } else {
                        field.control = .text(secure: secure)
                    }
                case "PSTitleValueSpecifier":
                    field.control = .readOnly
                default: break
                }
                append(field, page: page)
            }
        }
    }

    /// A value as text, for a title when the pane or schema gives none.
    static func plainText(_ value: PlistValue) -> String {
        if case .string(let text) = value { return text }
        return value.literalText
    }
}
