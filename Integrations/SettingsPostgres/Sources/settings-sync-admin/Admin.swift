// settings-sync-admin: provisions a PostgreSQL database for SettingsSync (Docs/Sync.md, "Hosting sync
// for your users"). Connect as a superuser:
//
//   settings-sync-admin [--url URL] install                 schema, row-level security, grants (idempotent)
//   settings-sync-admin [--url URL] add-user NAME           login role; its password is read from stdin
//   settings-sync-admin [--url URL] remove-user NAME        the role and every row of its spaces
//   settings-sync-admin [--url URL] purge [--days N]        tombstones every device seen in N days has (90)
//   settings-sync-admin [--url URL] check                   policies in force; what each role can see
//
// --url defaults to $SETTINGS_SYNC_ADMIN_URL; the administrator's password comes from the URL or
// $SETTINGS_SYNC_ADMIN_PASSWORD. Exit status: 0 done, 1 failed, 2 usage.
import Foundation
import SettingsPostgres

@main
struct Admin {
    static let usage = """
        usage: settings-sync-admin [--url URL] install | add-user NAME | remove-user NAME | purge [--days N] | check
          URL defaults to $SETTINGS_SYNC_ADMIN_URL (a superuser); password: in the URL or $SETTINGS_SYNC_ADMIN_PASSWORD.
          add-user reads the user's password from the first line of standard input.
        """

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("settings-sync-admin: \(message)\n".utf8))
        exit(status)
    }

    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        let env = ProcessInfo.processInfo.environment
        var url = env["SETTINGS_SYNC_ADMIN_URL"]
        if args.first == "--url" {
            guard args.count >= 2 else { fail(usage, status: 2) }
            url = args[1]
            args.removeFirst(2)
        }
        guard let command = args.first else { fail(usage, status: 2) }
        guard let url else { fail("no server: pass --url or set SETTINGS_SYNC_ADMIN_URL\n\(usage)", status: 2) }
        let admin: SettingsSyncAdmin
        do {
            admin = try SettingsSyncAdmin(url: url, password: env["SETTINGS_SYNC_ADMIN_PASSWORD"])
        } catch {
            fail(error.description, status: 2)
        }
        do {
            switch (command, args.count) {
            case ("install", 1):
                try await admin.install()
                print("installed: schema, row-level security and grants are in force")
            case ("add-user", 2):
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    fail("add-user reads the password from standard input: none given", status: 2)
                }
                try await admin.addUser(args[1], password: line)
                print("added user \(args[1])")
            case ("remove-user", 2):
                let spaces = try await admin.removeUser(args[1])
                print("removed user \(args[1]) and its \(spaces) spaces")
            case ("purge", 1), ("purge", 3):
                guard args.count == 1 || args[1] == "--days" else { fail(usage, status: 2) }
                let days = args.count == 3 ? Int(args[2]) : 90
                guard let days, days >= 0 else { fail("--days takes a whole number of days", status: 2) }
                let dropped = try await admin.purge(keepingDays: days)
                print("purged \(dropped) tombstones")
            case ("check", 1):
                for line in try await admin.check() { print(line) }
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
