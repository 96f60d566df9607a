import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

extension SyncEngine {
    func session(connected: () -> Void) async throws {
        generation += 1
        let gen = generation
        let conn = try await sync.server.connect(id: gen, logger: logger)
        do {
            try await withTaskCancellationHandler {
                try await connectedSession(conn, gen, connected: connected)
            } onCancel: {
                Self.closeNow(conn)
            }
        } catch {
            try? await conn.close()
            throw error
        }
        try? await conn.close()
    }

    func connectedSession(_ conn: PostgresConnection, _ gen: Int, connected: () -> Void) async throws {
        let logger = self.logger
        try await Self.timed(conn, .seconds(15), "schema") { try await Self.checkSchema(conn, logger) }
        let app = sync.app
        let channel = try await Self.timed(conn, .seconds(5), "open") {
            try await conn.query("SELECT channel FROM settings_sync.settings_sync_open(\(app))", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
        }
        let t0 = sync.localNowMs()
        let serverMs = try await Self.timed(conn, .seconds(5), "clock") {
            try await conn.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", logger: logger)
                .decode(Int64.self).reduce(into: Int64(0)) { $0 = $1 }
        }
        let t1 = sync.localNowMs()
        let localMid = (t0 + t1) / 2
        state.clockOffsetMs = serverMs - localMid

        // LISTEN first: notifications sent while we were away are lost, so catch up after.
        guard let events = sync.shared.withLock({ $0.events }) else { throw CancellationError() }
        let listener = Self.listen(conn, channel, gen, events, sync)
        defer { listener.cancel() }
        let deadline = ContinuousClock.now + .seconds(5)
        waiting: while true {
            guard let event = await nextEvent() else { throw CancellationError() }
            switch event {
            case .listening(let g) where g == gen: break waiting
            case .lost(let g, let reason) where g == gen: throw SyncConnectionError(description: reason)
            case .tick where ContinuousClock.now > deadline:
                Self.closeNow(conn)
                throw SyncConnectionError(description: "LISTEN timed out")
            default: continue
            }
        }

        try await checkHorizon(conn)
        reconcileApplying()   // a failed apply (say, the settings file was locked) is settled now
        var ticket = sync.requestedRounds
        var wake = sync.takeWake()
        // The first session follows the start-up scan; the change callback has been on since.
        try await cycle(conn, dirty: wake.dirty, full: gen > 1)
        try await saveStateIfUnsaved()
        sync.completeRounds(upTo: ticket)
        sync.setStatus(.upToDate(seq: state.cursorSeq))
        connected()
        var lastActivity = ContinuousClock.now
        var gate = NotifyGate()

        while true {
            guard let event = await nextEvent() else { throw CancellationError() }
            var pull = false
            var full = false
            switch event {
            case .notify(let g) where g == gen:
                gate.announce(sync.takeNotified(), cursor: state.cursorSeq)
                pull = gate.due(cursor: state.cursorSeq)
                if !pull { continue }   // stale, or paced: no cycle (each one ran a pull before)
            case .lost(let g, let reason) where g == gen:
                throw SyncConnectionError(description: reason)
            case .wake:
                ticket = sync.requestedRounds
                wake = sync.takeWake()
                if wake.reasons.contains(.sync) {
                    full = true
                } else if wake.reasons.contains(.local) {
                    // Debounce: a burst of writes becomes one push.
                    try await Task.sleep(for: .milliseconds(20))
                    let more = sync.takeWake()
                    wake.dirty.merge(more.dirty) { _, later in later }
                    if more.reasons.contains(.sync) { full = true; ticket = sync.requestedRounds }
                }
            case .tick where gate.due(cursor: state.cursorSeq):
                pull = true   // an announcement held back by the gate's pace
            case .tick:
                try await saveStateIfUnsaved()   // a second after the pulls that moved it, at most
                if ContinuousClock.now - lastActivity >= .seconds(15) {
                    _ = try await Self.timed(conn, .seconds(5), "keep-alive") {
                        try await conn.query("SELECT 1", logger: logger).decode(Int32.self).reduce(into: 0) { _, _ in }
                    }
                    lastActivity = ContinuousClock.now
                }
                continue
            default:
                continue
            }
            if full {
                try await cycle(conn, dirty: wake.dirty, full: true)
                try await saveStateIfUnsaved()
                sync.completeRounds(upTo: ticket)
            } else if pull {
                try await cycle(conn, dirty: [:], full: false)
            } else {
                try await cycle(conn, dirty: wake.dirty, full: false)
            }
            wake.dirty = [:]
            if gate.waiting > 0 { try await gate.pulled(cursor: state.cursorSeq, spaceSeq: spaceSeq(conn)) }
            lastActivity = ContinuousClock.now
            sync.setStatus(.upToDate(seq: state.cursorSeq))
        }
    }

    /// The space's last change number, when a pull did not reach an announced one.
    func spaceSeq(_ conn: PostgresConnection) -> () async throws -> Int64 {
        let logger = self.logger, app = sync.app
        return {
            try await Self.timed(conn, .seconds(5), "space seq") {
                try await conn.query("SELECT seq FROM settings_sync.settings_sync_spaces WHERE app = \(app)", logger: logger)
                    .decode(Int64.self).reduce(into: Int64(0)) { $0 = $1 }
            }
        }
    }

    func nextEvent() async -> SyncEvent? {
        let event = await events.next()
        switch event {
        case .tick: sync.tickConsumed()
        case .notify(let g) where g != generation: _ = sync.takeNotified()   // an old connection's: frees the slot
        default: break
        }
        return event
    }

    /// Local changes, pull to the end, push what is pending, pull again (our own push). A cycle
    /// for local edits alone pushes first and pulls once after: the server keeps the newer of two
    /// writes either way (ours is marked superseded, and the conflict reported when the newer
    /// one is pulled), and with many devices of one user writing, a pull before each push was a
    /// second apply (two state saves and a flush) per local write (issue 30, item 12).
    func cycle(_ conn: PostgresConnection, dirty: [SettingsKey: Int64], full: Bool) async throws {
        logger.trace("cycle dirty=\(dirty.count)\(full ? " + all" : "")")
        processDirty(dirty, full: full)
        let pushFirst = !full && !dirty.isEmpty && resyncUnseen == nil && hasPending
        if !pushFirst {
            logger.trace("pull from \(state.cursorSeq)")
            try await pullAll(conn)
        }
        if hasPending {
            logger.trace("push")
            let lastPush = try await pushAll(conn)
            // Others pushed meanwhile: pull past our own rows (and pull when nothing was pushed first).
            if state.cursorSeq < lastPush || (pushFirst && lastPush == 0) {
                logger.trace("pull after push from \(state.cursorSeq)")
                try await pullAll(conn)
            }
        }
        logger.trace("cycle done at \(state.cursorSeq)")
        if state.cursorSeq > 0, ContinuousClock.now - lastCheckIn > .seconds(60) {
            let logger = self.logger, app = sync.app, me = self.me, seq = state.cursorSeq
            _ = try await Self.timed(conn, .seconds(5), "check-in") {
                try await conn.query("SELECT settings_sync.settings_sync_check_in(\(app), \(me), \(seq))", logger: logger)
                return ()
            }
            lastCheckIn = .now
        }
    }

    /// A server reset (its change number behind our cursor) re-uploads; purged tombstones past
    /// our cursor mean a full download.
    func checkHorizon(_ conn: PostgresConnection) async throws {
        let logger = self.logger, app = sync.app
        let rows = try await Self.timed(conn, .seconds(5), "horizon") {
            try await conn.query("SELECT seq, purged_seq FROM settings_sync.settings_sync_spaces WHERE app = \(app)", logger: logger)
                .decode((Int64, Int64).self).reduce(into: [(Int64, Int64)]()) { $0.append($1) }
        }
        let (seq, purged) = rows.first ?? (0, 0)
        if seq < state.cursorSeq {
            state.cursorSeq = 0
            state.cursorKey = ""
            for (path, reg) in state.leaves where reg.state == .synced || reg.state == .superseded {
                if reg.digest != nil { state.leaves[path]?.state = .pending }
            }
        } else if purged > state.cursorSeq {
            // Tombstones we never saw are gone: download everything; synced leaves the download
            // does not mention were deleted meanwhile.
            state.cursorSeq = 0
            state.cursorKey = ""
            resyncUnseen = Set(state.leaves.filter { $0.value.state == .synced && $0.value.digest != nil }.keys)
        }
    }
}

/// What notifications may make the engine pull (issue 30, item 10). Notifications arriving while
/// a pull runs or waits are folded into one (``SettingsSync/queueNotify(_:)``); an announced change
/// number at or below the cursor costs nothing. An announcement that a pull did not reach, and
/// that the space's change number shows was never handed out, was forged (by a DBA, or with the
/// user's own login): the next announcement is then pulled for no earlier than 250 ms later,
/// doubling to 8 s while they stay false. A true one ends the pace. So a flood costs a handful of
/// pulls, whatever its size or pace; a true change still arrives, at worst after the pace.
struct NotifyGate {
    /// The greatest announced change number not yet pulled for (0: none).
    private(set) var waiting: Int64 = 0
    private var notBefore: ContinuousClock.Instant?
    private var pace: Duration = .zero
    static let firstPace: Duration = .milliseconds(250)
    static let longestPace: Duration = .seconds(8)

    mutating func announce(_ seq: Int64, cursor: Int64) {
        if seq > cursor { waiting = max(waiting, seq) }
    }

    /// Whether to pull now for an announcement.
    func due(cursor: Int64, now: ContinuousClock.Instant = .now) -> Bool {
        waiting > cursor && notBefore.map { now >= $0 } != false
    }

    /// After a pull: whether the announcement was true. `spaceSeq` is asked only when the pull
    /// did not reach it (a push whose rows were all superseded announces a number no row keeps).
    mutating func pulled(cursor: Int64, spaceSeq: () async throws -> Int64, now: ContinuousClock.Instant = .now) async rethrows {
        defer { waiting = 0 }
        let reached = try await waiting <= cursor ? true : spaceSeq() >= waiting
        if reached {
            pace = .zero
            notBefore = nil
            return
        }
        pace = pace == .zero ? Self.firstPace : min(pace * 2, Self.longestPace)
        notBefore = now + pace
    }
}
