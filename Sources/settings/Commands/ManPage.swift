/// `settings help --man`: the manual page, made from the help texts the tool prints (`settings
/// --help` and each command's `--help`), so the two say the same. Docs/settings.1 is its output,
/// checked against it by the tests.
enum ManPage {
    static var text: String {
        let overview = SettingsTool.usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The usage's third line is the one-sentence description: "Reads, writes ... plutil."
        let sentence = overview.count > 2 ? overview[2] : "reads and writes settings files"
        var purpose = sentence.first.map { $0.lowercased() + sentence.dropFirst() } ?? sentence
        if purpose.hasSuffix(".") { purpose.removeLast() }
        var lines = [
            ".\\\" Made by 'settings help --man' from the tool's help texts: edit those, not this file.",
            ".TH SETTINGS 1 \"\" \"settings \(SettingsTool.version)\" \"User Commands\"",
            ".SH NAME",
            "settings \\- " + escaped(purpose),
            ".SH SYNOPSIS",
            ".B settings",
            "\\fICOMMAND\\fR [\\fIARGUMENTS\\fR]",
            ".SH DESCRIPTION",
        ]
        lines += verbatim(Array(overview.dropFirst(2)))
        lines.append(".SH COMMANDS")
        for command in SettingsTool.commands {
            lines.append(".SS " + escaped(command.name))
            lines += verbatim(command.usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        }
        lines += [".SH SEE ALSO", ".BR plutil (1),", ".BR defaults (1)"]
        return lines.joined(separator: "\n")
    }

    /// `text` as roff reads it literally: `\` as `\e`, `-` as `\-` (a minus that copies as one),
    /// a leading `.` or `'` guarded with `\&`.
    static func escaped(_ text: String) -> String {
        let out = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        return out.hasPrefix(".") || out.hasPrefix("'") ? "\\&" + out : out
    }

    /// Lines kept as they are laid out (no filling, no adjusting).
    static func verbatim(_ lines: [String]) -> [String] {
        [".nf"] + lines.map(escaped) + [".fi"]
    }
}
