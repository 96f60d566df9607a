import Foundation
import Settings

/// `@StoredModel` reads and writes beside `@Setting`'s, and model files of about 1 MB saved and
/// loaded beside `PropertyListEncoder` + write and read + `PropertyListDecoder` on the same model.
enum ModelBenchmarks {
    /// A model file's worth of records.
    struct Library: SettingsModel, Codable, Equatable {
        var owner = "Ada"
        var records: [Model] = []
    }

    /// A small model, like one kept in a settings file.
    struct Profile: SettingsModel, Codable, Equatable {
        var name = "Ada"
        var volume = 0.5
        var favourites = ["jazz", "piano"]
    }

    struct Holder {
        @StoredModel var profile: Profile
        @Setting var volume: Double
        init(store: SettingsStore) {
            _profile = StoredModel("profile", store: store)
            _volume = Setting("volume", default: 0.5, store: store)
        }
    }

    static func run(_ h: Harness, targetBytes: Int) throws {
        let store = SettingsStore.inMemory()
        let holder = Holder(store: store)
        blackHole(holder.profile)
        let batch = 1000
        func perOp(_ workload: String, _ system: String, _ body: () -> Void) {
            let s = h.medianSeconds(body) / Double(batch)
            h.record(Harness.Result(workload: workload, system: system, value: s * 1e9, unit: "ns/op", seconds: s))
        }
        perOp("stored-model-read", "Settings") { for _ in 0..<batch { blackHole(holder.profile) } }
        perOp("stored-model-read", "@Setting<Double> (same store)") { for _ in 0..<batch { blackHole(holder.volume) } }
        var i = 0.0
        perOp("stored-model-write", "Settings") {
            for _ in 0..<batch { i += 1; var p = holder.profile; p.volume = i; holder.profile = p }
        }
        perOp("stored-model-write", "@Setting<Double> (same store)") { for _ in 0..<batch { i += 1; holder.volume = i } }

        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-models-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var library = Library()
        library.records = Model.many(max(1, targetBytes / 560))
        let ours = directory.appending(path: "ours.plist")
        let theirs = directory.appending(path: "theirs.plist")
        try library.save(to: ours)
        let bytes = try Data(contentsOf: ours).count
        print("# model file: \(library.records.count) records, \(bytes) bytes of XML")
        guard try Library.load(from: ours) == library else { throw BenchError.mismatch("model file") }

        try h.throughput("model-file-save-xml", "Settings", bytes: bytes) { try library.save(to: ours) }
        try h.throughput("model-file-save-xml", "PropertyListEncoder + Data.write(.atomic)", bytes: bytes) {
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .xml
            try encoder.encode(library).write(to: theirs, options: .atomic)
        }
        try h.throughput("model-file-load-xml", "Settings", bytes: bytes) { blackHole(try Library.load(from: ours)) }
        try h.throughput("model-file-load-xml", "Data(contentsOf:) + PropertyListDecoder", bytes: bytes) {
            blackHole(try PropertyListDecoder().decode(Library.self, from: Data(contentsOf: theirs)))
        }
    }
}
