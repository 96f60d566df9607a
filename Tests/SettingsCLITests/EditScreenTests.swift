import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
@testable import settings
import Testing

/// The `settings edit` screen without a terminal: the layout built from a schema and panes,
/// what each key does, what is drawn, and the keys decoded from a terminal's bytes.
struct EditScreenTests {
    static let schema: PlistValue = [
        "type": "object",
        "properties": [
            "autoPlay": ["type": "boolean", "default": false, "title": "Auto play", "description": "Start at launch", "x-order": 0, "x-group": "Playback"],
            "theme": ["type": "string", "enum": ["system", "dark"], "x-enum-titles": ["System", "Dark"], "default": "system", "title": "Theme", "x-order": 1, "x-group": "Look"],
            "Network": ["type": "object", "properties": [
                "timeout": ["type": "number", "minimum": 1, "maximum": 120, "default": 30, "title": "Timeout", "x-order": 2, "x-group": "Network"],
                "token": ["type": "string", "x-secret": true, "title": "Token", "x-order": 3, "x-group": "Network"],
                "proxy": ["type": "string", "title": "Proxy", "x-order": 4, "x-group": "Network"],
            ]],
        ],
    ]

    /// A screen of `App` whose administrator locks `Network/proxy` in `locked.plist` of a
    /// system directory in `dir`.
    static func screen(in dir: TemporaryDirectory, contents: PlistDictionary = ["Network": ["token": "s3cret"], "extra": 7]) throws -> EditScreen {
        try FileManager.default.createDirectory(atPath: dir.path("xdg/App"), withIntermediateDirectories: true)
        try dir.writePlist("xdg/App/locked.plist", "<dict><key>Network</key><dict><key>proxy</key><string>http://p</string></dict></dict>")
        let layout = EditLayout.build(schema: try PlistSchema(schema), panes: nil, contents: contents)
        let system = PlistSystemLayers.load(application: "App", from: .fixed([dir.path("xdg")]))
        return EditScreen(name: "App", layout: layout, states: EditState.states(of: layout, contents: contents, system: system))
    }

    @Test func theLayoutFollowsTheSchemaOrderGroupsAndTypesThenTheFilesOtherKeys() throws {
        let dir = try TemporaryDirectory()
        let screen = try Self.screen(in: dir)
        #expect(screen.layout.fields.map(\.keyPath) == ["autoPlay", "theme", "Network/timeout", "Network/token", "Network/proxy", "extra"])
        #expect(screen.layout.fields.map(\.control) == [
            .toggle(on: true, off: false), .choice(values: ["system", "dark"], titles: ["System", "Dark"]),
            .number(integer: false, minimum: 1, maximum: 120), .text(secure: true), .text(secure: false),
            .number(integer: true, minimum: nil, maximum: nil),
        ])
        #expect(screen.layout.pages[0].rows.compactMap { if case .group(let title) = $0 { title } else { nil } }
                    == ["Playback", "Look", "Network", "Other keys"])
        #expect(screen.states.map(\.layer) == ["default", "default", "default", "user", "locked", "user"])
        #expect(screen.states[4].lockedBy == dir.path("xdg/App/locked.plist"))
    }

    @Test func panesGiveTogglesChoicesSlidersReadOnlyValuesAndChildPages() throws {
        let panes = EditLayout.Panes(root: [
            ["Type": "PSGroupSpecifier", "Title": "Main"],
            ["Type": "PSToggleSwitchSpecifier", "Key": "mode", "Title": "Mode", "TrueValue": "YES", "FalseValue": "NO", "DefaultValue": "NO"],
            ["Type": "PSSliderSpecifier", "Key": "level", "MinimumValue": 0, "MaximumValue": 10],
            ["Type": "PSTitleValueSpecifier", "Key": "version", "Title": "Version"],
            ["Type": "PSChildPaneSpecifier", "Title": "More", "File": "More"],
        ], children: ["More": [["Type": "PSTextFieldSpecifier", "Key": "pin", "Title": "PIN", "IsSecure": true]]])
        let layout = EditLayout.build(schema: nil, panes: panes, contents: ["version": "1.2"])
        #expect(layout.fields.map(\.keyPath) == ["mode", "level", "version", "pin"])
        #expect(layout.fields[0].control == .toggle(on: "YES", off: "NO"))
        #expect(layout.fields[1].control == .number(integer: false, minimum: 0, maximum: 10))
        #expect(layout.fields[2].control == .readOnly)
        #expect(layout.fields[3].control == .text(secure: true) && layout.fields[3].isSecret)
        #expect(layout.pages.map(\.title) == ["Settings", "More"])
        #expect(layout.pages[0].rows.last == .pane(title: "More", page: 1))
        #expect(layout.pages[1].rows == [.field(3)])
    }

    @Test func aToggleAppliesAtOnceAndAChoiceWhenPicked() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        #expect(screen.handle(.character(" ")) == .set(field: 0, value: true, expected: nil))
        _ = screen.handle(.down)
        #expect(screen.handle(.enter) == nil)
        #expect(screen.mode == .choosing(field: 1, selected: 0))
        _ = screen.handle(.character("j"))
        #expect(screen.handle(.enter) == .set(field: 1, value: "dark", expected: nil))
    }

    @Test func aNumberOutOfItsRangeIsRefusedWithTheReasonAndEscCancels() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        _ = screen.handle(.down)
        _ = screen.handle(.down)
        _ = screen.handle(.enter)
        _ = screen.handle(.ctrl("u"))
        for c in "500" { _ = screen.handle(.character(c)) }
        #expect(screen.handle(.enter) == nil)
        #expect(screen.message == "500 is out of range: 1…120")
        #expect(screen.lines().contains { $0.text.hasPrefix("> Timeout") && $0.text.contains("! 30") })
        _ = screen.handle(.ctrl("u"))
        for c in "60" { _ = screen.handle(.character(c)) }
        #expect(screen.handle(.enter) == .set(field: 2, value: .real(60), expected: nil))
        _ = screen.handle(.escape)
        #expect(screen.mode == .browse)
    }

    @Test func aSecretIsNeverDrawnNorPutInTheEditLine() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        for _ in 0..<3 { _ = screen.handle(.down) }
        #expect(!screen.lines().contains { $0.text.contains("s3cret") })
        _ = screen.handle(.enter)
        #expect(screen.mode == .editing(field: 3, buffer: "", expected: "s3cret"))
        for c in "n3w" { _ = screen.handle(.character(c)) }
        let text = screen.lines().map(\.text).joined(separator: "\n")
        #expect(!text.contains("n3w") && !text.contains("s3cret"))
        #expect(text.contains(" Token: •••▏"))
        #expect(screen.handle(.enter) == .set(field: 3, value: "n3w", expected: "s3cret"))
    }

    @Test func aLockedKeyIsDrawnDisabledAndNotChangedAndAPageResetSkipsIt() throws {
        let dir = try TemporaryDirectory()
        let locks = dir.path("xdg/App/locked.plist")
        var screen = try Self.screen(in: dir)
        for _ in 0..<4 { _ = screen.handle(.down) }
        let line = try #require(screen.lines().first { $0.text.hasPrefix("> Proxy") })
        #expect(line.style == .selectedDim && line.text.contains("locked"))
        #expect(screen.detail == " Network/proxy: locked by \(locks)")
        #expect(screen.handle(.enter) == nil)
        #expect(screen.message == "Proxy is locked by \(locks): it cannot be changed")
        #expect(screen.handle(.character("r")) == nil)
        #expect(screen.handle(.character("R")) == .reset(fields: [0, 1, 2, 3, 5]))
    }

    @Test func searchAndTheChangedOnlyFilterShowMatchingKeys() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        _ = screen.handle(.character("/"))
        for c in "time" { _ = screen.handle(.character(c)) }
        #expect(screen.visibleRows == [.field(2)])
        _ = screen.handle(.escape)
        _ = screen.handle(.character("c"))
        #expect(screen.visibleRows == [.field(3), .field(5)])
        #expect(screen.lines()[0].text.contains("[changed only]"))
    }

    @Test func anOutsideChangeDuringAnEditIsTold() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        for _ in 0..<2 { _ = screen.handle(.down) }
        _ = screen.handle(.enter)
        let contents: PlistDictionary = ["Network": ["token": "s3cret", "timeout": 50], "extra": 7]
        let layout = EditLayout.build(schema: try PlistSchema(Self.schema), panes: nil, contents: contents)
        screen.update(layout: layout, states: EditState.states(of: layout, contents: contents, system: PlistSystemLayers()))
        #expect(screen.message?.hasPrefix("Timeout changed elsewhere to 50") == true)
        guard case .editing(2, _, let expected) = screen.mode else { Issue.record("not editing: \(screen.mode)"); return }
        #expect(expected == 50)
    }

    @Test(arguments: [(24, 80), (8, 20), (40, 132)])
    func everyFrameIsExactlyTheTerminalsSize(rows: Int, columns: Int) throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        (screen.rows, screen.columns) = (rows, columns)
        let lines = screen.lines()
        #expect(lines.count == rows)
        #expect(lines.allSatisfy { $0.text.count == columns })
    }

    @Test func onlyChangedLinesAreDrawnAgain() throws {
        var screen = try Self.screen(in: TemporaryDirectory())
        var frame = EditFrame(color: false)
        let first = frame.draw(screen.lines())
        #expect(first.hasPrefix("\u{1B}[H\u{1B}[2J"))
        #expect(frame.draw(screen.lines()).isEmpty)
        _ = screen.handle(.down)
        let moved = frame.draw(screen.lines())
        // The line left, the line reached, and the detail line under the list.
        #expect(moved.components(separatedBy: "\u{1B}[").filter { $0.hasSuffix("H") || $0.contains(";1H") }.count == 3, "\(moved)")
    }

    @Test func aValueInsideAListOrDictionaryIsReplacedAndRemovedByItsPath() {
        let value: PlistValue = ["a", ["host": "h", "ports": [1, 2]]]
        #expect(EditScreen.value(value, at: [.index(1), .key("ports"), .index(1)]) == 2)
        #expect(EditScreen.replacing(in: value, at: [.index(1), .key("ports"), .index(0)], with: 8) == ["a", ["host": "h", "ports": [8, 2]]])
        #expect(EditScreen.replacing(in: value, at: [.index(1), .key("host")], with: nil) == ["a", ["ports": [1, 2]]])
        #expect(EditScreen.replacing(in: value, at: [.index(5)], with: 1) == nil)
        #expect(EditScreen.replacing(in: value, at: [], with: "whole") == "whole")
    }

    @Test func aListPageAddsDeletesAndMovesElementsAsChangesOfTheWholeKey() throws {
        let contents: PlistDictionary = ["list": ["a", "b"]]
        let layout = EditLayout.build(schema: nil, panes: nil, contents: contents)
        var screen = EditScreen(name: "App", layout: layout, states: EditState.states(of: layout, contents: contents, system: PlistSystemLayers()))
        #expect(screen.handle(.enter) == nil)
        #expect(screen.containers.count == 1)
        #expect(screen.lines()[0].text.hasPrefix(" settings edit App › list "))
        #expect(screen.handle(.character("J")) == .set(field: 0, value: ["b", "a"], expected: ["a", "b"]))
        #expect(screen.cursor == 1)
        #expect(screen.handle(.character("d")) == .set(field: 0, value: ["a"], expected: ["a", "b"]))
        _ = screen.handle(.character("a"))
        for c in "42" { _ = screen.handle(.character(c)) }
        #expect(screen.handle(.enter) == .set(field: 0, value: ["a", "b", 42], expected: ["a", "b"]))
        _ = screen.handle(.escape)
        _ = screen.handle(.escape)
        #expect(screen.containers.isEmpty)
    }

    @Test func aDateIsPickedByFieldsThatRollOverAndAreCheckedWhenApplied() throws {
        var date = EditDate(.date(try #require(ISO8601DateFormatter().date(from: "2024-12-31T23:59:59Z"))))
        #expect(date.shown == "[2024]-12-31 23:59:59")
        date.select(5)
        date.step(by: 1)
        #expect(date.shown == "2025-01-01 00:00:[00]")
        date.select(2)
        for c in "32" { date.type(c) }
        #expect(date.selected == 3)
        guard case .failure(let reason) = date.date else { Issue.record("day 32 taken"); return }
        #expect(reason.message == "day 32 is not 1…31 in 2025-01")
    }

    @Test func aDateBeingPickedFollowsItsKeyWhenAKeyComesBeforeIt() throws {
        let date = PlistValue.date(try #require(ISO8601DateFormatter().date(from: "2024-05-17T09:30:00Z")))
        func states(_ contents: PlistDictionary) -> (EditLayout, [EditState]) {
            let layout = EditLayout.build(schema: nil, panes: nil, contents: contents)
            return (layout, EditState.states(of: layout, contents: contents, system: PlistSystemLayers()))
        }
        let (layout, before) = states(["when": date])
        var screen = EditScreen(name: "App", layout: layout, states: before)
        _ = screen.handle(.enter)
        _ = screen.handle(.up)
        let (grown, after) = states(["added": 1, "when": date])
        screen.update(layout: grown, states: after)
        guard case .picking(1, let picked, date) = screen.mode else { Issue.record("not picking the date: \(screen.mode)"); return }
        #expect(picked.shown == "[2025]-05-17 09:30:00")
        #expect(screen.handle(.enter) == .set(field: 1, value: .date(try #require(ISO8601DateFormatter().date(from: "2025-05-17T09:30:00Z"))), expected: date))
    }

    @Test func wideCharactersTakeTwoColumnsAndCombiningMarksNone() {
        #expect("設定".terminalColumns == 4)
        #expect("🎉a".terminalColumns == 3)
        #expect("e\u{301}".terminalColumns == 1)
        #expect("\u{301}".terminalColumns == 0)
        #expect(EditScreen.fit("設定設定", 6) == "設定… ")
        #expect(EditScreen.fit("設定", 6) == "設定  ")
        #expect(EditScreen.fit("🎉🎉🎉", 5).terminalColumns == 5)
    }

    @Test func aLayerFileIsReadAgainOnlyWhenItsIdentityChanges() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.writePlist("defaults.plist", "<dict><key>a</key><integer>1</integer></dict>").path
        var cache = EditFileCache()
        func read(_ path: String) throws(CLIError) -> PlistDictionary {
            do { return try PlistValue(contentsOf: URL(filePath: path)).dictionaryValue ?? [:] } catch { throw .failure("\(error)") }
        }
        #expect(cache.dictionary(at: file, read) == ["a": 1])
        #expect(cache.dictionary(at: file, read) == ["a": 1])
        #expect(cache.reads == 1)
        _ = try dir.writePlist("defaults.plist", "<dict><key>a</key><integer>22</integer></dict>")
        #expect(cache.dictionary(at: file, read) == ["a": 22])
        #expect(cache.reads == 2)
        #expect(cache.dictionary(at: dir.path("missing.plist"), read) == nil)
        // Through a link, the file it leads to is read each time (the link's identity stays).
        let link = dir.path("link.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        #expect(cache.dictionary(at: link, read) == ["a": 22])
        _ = try dir.writePlist("defaults.plist", "<dict><key>a</key><integer>333</integer></dict>")
        #expect(cache.dictionary(at: link, read) == ["a": 333])
    }

    @Test func onlyTheRowsOnScreenAreDrawnAndTheCursorStaysOnIt() throws {
        var contents = PlistDictionary()
        for i in 0..<100 { contents["key\(i)"] = .integer(PlistInteger(Int64(i))) }
        let layout = EditLayout.build(schema: nil, panes: nil, contents: contents)
        var screen = EditScreen(name: "App", layout: layout, states: EditState.states(of: layout, contents: contents, system: PlistSystemLayers()))
        _ = screen.handle(.end)
        screen.top = screen.scrolledTop
        let lines = screen.lines().map(\.text)
        #expect(lines.count == 24)
        #expect(lines[2 + screen.bodyHeight - 1].hasPrefix("> key99 "), "\(lines)")
        #expect(lines[2].hasPrefix("  key81 "), "\(lines)")
        _ = screen.handle(.home)
        #expect(screen.lines().map(\.text)[2].hasPrefix("> key0 "))
    }

    @Test func keysAreDecodedFromATerminalsBytes() {
        #expect(Key.decode(Array("\u{1B}[A\u{1B}[B\u{1B}OC\u{1B}[5~\u{1B}".utf8)) == [.up, .down, .right, .pageUp, .escape])
        #expect(Key.decode(Array("jé\r\u{7F}\u{15}".utf8)) == [.character("j"), .character("é"), .enter, .backspace, .ctrl("u")])
    }
}
