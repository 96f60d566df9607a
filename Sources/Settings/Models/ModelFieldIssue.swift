import SettingsPlist

/// A stored value of a model that did not decode: the field kept its default (or the array
/// element or dictionary entry was left out), and its stored value is kept on disk.
public struct ModelFieldIssue: Hashable, Sendable, CustomStringConvertible {
    /// The field's key path in the archive (`window.zoom`).
    public var field: String
    /// Why it did not decode.
    public var message: String
    /// Where the value is, array positions included (`nil`: `field` split at its dots).
    var location: [PlistPathStep]?
    /// What took the value's place.
    var outcome: PlistRecoveredIssue.Outcome = .fellBack

    /// Creates an issue.
    ///
    /// - Parameters:
    ///   - field: the field's key path.
    ///   - message: why it did not decode.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    init(field: String, message: String, location: [PlistPathStep]) {
        self.init(field: field, message: message)
        self.location = location
    }

    init(recovered: PlistRecoveredIssue) {
        self.init(field: recovered.codingPath, message: recovered.message, location: recovered.location)
        outcome = recovered.outcome
    }

    /// ``location``, or the dictionary keys `field` names.
    var steps: [PlistPathStep] {
        location ?? field.split(separator: ".").map { .key(String($0)) }
    }

    /// `field 'window.zoom': expected a real, found a string`.
    public var description: String { "field '\(field)': \(message)" }
}
