// settings-fault: the writer processes of the fault tests (Tools/fault-tests.py).
//
//   settings-fault crash-writer FILE           sets keys and flushes in a loop, printing each
//                                              counter value whose flush() returned; killed by the test
//   settings-fault writer FILE PREFIX COUNT    COUNT writes of distinct keys PREFIX-0..., each flushed
//   settings-fault forget-and-exit FILE COUNT  COUNT stores on FILE, each set one key and was dropped
//                                              at once; then exit(0) without a flush
//   settings-fault defaults-writer SUITE PREFIX COUNT
//                                              the same through UserDefaults(suiteName:) + synchronize()
//   settings-fault model-edit FILE FIELD VALUE loads a model file (fields `name` and `theme`), prints
//                                              "loaded", waits for a line on standard input, sets
//                                              FIELD to VALUE, saves, prints "saved"
//   settings-fault model-churn DIR COUNT       loads and saves COUNT model files of 100 KB in DIR,
//                                              keeping no model; prints the resident set size (KiB)
//                                              before and after
import Foundation
import Settings

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("settings-fault: \(message)\n".utf8))
    exit(2)
}

var args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first else { fail("usage: settings-fault crash-writer|writer|defaults-writer ...") }
args.removeFirst()

switch mode {
case "crash-writer":
    guard args.count == 1 else { fail("usage: settings-fault crash-writer FILE") }
    let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: .milliseconds(1), externalChanges: .ignored)
    let start = store["counter"]?.intValue ?? 0
    FileHandle.standardOutput.write(Data("start \(start)\n".utf8))
    var i = start
    while true {
        i += 1
        store["counter"] = .integer(PlistInteger(Int64(i)))
        store[SettingsKey("k\(i % 200)")] = .integer(PlistInteger(Int64(i)))
        store[SettingsKey("Nested/k\(i % 7)")] = .string(String(repeating: "x", count: i % 300))
        if i % 3 == 0 {
            do {
                try await store.flush()
            } catch {
                fail("\(error)")
            }
            FileHandle.standardOutput.write(Data("\(i)\n".utf8))  // unbuffered: the test reads it at once
        }
    }
case "writer":
    guard args.count == 3, let count = Int(args[2]) else { fail("usage: settings-fault writer FILE PREFIX COUNT") }
    let store = SettingsStore.file(URL(filePath: args[0]), externalChanges: .ignored)
    for i in 0..<count {
        store[SettingsKey("\(args[1])-\(i)")] = .integer(PlistInteger(Int64(i)))
        do {
            try await store.flush()
        } catch {
            fail("\(error)")
        }
    }
case "forget-and-exit":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault forget-and-exit FILE COUNT") }
    func writeAndForget(_ i: Int) {
        let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: .seconds(60), externalChanges: .ignored)
        store[SettingsKey("k\(i)")] = .integer(PlistInteger(Int64(i)))
    }
    for i in 0..<count { writeAndForget(i) }
    exit(0)
case "defaults-writer":
    guard args.count == 3, let count = Int(args[2]) else { fail("usage: settings-fault defaults-writer SUITE PREFIX COUNT") }
    guard let defaults = UserDefaults(suiteName: args[0]) else { fail("no suite \(args[0])") }
    for i in 0..<count {
        defaults.set(i, forKey: "\(args[1])-\(i)")
        defaults.synchronize()
    }
case "model-edit":
    guard args.count == 3, ["name", "theme"].contains(args[1]) else { fail("usage: settings-fault model-edit FILE name|theme VALUE") }
    let url = URL(filePath: args[0])
    do {
        var profile = try SharedProfile.load(from: url)
        FileHandle.standardOutput.write(Data("loaded\n".utf8))
        _ = readLine()
        if args[1] == "name" { profile.name = args[2] } else { profile.theme = args[2] }
        try profile.save(to: url)
        FileHandle.standardOutput.write(Data("saved\n".utf8))
    } catch {
        fail("\(error)")
    }
case "model-churn":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault model-churn DIR COUNT") }
    func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    let before = residentKiB()
    let padding = String(repeating: "x", count: 100_000)
    do {
        for i in 0..<count {
            let url = URL(filePath: args[0]).appending(path: "m\(i).plist")
            try PlistValue.dictionary(["name": .string(padding)]).write(to: url)
            var profile = try SharedProfile.load(from: url)
            profile.theme = "t\(i)"
            try profile.save(to: url)
        }
    } catch {
        fail("\(error)")
    }
    print("rss-before-kib \(before) rss-after-kib \(residentKiB())")
default:
    fail("unknown mode \(mode)")
}

/// The model file two `model-edit` processes share.
struct SharedProfile: SettingsModel, Codable {
    var name = "Guest"
    var theme = "light"
}
