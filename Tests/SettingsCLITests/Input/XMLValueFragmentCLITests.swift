import Foundation
import Testing
import SettingsTestSupport

/// `-insert`/`-replace` with `-xml`: a fragment (`<array>…</array>`, as plutil takes) is XML,
/// whatever letter its first tag starts with, and one nested too deep is refused.
struct XMLValueFragmentCLITests {
    @Test(arguments: [
        ("<array><integer>1</integer></array>", "array"),
        ("<dict><key>a</key><true/></dict>", "dictionary"),
        ("<data>AAE=</data>", "data"),
        ("<date>2026-01-02T03:04:05Z</date>", "date"),
        ("<false/>", "bool"),
        ("<string>x</string>", "string"),
        ("<?xml version=\"1.0\"?><plist version=\"1.0\"><array/></plist>", "array"),
    ])
    func aFragmentIsReadAsXML(_ fragment: String, _ type: String) throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", "<plist><dict/></plist>").path
        // Before: "<a…", "<d…" and "<f…" were read as OpenStep data and refused
        // ("data needs two hex digits per byte").
        let out = try CLI.run(["-insert", "k", "-xml", fragment, file], environment: [:])
        #expect(out.status == 0, "\(fragment): \(out.stderr)")
        #expect(try CLI.run(["-type", "k", file], environment: [:]).stdout.contains(type))
    }

    @Test func aFragmentNestedTooDeepIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", "<plist><dict/></plist>").path
        let before = try Data(contentsOf: URL(filePath: file))
        let deep = String(repeating: "<array>", count: 600) + String(repeating: "</array>", count: 600)
        let out = try CLI.run(["-insert", "k", "-xml", deep, file], environment: [:])
        #expect(out.status == 1)
        #expect(out.stderr.contains("deeper than 512"))
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
    }
}
