/// A value that did not decode while decoding in recovery mode, and what was done instead.
package struct PlistRecoveredIssue: Sendable {
    /// What took the failed value's place.
    package enum Outcome: Sendable {
        /// The value's default (from the defaults tree) or `nil` (an optional without one).
        case fellBack
        /// An array element that was left out of the decoded array.
        case droppedElement
        /// A dictionary entry that was left out of the decoded dictionary.
        case droppedEntry
    }

    /// Where the value is, in the decoded tree's own coordinates (array positions as stored).
    package var location: [PlistPathStep]
    /// The location as text (`servers[2].port`).
    package var codingPath: String
    /// Why it did not decode.
    package var message: String
    package var outcome: Outcome
}
