#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
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

    func install(signals: [Int32], timeout: Duration) {
        state.locked { s in
            s.timeout = timeout
            for number in signals where s.sources[number] == nil {
                signal(number, SIG_IGN)  // the source receives it; the default action is restored to end the process
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { TerminationSaver.shared.terminate(by: number) }
                source.resume()
                s.sources[number] = source
            }
        }
    }

    /// Saves every pending store within the timeout, then ends the process with `number`.
    private func terminate(by number: Int32) {
        let timeout = state.locked { $0.timeout }
        PendingSaves.saveAll(within: timeout, when: "at signal \(number)")
        signal(number, SIG_DFL)
        // Dispatch's threads block signals (and a process may inherit a mask): unblock it here.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        // Still here: the signal's default action is not to end the process. End it normally.
        exit(128 + number)
    }
}
