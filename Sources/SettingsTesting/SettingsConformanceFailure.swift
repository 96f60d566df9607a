/// What a ``SettingsConformance`` check found: the type checked and each problem, one per line.
public struct SettingsConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// The type (or container) checked.
    public var subject: String
    /// Each problem found.
    public var problems: [String]

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - subject: the type checked.
    ///   - problems: the problems.
    public init(subject: String, problems: [String]) {
        self.subject = subject
        self.problems = problems
    }

    /// `Theme: 1 problem`, then one line per problem.
    public var description: String {
        (["\(subject): \(problems.count) problem\(problems.count == 1 ? "" : "s")"] + problems.map { "- \($0)" }).joined(separator: "\n")
    }
}
