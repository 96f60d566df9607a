import Foundation

/// `text` with every time stamp as provenance and history print them (`2026-11-26 10:15:02 UTC`)
/// replaced by `TIME`, so a test can compare whole outputs that name when something was seen.
public func maskingTimes(_ text: String) -> String {
    text.replacingOccurrences(of: #"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC"#, with: "TIME", options: .regularExpression)
}
