import SettingsPlist
import SettingsFiles

/// `settings schema DOMAIN`: prints the JSON Schema the application wrote for its settings.
enum SchemaCommand: Command {
    static let name = "schema"
    static let summary = "print the JSON Schema an application wrote for its settings"
    static let usage = """
        usage: settings schema [--markdown] DOMAIN

        Prints the JSON Schema (draft 2020-12) the application wrote for DOMAIN with the Settings
        library's SettingsSchema.write(for:), kept in .settings.plist.meta/schema.json beside the
        settings file. When it exists, `settings write` refuses values that do not fit it; check
        any file against a schema with `settings lint --schema SCHEMA FILE`. Exits 1 when DOMAIN
        has no schema.
          --markdown  a reference table instead, one row per key in the schema's order (x-order),
                      grouped (x-group): key, title, type, default, allowed values with their
                      titles, description, and "locked by FILE" for a key the schema marks readOnly
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let markdown = arguments.contains("--markdown")  // hook (settings that describe themselves)
        let positional = try plainArguments(arguments.filter { $0 != "--markdown" }, command: name)
        guard positional.count == 1 else { throw .usage("schema: expected DOMAIN") }
        let domain = try Domain(positional[0])
        let target = try Files.target(of: domain.path).path
        guard let schema = try SchemaFile.beside(target) else {
            throw .failure("\(domain.path): no schema: the application writes one with SettingsSchema.write(for:) into \(PlistFile.companionDirectory(for: target))/\(PlistSchema.fileName)")
        }
        guard markdown else { return Console.write(schema.bytes) }
        var reader = JSONReader(schema.bytes)
        guard let document = try? reader.read() else { throw .failure("\(schema.path): the schema is not JSON") }
        Console.write(Array(PlistSchemaReference.markdown(of: document).utf8))
    }
}
