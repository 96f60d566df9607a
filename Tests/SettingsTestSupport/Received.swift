import Foundation

/// Collects what callbacks receive, from any thread: `append` in the callback, `all` to check.
///
/// ```swift
/// let seen = Received<String>()
/// let observation = settings.$theme.onChange { new, _ in seen.append(new) }
/// settings.theme = "dark"
/// #expect(seen.all == ["dark"])
/// ```
public final class Received<T: Sendable>: @unchecked Sendable {
    // Unchecked: `items` is read and written only while `lock` is held. An `NSLock` (a pthread
    // mutex) rather than `Mutex`: CI runs these tests under ThreadSanitizer, which sees pthread
    // locks but not `Synchronization.Mutex` on Linux (see Sources/Settings/Internal/Mutex+Sanitizer.swift,
    // which the library's own code uses and test support cannot).
    private let lock = NSLock()
    private var items: [T] = []

    /// An empty collector.
    public init() {}

    /// Adds `item`.
    public func append(_ item: T) { lock.withLock { items.append(item) } }

    /// Everything added, in order.
    public var all: [T] { lock.withLock { items } }
}
