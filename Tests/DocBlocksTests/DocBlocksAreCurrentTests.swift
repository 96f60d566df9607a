import Foundation
import Testing

/// The guides' Swift samples are compiled from Generated*.swift, which Tools/extract-doc-blocks.py
/// writes from the Markdown. These tests fail when a guide's Swift changed since: run the script.
struct DocBlocksAreCurrentTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let guides = [
        "README.md", "Docs/GettingStarted.md", "Docs/Settings.md", "Docs/TypesAndTransformers.md", "Docs/Migrating.md",
        "Docs/DefaultsAndLayers.md", "Docs/ModelFiles.md", "Docs/Observing.md", "Docs/Persistence.md", "Docs/PropertyLists.md", "Docs/HistoryAndProvenance.md",
        "Docs/Configuration.md", "Docs/Sync.md", "Docs/Testing.md",
    ]
    /// Guides whose samples compile in an integration package's tests (they need its dependencies).
    static let elsewhere = [
        "Docs/Configuration.md": "Integrations/SettingsConfiguration/Tests/SettingsConfigurationTests",
        "Docs/Sync.md": "Integrations/SettingsPostgres/Tests/SettingsPostgresTests",
    ]

    @Test(arguments: guides)
    func generatedFileMatchesTheGuide(_ guide: String) throws {
        let name = URL(filePath: guide).deletingPathExtension().lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "_" }
        let directory = Self.elsewhere[guide] ?? "Tests/DocBlocksTests"
        let generated = try String(contentsOf: Self.root.appending(path: "\(directory)/Generated\(name).swift"), encoding: .utf8)
        let markdown = try String(contentsOf: Self.root.appending(path: guide), encoding: .utf8)
        let expected = String(format: "// blocks-hash: %016llx", fnv1a64(swiftText(of: markdown)))
        #expect(generated.split(separator: "\n").contains { $0 == expected },
                "Tests/DocBlocksTests is stale for \(guide): run python3 Tools/extract-doc-blocks.py")
    }

    /// The text the script hashes: every line of every ```swift block and of every
    /// `<!-- doc-blocks: ... -->` marker and prelude, each followed by a newline.
    func swiftText(of markdown: String) -> String {
        var out = ""
        var inBlock = false, inPrelude = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if inPrelude {
                if trimmed == "-->" { inPrelude = false } else { out += line + "\n" }
            } else if inBlock {
                if trimmed == "```" { inBlock = false } else { out += line + "\n" }
            } else if trimmed.hasPrefix("<!-- doc-blocks: prelude") {
                out += trimmed + "\n"
                inPrelude = true
            } else if trimmed == "<!-- doc-blocks: skip -->" || trimmed == "<!-- doc-blocks: shared -->" {
                out += trimmed + "\n"
            } else if trimmed == "```swift" {
                inBlock = true
            }
        }
        return out
    }

    func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return hash
    }
}
