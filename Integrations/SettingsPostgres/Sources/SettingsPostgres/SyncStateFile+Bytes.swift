import Foundation

/// The state in a slot of the state file (``SyncStateStorage``): a compact little-endian record,
/// written and read field by field. It replaced a binary plist there: building and encoding the
/// plist of every leaf was three fifths of a state save (issue 30, item 12).
///
/// Layout: `app`, `device` (16 bytes), `cursorSeq`, `cursorKey`, `lastHLC`, `clockOffsetMs`,
/// `machine` (empty: unknown), the devices (a count, 16 bytes each), the leaves (a count; each a
/// path, hlc, device index, digest (a flag byte, then 8 bytes when present), state, and while
/// applying the register before it: hlc, device index, digest, state, exists), the secret paths
/// (a count, each a path). Strings are a 4-byte length and UTF-8; counts 4 bytes; numbers 8.
extension SyncStateFile {
    var bytes: [UInt8] {
        var out = ByteWriter()
        var devices: [UUID] = [], index: [UUID: UInt32] = [:]
        func deviceIndex(_ d: UUID) -> UInt32 {
            if let i = index[d] { return i }
            index[d] = UInt32(devices.count)
            devices.append(d)
            return UInt32(devices.count - 1)
        }
        // Devices first in the file, but found while writing the leaves: leaves go to their own buffer.
        var leafBytes = ByteWriter()
        leafBytes.count(leaves.count)
        for (path, r) in leaves {
            leafBytes.string(path)
            leafBytes.int(r.hlc)
            leafBytes.word(deviceIndex(r.device))
            leafBytes.digest(r.digest)
            leafBytes.byte(UInt8(r.state.rawValue))
            if r.state == .applying {
                leafBytes.int(r.prevHLC ?? 0)
                leafBytes.word(deviceIndex(r.prevDevice ?? device))
                leafBytes.digest(r.prevDigest)
                leafBytes.byte(UInt8(r.prevState?.rawValue ?? 0))
                leafBytes.byte(r.prevExists == true ? 1 : 0)
            }
        }
        out.string(app)
        out.uuid(device)
        out.int(cursorSeq)
        out.string(cursorKey)
        out.int(lastHLC)
        out.int(clockOffsetMs)
        out.string(machine ?? "")
        out.count(devices.count)
        for d in devices { out.uuid(d) }
        out.bytes += leafBytes.bytes
        out.count(secretLeaves.count)
        for path in secretLeaves { out.string(path) }
        return out.bytes
    }

    /// Reads ``bytes``; `nil` when they are not a state (cut short, a count or length past the
    /// end, a string that is not UTF-8, an unknown state, a device index out of range, bytes left over).
    init?(bytes: ArraySlice<UInt8>) {
        var r = ByteReader(bytes: bytes)
        guard let app = r.string(), let device = r.uuid() else { return nil }
        self.init(app: app, device: device)
        guard let cursorSeq = r.int(), let cursorKey = r.string(), let lastHLC = r.int(), let clockOffsetMs = r.int(),
              let machine = r.string(), let deviceCount = r.count(each: 16)
        else { return nil }
        (self.cursorSeq, self.cursorKey, self.lastHLC, self.clockOffsetMs) = (cursorSeq, cursorKey, lastHLC, clockOffsetMs)
        self.machine = machine.isEmpty ? nil : machine
        var devices: [UUID] = []
        devices.reserveCapacity(deviceCount)
        for _ in 0..<deviceCount {
            guard let d = r.uuid() else { return nil }
            devices.append(d)
        }
        func dev(_ i: UInt32?) -> UUID? { i.flatMap { Int($0) < devices.count ? devices[Int($0)] : nil } }
        guard let leafCount = r.count(each: 22) else { return nil }
        leaves.reserveCapacity(leafCount)
        for _ in 0..<leafCount {
            guard let path = r.string(), let hlc = r.int(), let d = dev(r.word()), let digest = r.digest(),
                  let state = r.byte().flatMap({ LeafRegister.State(rawValue: Int($0)) })
            else { return nil }
            var reg = LeafRegister(hlc: hlc, device: d, digest: digest, state: state)
            if state == .applying {
                guard let h = r.int(), let pd = dev(r.word()), let pg = r.digest(),
                      let ps = r.byte().flatMap({ LeafRegister.State(rawValue: Int($0)) }), let e = r.byte(), e <= 1
                else { return nil }
                (reg.prevHLC, reg.prevDevice, reg.prevDigest, reg.prevState, reg.prevExists) = (h, pd, pg, ps, e == 1)
            }
            leaves[path] = reg
        }
        guard let secretCount = r.count(each: 4) else { return nil }
        for _ in 0..<secretCount {
            guard let path = r.string() else { return nil }
            secretLeaves.insert(path)
        }
        guard r.atEnd else { return nil }
    }
}

/// Little-endian fields into bytes (``SyncStateFile/bytes``).
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func word(_ w: UInt32) { withUnsafeBytes(of: w.littleEndian) { bytes += $0 } }
    mutating func int(_ i: Int64) { withUnsafeBytes(of: i.littleEndian) { bytes += $0 } }
    mutating func count(_ n: Int) { word(UInt32(clamping: n)) }
    mutating func string(_ s: String) {
        count(s.utf8.count)
        bytes += s.utf8
    }
    mutating func uuid(_ u: UUID) { withUnsafeBytes(of: u.uuid) { bytes += $0 } }
    mutating func digest(_ g: Int64?) {
        if let g { byte(1); int(g) } else { byte(0) }
    }
}

/// Little-endian fields out of bytes, every read bounded by what is left (`nil` past the end).
struct ByteReader {
    var bytes: ArraySlice<UInt8>

    var atEnd: Bool { bytes.isEmpty }

    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, n <= bytes.count else { return nil }
        defer { bytes = bytes.dropFirst(n) }
        return bytes.prefix(n)
    }

    mutating func byte() -> UInt8? { take(1)?.first }
    mutating func word() -> UInt32? {
        take(4).map { $0.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }
    mutating func int() -> Int64? {
        take(8).map { Int64(bitPattern: $0.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
    }
    /// A count of items of at least `each` bytes: never more than the bytes left could hold.
    mutating func count(each: Int) -> Int? {
        guard let n = word().map(Int.init), n <= bytes.count / max(each, 1) else { return nil }
        return n
    }
    mutating func string() -> String? {
        guard let n = count(each: 1), let utf8 = take(n) else { return nil }
        return String(validating: utf8, as: UTF8.self)
    }
    mutating func uuid() -> UUID? {
        guard let b = take(16) else { return nil }
        let a = Array(b)
        return UUID(uuid: (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]))
    }
    mutating func digest() -> Int64?? {
        switch byte() {
        case 0?: return .some(nil)
        case 1?: return int().map { .some($0) }
        default: return nil
        }
    }
}
