// SettingsExample: the first program to run. It shows what the package does today, end to end,
// and prints where its files are so you can open them.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

struct Profile: Codable, Equatable {
    var name: String
    var volume: Double
    var favourites: [String]
    var lastLaunch: Date
    var homepage: URL
}

func run() throws {
    let directory = FileManager.default.temporaryDirectory.appending(path: "SettingsExample")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

    print("1. A settings tree, typed, with its key order kept:")
    let settings: PlistValue = [
        "autoPlay": false,
        "Network": ["timeout": 30.0, "retries": 3],
        "accent": "#FF8800",
        "greeting": "Grüße & <welcome>",
    ]
    print("   \(settings)")

    print("\n2. Written as XML (like Apple's tools) and as binary, then read back:")
    let xmlURL = directory.appending(path: "settings.plist")
    let binaryURL = directory.appending(path: "settings.bplist")
    try settings.write(to: xmlURL, format: .xml)
    try settings.write(to: binaryURL, format: .binary)
    let fromXML = try PlistValue(contentsOf: xmlURL)
    let fromBinary = try PlistValue(contentsOf: binaryURL)
    print("   \(xmlURL.path)  (\(try Data(contentsOf: xmlURL).count) bytes, reads back equal: \(fromXML == settings))")
    print("   \(binaryURL.path)  (\(try Data(contentsOf: binaryURL).count) bytes, reads back equal: \(fromBinary == settings))")
    print("   Network/timeout = \(fromXML["Network"]?["timeout"]?.doubleValue ?? 0)")

    print("\n3. A Codable model as a human-readable plist (URL as a string, Date as <date>):")
    let profile = Profile(name: "Ada", volume: 0.8, favourites: ["jazz", "piano"],
                          lastLaunch: Date(timeIntervalSinceReferenceDate: 800_000_000),
                          homepage: URL(filePath: "/home/ada/music"))
    let profileURL = directory.appending(path: "profile.plist")
    var encoder = PlistEncoder()
    encoder.outputFormat = .xml
    try encoder.encode(profile).write(to: profileURL)
    let loaded = try PlistDecoder().decode(Profile.self, from: Data(contentsOf: profileURL))
    print("   \(profileURL.path): loaded equal: \(loaded == profile)")
    print(String(decoding: try Data(contentsOf: profileURL), as: UTF8.self).split(separator: "\n").map { "   | " + $0 }.joined(separator: "\n"))

    print("\n4. A malformed file gives an error with its line and column:")
    let broken = directory.appending(path: "broken.plist")
    try Data("<plist><dict>\n  <key>a</key>\n  <integr>1</integr>\n</dict></plist>".utf8).write(to: broken)
    do {
        _ = try PlistValue(contentsOf: broken)
    } catch {
        print("   \(error)")
    }
    print("\nInspect the files with: swift run settings print --typed-json \(xmlURL.path)")
}

do {
    try run()
} catch {
    print("SettingsExample failed: \(error)")
}
