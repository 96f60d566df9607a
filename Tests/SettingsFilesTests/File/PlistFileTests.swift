import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport


/// `PlistFile`: the one implementation of reading, replacing, locking and the link rule.
struct PlistFileTests {
    static let plist = "<plist><dict><key>a</key><integer>1</integer></dict></plist>"

    @Test func theLockFileIsDotNameDotLockBesideTheFile() {
        #expect(PlistFile.lockPath(for: "/home/ada/.config/App/settings.plist") == "/home/ada/.config/App/.settings.plist.lock")
        #expect(PlistFile.lockPath(for: "Defaults.plist") == "./.Defaults.plist.lock")
    }

    @Test func directoryEntriesAreListedWhole() throws {
        let dir = try TemporaryDirectory()
        let long = String(repeating: "n", count: 255)          // the longest name a file may have
        let names = ["a", "ä.plist", long, ".hidden"]
        for name in names { try dir.write(name, "x") }
        let listed = try #require(PlistFile.entryNames(inDirectory: dir.path))
        #expect(Set(listed) == Set(names + [".", ".."]))
        #expect(PlistFile.entryNames(inDirectory: dir.path("missing")) == nil)
    }

    @Test func aLinkInPlaceOfTheLockFileIsRefusedAndItsTargetUntouched() throws {
        let dir = try TemporaryDirectory()
        let victim = try dir.write("victim", "precious").path
        let target = try dir.write("settings.plist", Self.plist).path
        #expect(symlink(victim, PlistFile.lockPath(for: target)) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.tryLock(PlistFile.lockPath(for: target)) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let dangling = try dir.write("other.plist", Self.plist).path
        #expect(symlink(dir.path("created-by-lock"), PlistFile.lockPath(for: dangling)) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.tryLock(PlistFile.lockPath(for: dangling)) }
        #expect(!FileManager.default.fileExists(atPath: dir.path("created-by-lock")))
    }

    @Test func aLinkInPlaceOfATemporaryFileIsNeverOpened() throws {
        let dir = try TemporaryDirectory()
        let victim = try dir.write("victim", "precious").path
        let planted = dir.path(PlistFile.temporaryPrefix(for: dir.path("settings.plist")) + "guess")
        #expect(symlink(victim, planted) == 0)
        #expect(PlistFile.createExclusively(planted) == -1 && errno == EEXIST)
        #expect(symlink(dir.path("elsewhere"), dir.path("dangling")) == 0)
        #expect(PlistFile.createExclusively(dir.path("dangling")) == -1 && errno == EEXIST)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(!FileManager.default.fileExists(atPath: dir.path("elsewhere")))
    }

    @Test func replaceLeavesNoTemporaryFileAndKeepsTheMode() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("settings.plist", Self.plist).path
        #expect(chmod(file, 0o640) == 0)
        let old = try #require(try PlistFile.identity(of: file))
        let new = try PlistFile.replace(file, with: Array("new".utf8), permissions: old.permissions, owner: old.owner)
        #expect(new.permissions == 0o640 && new.inode != old.inode)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "new")
        #expect(try dir.listing() == ["settings.plist"])
    }

    @Test func aLockHeldIsBusyAndALockFileRemovedUnderItIsNotTheLockAnyMore() throws {
        let dir = try TemporaryDirectory()
        let lockPath = PlistFile.lockPath(for: dir.path("settings.plist"))
        let first = try #require(try PlistFile.tryLock(lockPath))
        #expect(first.created)
        #expect(try PlistFile.tryLock(lockPath) == nil)  // busy (flock locks are per open file)
        // A waiter that opened the old file before it was removed must not hold "the" lock.
        let stale = open(lockPath, O_RDWR)
        first.release(removingFile: true)
        #expect(flock(stale, LOCK_EX | LOCK_NB) == 0)  // locks the removed file
        let second = try #require(try PlistFile.tryLock(lockPath))  // a new file: not blocked by it
        #expect(second.created)
        close(stale)
        second.release()
    }

    @Test func noLockFileIsCreatedInADirectoryOfAnotherUser() throws {
        guard geteuid() == 0 else { return }  // needs root to give the directory away
        let dir = try TemporaryDirectory()
        let theirs = dir.path("theirs")
        #expect(mkdir(theirs, 0o777) == 0 && chown(theirs, 4321, 4321) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.tryLock(PlistFile.lockPath(for: theirs + "/settings.plist")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)
    }

    @Test func theLinkRuleFollowsOnlyTheUsersOwnLinks() throws {
        let dir = try TemporaryDirectory()
        let target = try dir.write("real.plist", Self.plist).path
        #expect(symlink(target, dir.path("mine.plist")) == 0)
        #expect(try PlistFile.target(of: dir.path("mine.plist")) == PlistFile.Target(path: target, link: dir.path("mine.plist")))
        #expect(try PlistFile.target(of: target) == PlistFile.Target(path: target, link: nil))
        #expect(try PlistFile.target(of: dir.path("new.plist")).path == dir.path("new.plist"))
        guard geteuid() == 0 else { return }
        #expect(symlink(target, dir.path("theirs.plist")) == 0)
        #expect(lchown(dir.path("theirs.plist"), 4321, 4321) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.target(of: dir.path("theirs.plist")) }
        let foreignDirectory = dir.path("foreign")
        #expect(mkdir(foreignDirectory, 0o777) == 0 && chown(foreignDirectory, 4321, 4321) == 0)
        #expect(symlink(foreignDirectory + "/new.plist", dir.path("dangling.plist")) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.target(of: dir.path("dangling.plist")) }
    }

    @Test func readRefusesAFIFOWithoutBlockingAndAFileOverTheLimit() throws {
        let dir = try TemporaryDirectory()
        #expect(mkfifo(dir.path("fifo"), 0o600) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.read(dir.path("fifo")) }
        let big = try dir.write("big", String(repeating: "x", count: 2000)).path
        do {
            _ = try PlistFile.read(big, limit: 1024)
            Issue.record("read past the limit")
        } catch {
            #expect(error.code == EFBIG && error.description.contains("1.0 KiB (1024 bytes)"))
        }
        #expect(try PlistFile.read(dir.path("missing")) == nil)
    }
}
