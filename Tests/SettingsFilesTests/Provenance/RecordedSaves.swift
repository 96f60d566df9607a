import SettingsPlist
@testable import SettingsFiles

// What the provenance tests share: saves of a settings file through a transaction with a
// writer's recorder, as a program's store or the tool makes them.

/// Saves `path` once with `recorder`: each of `keys` set to `value` (removed for `nil`) by
/// `writer`, over what the file holds now. `known` is the file as this writer last read or
/// wrote it, updated when the save writes.
func setMany(_ path: String, _ keys: [[String]], _ value: PlistValue?, recorder: inout PlistRecorder?,
             known: inout SettingsFileTransaction.Known?, by writer: SettingsProvenance) throws {
    let result = try SettingsFileTransaction.run(at: path, options: .init(), known: known, recorder: &recorder) {
        (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
        var contents = current.contents ?? PlistDictionary()
        for key in keys { _ = contents.setValue(value, at: key[...]) }
        return .init(contents: contents, changed: keys, writer: writer)
    }
    if case .written(let written) = result { known = written.known }
}

/// ``setMany(_:_:_:recorder:known:by:)`` by a writer that keeps nothing of the file.
func setMany(_ path: String, _ keys: [[String]], _ value: PlistValue?, recorder: inout PlistRecorder?,
             by writer: SettingsProvenance) throws {
    var known: SettingsFileTransaction.Known?
    try setMany(path, keys, value, recorder: &recorder, known: &known, by: writer)
}

/// ``setMany(_:_:_:recorder:by:)`` of one key.
func set(_ path: String, _ key: [String], _ value: PlistValue?, recorder: inout PlistRecorder?,
         by writer: SettingsProvenance) throws {
    try setMany(path, [key], value, recorder: &recorder, by: writer)
}
