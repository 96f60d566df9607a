import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// A lock file created by a taker of the lock, and removed by it again while it still holds it
/// (model-file saves, the tool beside a plain file), is never left behind when takers race: the
/// one that created it is the one that holds it first.
struct PlistFileLockTests {
    @Test(.timeLimit(hangLimit)) func aLockFileItsCreatorRemovesIsNeverLeftWhenTakersRace() throws {
        let scratch = try TemporaryDirectory()
        let path = PlistFile.lockPath(for: scratch.path("profile.plist"))
        let failures = Mutex(0)
        var left = 0
        let rounds = 10_000
        for _ in 0..<rounds {
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                // Separate open file descriptions contend for flock as separate processes do.
                guard let lock = try? PlistFile.lock(path, waitingAtMost: .seconds(30)) else {
                    failures.withLock { $0 += 1 }
                    return
                }
                lock.release(removingFile: lock.created)
            }
            if access(path, F_OK) == 0 {
                // Before: a taker opened the file between its creation and its creator's flock,
                // held it as not its own, and left it; every later taker then left it too.
                left += 1
                unlink(path)
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(left == 0, "the lock file was left behind in \(left) of \(rounds) rounds")
        #expect(try scratch.listing() == [], "nothing else is left either")
    }
}
