import Foundation
import SettingsPlist
#if canImport(Glibc)
import Glibc
#endif

/// `settings edit`'s first screen of a 1,000-key domain: a settings file and the schema a
/// program writes beside it (titles, help, groups, ranges, choices), drawn by
/// `settings edit FILE --print-screen`, which builds the screen exactly as the editor does and
/// prints it. Whole process, start to exit: an upper bound of the time to the first screen.
enum EditBenchmarks {
    static let keyCount = 1_000

    static func run(_ h: Harness, quick: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-edit-\(getpid())")
        let companion = directory.appending(path: ".settings.plist.meta")
        try FileManager.default.createDirectory(at: companion, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var contents = PlistDictionary(), groups = PlistDictionary()
        for group in 0..<(keyCount / 50) {
            var properties = PlistDictionary(), values = PlistDictionary()
            for index in 0..<50 {
                let key = "key\(index)", order = group * 50 + index
                var schema: PlistDictionary = ["title": .string("Setting \(order)"), "description": .string("What setting \(order) does"),
                                               "x-order": .integer(PlistInteger(Int64(order))), "x-group": .string("Group \(group)")]
                switch index % 4 {
                case 0: schema["type"] = "boolean"; values[key] = .bool(index % 8 == 0)
                case 1: schema["type"] = "integer"; schema["minimum"] = 0; schema["maximum"] = 100; values[key] = .integer(PlistInteger(Int64(index)))
                case 2: schema["type"] = "string"; schema["enum"] = ["a", "b", "c"]; values[key] = "b"
                default: schema["type"] = "string"; values[key] = .string("value \(order)")
                }
                properties[key] = .dictionary(schema)
            }
            groups["group\(group)"] = .dictionary(["type": "object", "properties": .dictionary(properties)])
            contents["group\(group)"] = .dictionary(values)
        }
        let file = directory.appending(path: "settings.plist")
        try PlistValue.dictionary(contents).write(to: file)
        let schema: PlistValue = .dictionary(["type": "object", "properties": .dictionary(groups)])
        try Data(try schema.jsonInstanceText().utf8).write(to: companion.appending(path: "schema.json"))
        let tool = ConvertBenchmarks.settingsToolPath()
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            print("# settings not built beside settings-bench: `swift build -c release --product settings`")
            return
        }
        print("# edit: \(keyCount) keys with a schema, `settings edit FILE --print-screen`, whole process")
        let runs = quick ? 10 : 40
        var times: [Double] = []
        let quiet = directory.appending(path: "screen.txt").path
        for _ in 0..<runs {
            times.append(try ConvertBenchmarks.spawnAndWait(["/bin/sh", "-c", "exec \"$0\" edit \"$1\" --print-screen > \"$2\"", tool, file.path, quiet]).wall)
        }
        times.sort()
        PersistenceBenchmarks.record(h, "edit-first-screen-\(keyCount)-keys", "Settings", times[times.count / 2])
    }
}
