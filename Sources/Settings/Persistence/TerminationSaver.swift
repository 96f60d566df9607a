#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
import SettingsFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The signal sources of ``SettingsStore/saveOnTermination(signals:timeout:)``.
final class TerminationSaver: Sendable {
    static let shared = TerminationSaver()

    private struct State {
        var sources: [Int32: any DispatchSourceSignal] = [:]
        var timeout: Duration = .seconds(5)
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "settings.termination")
    /// Where the save runs, so the signal sources stay free to receive a second signal.
    private let saving = DispatchQueue(label: "settings.termination.save")
    /// Whether a first signal started the termination save.
    private let terminating = Atomic(false)

    func install(signals: [Int32], timeout: Duration) {
        state.locked { s in
            s.timeout = timeout
            // A signal the process inherited as ignored (`nohup`, a shell's background job) stays
            // ignored, as the shells' conventions expect: it never ends the process.
            for number in signals where s.sources[number] == nil && !SignalDisposition.isIgnored(number) {
                signal(number, SIG_IGN)  // the source receives it; the default action is restored to end the process
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { TerminationSaver.shared.received(number) }
                source.resume()
                s.sources[number] = source
            }
        }
    }

    /// The first signal starts the save (on its own queue, so the sources can receive more);
    /// a second one while it runs (another `SIGTERM`, a `SIGINT` from an impatient user) ends
    /// the process at once, by that signal.
    private func received(_ number: Int32) {
        guard !terminating.exchange(true, ordering: .acquiringAndReleasing) else {
            Self.end(by: number)
        }
        saving.async { TerminationSaver.shared.terminate(by: number) }
    }

    /// Saves every pending store within the timeout, then ends the process with `number`.
    private func terminate(by number: Int32) {
        let timeout = state.locked { $0.timeout }
        PendingSaves.saveAll(within: timeout, when: "at signal \(number)")
        Self.restoreDefault(number)
        raise(number)
        // Still here: the signal's default action is not to end the process. End it normally.
        exit(128 + number)
    }

    /// Ends the process by `number` now, without saving.
    private static func end(by number: Int32) -> Never {
        restoreDefault(number)
        raise(number)
        _exit(128 + number)
    }

    /// Gives `number` its default action and unblocks it on this thread (Dispatch's threads
    /// block signals, and a process may inherit a mask).
    private static func restoreDefault(_ number: Int32) {
        signal(number, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
