// settings-sync-admin: provisions a PostgreSQL database for SettingsSync (Docs/Sync.md, "Hosting sync
// for your users"). Connect as a superuser:
//
//   settings-sync-admin [--url URL] [-W] install          schema, row-level security, grants (idempotent)
//   settings-sync-admin [--url URL] [-W] add-user NAME [--connection-limit N]
//                                                        login role; its password is read from stdin
//   settings-sync-admin [--url URL] [-W] remove-user NAME the role and every row of its spaces
//   settings-sync-admin [--url URL] [-W] purge [--days N] tombstones every device seen in N days has (90)
//   settings-sync-admin [--url URL] [-W] check            policies in force; what each role can see
//
// --url defaults to $SETTINGS_SYNC_ADMIN_URL. The administrator's password: one in the URL wins (a
// warning: other users see it in `ps`), else $SETTINGS_SYNC_ADMIN_PASSWORD, else a prompt on the
// terminal with -W (--password-prompt). Everything printed has its control characters escaped.
// Exit status: 0 done, 1 failed, 2 usage.
import Foundation
import SettingsPostgres

@main
struct Admin {
    static let usage = """
        usage: settings-sync-admin [--url URL] [-W] install | add-user NAME [--connection-limit N] | remove-user NAME | purge [--days N] | check
          URL defaults to $SETTINGS_SYNC_ADMIN_URL (a superuser). The administrator's password: in the URL (visible in ps),
          else $SETTINGS_SYNC_ADMIN_PASSWORD, else asked on the terminal with -W (--password-prompt).
          add-user reads the user's password from the first line of standard input; --connection-limit defaults to \(SettingsSyncAdmin.defaultConnectionLimit).
        """

    static let prefix = "settings-sync-admin: "

    /// Writes `message` to standard error, prefixed once with the tool's name, and exits.
    static func fail(_ message: String, status: Int32) -> Never {
        let text = message.hasPrefix(prefix) ? message : prefix + message
        FileHandle.standardError.write(Data((printable(text, keepingNewlines: true) + "\n").utf8))
        exit(status)
    }

    /// Writes one line to standard output, its control characters escaped.
    static func say(_ line: String) {
        print(printable(line, keepingNewlines: false))
    }

    /// `text` with every control character (C0, DEL, C1) and bidirectional-text control written
    /// as `\u{…}`, so that a name or a server message cannot drive the terminal. New lines stay
    /// when `keepingNewlines` (the tool's own multi-line texts).
    static func printable(_ text: String, keepingNewlines: Bool) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let control = v < 0x20 || (0x7F...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
                || v == 0x200E || v == 0x200F || v == 0x061C
            if control && !(keepingNewlines && v == 0x0A) {
                out += "\\u{\(String(v, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Reads a line from the terminal with echo off (nil without a terminal).
    static func promptPassword(_ prompt: String) -> String? {
        let fd = open("/dev/tty", O_RDWR)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var saved = termios()
        let haveTerminal = tcgetattr(fd, &saved) == 0
        if haveTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if haveTerminal { _ = tcsetattr(fd, TCSAFLUSH, &saved) }
            _ = write(fd, "\n", 1)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        let env = ProcessInfo.processInfo.environment
        var url = env["SETTINGS_SYNC_ADMIN_URL"]
        var urlGiven = false
        var prompt = false
        while let option = args.first, option.hasPrefix("-") {
            switch option {
            case "--url":
                guard args.count >= 2 else { fail(usage, status: 2) }
                url = args[1]
                urlGiven = true
                args.removeFirst(2)
            case "-W", "--password-prompt":
                prompt = true
                args.removeFirst()
            default:
                fail(usage, status: 2)
            }
        }
        guard let command = args.first else { fail(usage, status: 2) }
        guard let url else { fail("no server: pass --url or set SETTINGS_SYNC_ADMIN_URL\n\(usage)", status: 2) }
        // A password in the URL wins over the environment; it is visible to every user of the machine.
        var password: String?
        if URLComponents(string: url)?.password != nil {
            if urlGiven {
                FileHandle.standardError.write(Data("\(prefix)warning: a password in --url is visible to other users of this machine (ps); use SETTINGS_SYNC_ADMIN_PASSWORD or -W\n".utf8))
            }
        } else if prompt {
            guard let typed = promptPassword("Password for the administrator: ") else { fail("-W: no terminal to ask the password on", status: 2) }
            password = typed
        } else {
            password = env["SETTINGS_SYNC_ADMIN_PASSWORD"]
        }
        let admin: SettingsSyncAdmin
        do {
            admin = try SettingsSyncAdmin(url: url, password: password)
        } catch {
            fail(error.description, status: 2)
        }
        do {
            switch (command, args.count) {
            case ("install", 1):
                try await admin.install()
                say("installed: schema, row-level security and grants are in force")
            case ("add-user", 2), ("add-user", 4):
                var limit = SettingsSyncAdmin.defaultConnectionLimit
                if args.count == 4 {
                    guard args[2] == "--connection-limit", let n = Int(args[3]), n >= 1 else {
                        fail("--connection-limit takes a whole number, 1 or more\n\(usage)", status: 2)
                    }
                    limit = n
                }
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    fail("add-user reads the password from standard input: none given", status: 2)
                }
                try await admin.addUser(args[1], password: line, connectionLimit: limit)
                say("added user \(args[1]) (at most \(limit) connections)")
            case ("remove-user", 2):
                let spaces = try await admin.removeUser(args[1])
                say("removed user \(args[1]) and its \(spaces) spaces")
            case ("purge", 1), ("purge", 3):
                guard args.count == 1 || args[1] == "--days" else { fail(usage, status: 2) }
                let days = args.count == 3 ? Int(args[2]) : 90
                guard let days, days >= 0 else { fail("--days takes a whole number of days", status: 2) }
                let dropped = try await admin.purge(keepingDays: days)
                say("purged \(dropped) tombstones")
            case ("check", 1):
                for line in try await admin.check() { say(line) }
            default:
                fail(usage, status: 2)
            }
        } catch let error as SettingsSyncError {
            fail(error.description, status: 1)
        } catch {
            fail(SettingsSyncAdmin.describe(error), status: 1)
        }
    }
}
