/// Calendar arithmetic for plist dates: seconds since 2001-01-01T00:00:00Z in the proleptic
/// Gregorian calendar, UTC. Pure integer code: no `Calendar`, no locale, no time zone database.
package enum PlistDate {
    /// Days from 1970-01-01 to 2001-01-01.
    package static let referenceDay: Int64 = 11_323

    /// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm). Months outside
    /// 1...12 and days outside the month roll over instead of failing, as CoreFoundation's do.
    package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Normalise the month into 1...12 first so the algorithm's month arithmetic holds.
        var y = year + (month - 1).floorDiv(12)
        let m = (month - 1).floorMod(12) + 1
        y -= m <= 2 ? 1 : 0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date for a count of days since 1970-01-01.
    package static func civil(days z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (y + (m <= 2 ? 1 : 0), m, d)
    }

    /// Whole seconds since the reference date for a civil date and time, or `nil` on overflow.
    package static func seconds(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) -> Int64? {
        // Keep every intermediate product far from Int64's limits.
        guard abs(year) < 100_000_000, abs(month) < 1_000_000, abs(day) < 1_000_000_000,
              abs(hour) < 1_000_000_000, abs(minute) < 1_000_000_000, abs(second) < 1_000_000_000
        else { return nil }
        let d = days(year: year, month: month, day: day) - referenceDay
        return d * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// `YYYY-MM-DDTHH:MM:SS` for whole seconds since the reference date (no zone suffix).
    static func isoWhole(_ seconds: Int64) -> String {
        let days = seconds.floorDiv(86_400)
        var rem = seconds.floorMod(86_400)
        let (y, m, d) = civil(days: days + referenceDay)
        let hh = rem / 3_600
        rem %= 3_600
        let mi = rem / 60, ss = rem % 60
        let ys = y >= 0 ? pad(y, 4) : "-" + pad(-y, 4)
        return "\(ys)-\(pad(m, 2))-\(pad(d, 2))T\(pad(hh, 2)):\(pad(mi, 2)):\(pad(ss, 2))"
    }

    /// ISO-8601 UTC text for a date: whole seconds (floored) when `fraction` is false, as XML
    /// plists write dates; otherwise with the shortest fraction that reads back to the same double.
    ///
    /// `nil` when the text cannot carry the date: NaN, an infinity, a date outside
    /// ``earliestSeconds`` ... ``latestSeconds`` (years -99,999,999 to 99,999,999, what
    /// ``parse(_:allowFraction:)`` reads), or, with `fraction`, a date so close to a whole second
    /// (`5e-324`) that no fraction of up to 20 digits reads back to it.
    static func isoText(_ t: Double, fraction: Bool) -> String? {
        guard isInTextRange(t) else { return nil }
        let whole = t.rounded(.down)
        let wholeInt = Int64(whole)
        let base = isoWhole(wholeInt)
        guard fraction, t != whole else { return base + "Z" }
        guard let digits = shortestFraction(of: t, whole: wholeInt) else { return nil }
        return base + "." + digits + "Z"
    }

    /// The date as people read it: its ISO-8601 text when it has one (see
    /// ``isoText(_:fraction:)``), else `nan`, `inf`, `-inf` or `1e+300 seconds since
    /// 2001-01-01T00:00:00Z`. Never a made-up year: for descriptions and error messages.
    package static func iso8601(_ t: Double, fraction: Bool) -> String {
        isoText(t, fraction: fraction) ?? nonISOText(t)
    }

    /// `nan`, `inf`, `-inf`, or the seconds since the reference date in words.
    static func nonISOText(_ t: Double) -> String {
        if t.isNaN { return "nan" }
        if t.isInfinite { return t < 0 ? "-inf" : "inf" }
        return "\(t) seconds since 2001-01-01T00:00:00Z"
    }

    /// Whether `t` is finite and its whole seconds fall in the years that ISO text (and so XML)
    /// carries here: ``earliestSeconds`` ... ``latestSeconds``.
    static func isInTextRange(_ t: Double) -> Bool {
        t >= earliestSeconds && t < latestSeconds + 1   // false for NaN
    }

    /// `-99999999-01-01T00:00:00Z`, the earliest date with ISO text: ``parse(_:allowFraction:)``
    /// reads years of up to 8 digits.
    static let earliestSeconds = Double(days(year: -99_999_999, month: 1, day: 1) - referenceDay) * 86_400

    /// `99999999-12-31T23:59:59Z`, the latest whole second with ISO text.
    static let latestSeconds = Double(days(year: 100_000_000, month: 1, day: 1) - referenceDay) * 86_400 - 1

    /// The shortest decimal digits `f` such that `whole + 0.f` reads back as exactly `t`, or
    /// `nil` if more than 20 digits would be needed (only for dates within 1e-20 s of a second).
    static func shortestFraction(of t: Double, whole: Int64) -> String? {
        let frac = t - Double(whole)
        var scale: Double = 1
        for n in 1...20 {
            scale *= 10
            let guess = (frac * scale).rounded()
            for candidate in [guess, guess - 1, guess + 1] where candidate > 0 && candidate < scale {
                let digits = pad(Int64(candidate), n)
                if let back = value(whole: whole, fraction: digits), back == t {
                    return trimZeros(digits)
                }
            }
        }
        return nil
    }

    /// The correctly rounded double for `whole + 0.fraction` (fraction = decimal digits).
    static func value(whole: Int64, fraction: String) -> Double? {
        if fraction.isEmpty { return Double(whole) }
        if whole >= 0 { return Double("\(whole).\(fraction)") }
        // whole + 0.f == -((|whole| - 1) + (1 - 0.f)): write it as one decimal so the parse rounds once.
        let n = fraction.utf8.count
        guard n <= 18, let f = Int64(fraction) else { return nil }
        var scale: Int64 = 1
        for _ in 0..<n { scale *= 10 }
        let comp = scale - f
        if comp == scale { return Double(whole) }
        return Double("-\(-whole - 1).\(pad(comp, n))")
    }

    private static func trimZeros(_ s: String) -> String {
        var s = Substring(s)
        while s.last == "0" && s.count > 1 { s.removeLast() }
        return String(s)
    }

    package static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.utf8.count >= width ? s : String(repeating: "0", count: width - s.utf8.count) + s
    }

    /// Parses `[-]YYYY-MM-DDTHH:MM:SS[.fff]Z` (the fraction only when `allowFraction`) into
    /// seconds since the reference date. Fields are not range-checked: they roll over.
    static func parse(_ bytes: some Collection<UInt8>, allowFraction: Bool) -> Double? {
        var it = Array(bytes)[...]
        func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var v: Int64 = 0, n = 0
            while let c = it.first, c >= 0x30, c <= 0x39, n < maxDigits {
                v = v * 10 + Int64(c - 0x30)
                n += 1
                it.removeFirst()
            }
            return n >= minDigits ? v : nil
        }
        func expect(_ c: UInt8) -> Bool {
            guard it.first == c else { return false }
            it.removeFirst()
            return true
        }
        let negative = expect(0x2D)
        guard let y0 = number(minDigits: 1, maxDigits: 8), expect(0x2D),
              let mo = number(minDigits: 2, maxDigits: 2), expect(0x2D),
              let d = number(minDigits: 2, maxDigits: 2), expect(0x54),
              let h = number(minDigits: 2, maxDigits: 2), expect(0x3A),
              let mi = number(minDigits: 2, maxDigits: 2), expect(0x3A),
              let s = number(minDigits: 2, maxDigits: 2)
        else { return nil }
        var fractionDigits = ""
        if allowFraction, expect(0x2E) {
            while let c = it.first, c >= 0x30, c <= 0x39 {
                fractionDigits.unicodeScalars.append(Unicode.Scalar(c))
                it.removeFirst()
            }
            if fractionDigits.isEmpty { return nil }
            while fractionDigits.utf8.count > 1 && fractionDigits.hasSuffix("0") { fractionDigits.removeLast() }
            if fractionDigits.utf8.count > 18 { fractionDigits = String(fractionDigits.prefix(18)) }
        }
        guard expect(0x5A), it.isEmpty else { return nil }
        guard let whole = seconds(year: negative ? -y0 : y0, month: mo, day: d, hour: h, minute: mi, second: s)
        else { return nil }
        if fractionDigits.isEmpty || fractionDigits == "0" { return Double(whole) }
        return value(whole: whole, fraction: fractionDigits)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity.
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }

    /// The remainder of ``floorDiv(_:)``: always in `0 ..< d` for positive `d`.
    func floorMod(_ d: Int64) -> Int64 {
        self - floorDiv(d) * d
    }
}
