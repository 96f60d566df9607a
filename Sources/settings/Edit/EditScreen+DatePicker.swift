#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// A date being picked field by field, in UTC: year, month, day, hour, minute, second.
struct EditDate: Equatable {
    /// The six fields, as typed or stepped (checked when applied).
    var fields: [Int64]
    /// The field being changed (0 is the year).
    var selected = 0
    /// The digits typed into the selected field since it was selected.
    var digits = ""
    /// Every character typed since the picker opened: ISO text typed whole goes to a text edit.
    var typed = ""

    static let names = ["year", "month", "day", "hour", "minute", "second"]
    /// The digits a field takes before the next field is selected.
    static let widths = [4, 2, 2, 2, 2, 2]

    /// The picker for `value` (now's whole second when it is not a date).
    init(_ value: PlistValue?) {
        let date: Date = if case .date(let date)? = value { date } else { Date() }
        let seconds = Int64(date.timeIntervalSinceReferenceDate.rounded(.down))
        fields = Self.fields(of: seconds)
    }

    /// The fields of whole seconds since the reference date.
    static func fields(of seconds: Int64) -> [Int64] {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400  // rounded down
        let rest = seconds - days * 86_400
        let (year, month, day) = PlistDate.civil(days: days + PlistDate.referenceDay)
        return [year, month, day, rest / 3_600, rest % 3_600 / 60, rest % 60]
    }

    /// The text shown while picking, the selected field in brackets: `2024-[05]-17 09:30:00`.
    var shown: String {
        let texts = fields.enumerated().map { i, value in
            let text = PlistDate.pad(value, Self.widths[i])
            return i == selected ? "[\(text)]" : text
        }
        return "\(texts[0])-\(texts[1])-\(texts[2]) \(texts[3]):\(texts[4]):\(texts[5])"
    }

    /// The selected field one up or down, rolling over into the others (Dec + 1 is January of
    /// the next year).
    mutating func step(by amount: Int64) {
        digits = ""
        var changed = fields
        changed[selected] += amount
        guard let seconds = PlistDate.seconds(year: changed[0], month: changed[1], day: changed[2],
                                              hour: changed[3], minute: changed[4], second: changed[5]) else { return }
        fields = Self.fields(of: seconds)
    }

    /// A digit typed into the selected field; a full field moves to the next one.
    mutating func type(_ digit: Character) {
        guard let value = digit.wholeNumberValue else { return }
        digits.append(digit)
        fields[selected] = Int64(digits) ?? Int64(value)
        if digits.count >= Self.widths[selected] { select(selected + 1) }
    }

    mutating func select(_ field: Int) {
        selected = max(0, min(Self.names.count - 1, field))
        digits = ""
    }

    /// The date, or why the fields do not make one.
    var date: Result<PlistValue, CLIError> {
        let (year, month, day) = (fields[0], fields[1], fields[2])
        guard (1...12).contains(month) else { return .failure(.failure("month \(month) is not 1…12")) }
        let length = PlistDate.days(year: year, month: month + 1, day: 1) - PlistDate.days(year: year, month: month, day: 1)
        guard (1...length).contains(day) else { return .failure(.failure("day \(day) is not 1…\(length) in \(PlistDate.pad(year, 4))-\(PlistDate.pad(month, 2))")) }
        let limits: [(String, Int64)] = [("hour", 23), ("minute", 59), ("second", 59)]
        for (i, (name, limit)) in limits.enumerated() where !(0...limit).contains(fields[3 + i]) {
            return .failure(.failure("\(name) \(fields[3 + i]) is not 0…\(limit)"))
        }
        guard let seconds = PlistDate.seconds(year: year, month: month, day: day, hour: fields[3], minute: fields[4], second: fields[5]) else {
            return .failure(.failure("year \(year) is out of range"))
        }
        return .success(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
    }
}

extension EditScreen {
    /// A key while a date is picked: ←→ select a field, ↑↓ step it, digits type it, Enter
    /// applies, Esc cancels; any other character turns the picker into a text edit of what was
    /// typed, so ISO 8601 text is still accepted.
    mutating func picking(_ key: Key, field: Int, date: EditDate, expected: PlistValue?) -> EditAction? {
        var date = date
        switch key {
        case .escape:
            mode = .browse
            elementEdit = nil
            message = "\(layout.fields[field].title): not changed"
            clearProblem()
            return nil
        case .left, .character("h"): date.select(date.selected - 1)
        case .right, .character("l"), .tab: date.select(date.selected + 1)
        case .up, .character("k"): date.step(by: 1)
        case .down, .character("j"): date.step(by: -1)
        case .character(let c) where c.isASCII && c.isNumber:
            date.type(c)
            date.typed.append(c)
        case .character(let c):
            mode = .editing(field: field, buffer: date.typed + String(c), expected: expected)
            return nil
        case .enter:
            switch date.date {
            case .success(let value):
                if let edit = elementEdit, case .replace(let path) = edit {
                    return changing(field, at: path, to: value)
                }
                return .set(field: field, value: value, expected: expected)
            case .failure(let reason):
                refuse(field, reason.message)
                return nil
            }
        default: return nil
        }
        clearProblem()
        mode = .picking(field: field, date: date, expected: expected)
        return nil
    }
}
