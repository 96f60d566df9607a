#!/usr/bin/env python3
"""Extracts the ```swift blocks of the guides into Tests/GuidesTests/Generated/Generated*.swift.

The guides are tested one way, in one target, Tests/GuidesTests: each guide's samples are
extracted by this script and compiled as a reader copies them (Generated/Generated<Guide>.swift,
checked in, so a sample that does not compile fails the build), and listed, in the guide's order,
as `samplesOf<Guide>`, which the guide's <Guide>GuideTests.swift runs as written (in a directory
of its own holding the files the guide names, with `SettingsStore.shared` and the user's
configuration directory in a temporary one: Tests/GuidesTests/GuideRun.swift) and checks what the
guide says they do: what they print, the files they leave, what they throw. A guide whose samples
are all declarations (Docs/Administration.md, Docs/Testing.md) has an empty list: its functions are
compiled, not run. GuidesAreCurrentTests runs `--check`: it fails when a generated file is not what
this script makes of its guide now. After editing a guide:

    python3 Tools/extract-doc-blocks.py           # write the files
    python3 Tools/extract-doc-blocks.py --check   # exit 1, naming each stale file

How a guide's blocks become Swift:
- top-level declarations (struct, enum, class, protocol, func, extension) go to file scope,
  `fileprivate` (so two guides may both declare `AppSettings`);
- everything else in a block becomes the body of its own `fileprivate func` (compiled, and listed
  in `samplesOf<Guide>`; a block of comments alone is neither);
- a guide whose shared declarations (below) include `store` also gets `sharedStoreOf<Guide>`, so
  its GuideTests reads back the values the samples leave there (shown in the guide as comments);
- `<!-- doc-blocks: shared -->` before a block marks declarations the guide's other samples use
  (`store`, `defaultsURL`), shown to the reader: they go to file scope. Nothing is hidden and no
  import is added: a generated file has only the imports its guide's blocks write, so the samples
  compile as a reader copies them (a hidden `<!-- doc-blocks: prelude` is refused).
  `<!-- doc-blocks: skip -->` before a block leaves it out (another library's code, a
  Package.swift fragment). Getting started is also built and run whole, in a new package, by
  Tests/GuidesTests/GettingStartedGuideTests.swift.

Compiled but not run (COMPILE_ONLY names each by a line of it, with the reason; the generated
file says so above the sample, and the script fails when a named line is no longer in its guide):
- Docs/Persistence.md: `for await status in store.persistenceUpdates` (a loop that never ends, as
  a program's status line does) and `SettingsStore.saveOnTermination()` (it would take SIGTERM,
  SIGINT and SIGHUP from the whole test process) and `SettingsStore.flushAll(timeout:)` (it would
  save every file store of the test process, other suites' too, and fail with theirs);
- Docs/TypesAndTransformers.md: the sample that registers a `Date` transformer (it changes how
  every `Date` in the test process is stored, under other suites' feet).

A guide whose samples need an integration's dependencies (Docs/Configuration.md: swift-configuration,
swift-log, swift-service-lifecycle; Docs/Sync.md: postgres-nio, swift-crypto) is written into that
package's tests instead (ELSEWHERE), and compiles there, not run; `--check` covers it all the same.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "GuidesTests", "Generated")
# Guides whose samples need another package's dependencies compile in that package's tests.
ELSEWHERE = {
    "Docs/Configuration.md": os.path.join(ROOT, "Integrations", "SettingsConfiguration", "Tests", "SettingsConfigurationTests"),
    "Docs/Sync.md": os.path.join(ROOT, "Integrations", "SettingsPostgres", "Tests", "SettingsPostgresTests"),
}
# Samples compiled but not run: a line of the sample, and why it cannot run in a test process.
COMPILE_ONLY = {
    "Docs/Persistence.md": {
        "for await status in store.persistenceUpdates {": "a loop that never ends",
        "SettingsStore.saveOnTermination()": "it would take SIGTERM, SIGINT and SIGHUP from the test process",
        "try await SettingsStore.flushAll(": "it saves every file store of the test process, other suites' too",
    },
    "Docs/TypesAndTransformers.md": {
        "SettingsTransformers.register(SettingsTransformer<Date>(": "it changes how every Date in the test process is stored",
    },
}
GUIDES = [
    "README.md",
    "Docs/GettingStarted.md",
    "Docs/Settings.md",
    "Docs/TypesAndTransformers.md",
    "Docs/Migrating.md",
    "Docs/DefaultsAndLayers.md",
    "Docs/ModelFiles.md",
    "Docs/Observing.md",
    "Docs/Persistence.md",
    "Docs/PropertyLists.md",
    "Docs/HistoryAndProvenance.md",
    "Docs/Configuration.md",
    "Docs/Sync.md",
    "Docs/Testing.md",
    "Docs/Administration.md",
]
DECLARATION = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:final\s+)?(struct|enum|class|actor|protocol|func|extension|import)\b")
PRELUDE_OPEN = "<!-- doc-blocks: prelude"
SKIP = "<!-- doc-blocks: skip -->"
SHARED = "<!-- doc-blocks: shared -->"


def fnv1a64(text):
    """FNV-1a, 64 bits, over UTF-8: the hash of a guide's Swift, written in its generated file."""
    h = 0xcbf29ce484222325
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def scan(text):
    """The guide's Swift: (hashed text, prelude lines, blocks as (line number, lines, skipped))."""
    hashed, prelude, blocks = [], [], []
    lines = text.split("\n")
    i, skip_next, shared_next = 0, False, False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(PRELUDE_OPEN):
            raise SystemExit("a hidden prelude: show it as a ```swift block after <!-- doc-blocks: shared -->")
        elif stripped == SHARED:
            hashed.append(stripped)
            shared_next = True
        elif stripped == SKIP:
            hashed.append(stripped)
            skip_next = True
        elif stripped == "```swift":
            indent = len(line) - len(line.lstrip())
            start = i + 1
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i].lstrip())
                hashed.append(lines[i])
                i += 1
            if shared_next:
                prelude.extend(body)
            else:
                blocks.append((start, body, skip_next))
            skip_next = shared_next = False
        i += 1
    return "".join(l + "\n" for l in hashed), prelude, blocks


def split_block(body, constants_too=False):
    """Top-level declarations and statements of one block (`let`/`var` are declarations in a prelude)."""
    declarations, statements = [], []
    i = 0
    while i < len(body):
        line = body[i]
        if line and not line[0].isspace() and (DECLARATION.match(line) or (constants_too and NAMED.match(line))):
            chunk, depth, opened = [], 0, False
            while i < len(body):
                chunk.append(body[i])
                code = body[i].split("//")[0]
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                i += 1
                if depth <= 0 and (opened or not code.rstrip().endswith(("(", ",", "->"))):
                    break
            declarations.append(chunk)
        else:
            statements.append(line)
            i += 1
    return declarations, statements


DECLARED = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:final\s+)?(?:struct|enum|class|actor|protocol|func|let|var)\s+(\w+)")


def declared_name(chunk):
    match = DECLARED.match(chunk[0])
    return match.group(1) if match else None


def file_private(chunk):
    first = chunk[0]
    if first.startswith("import "):
        return []
    if first.startswith("extension ") and ":" in first.split("{")[0].split("where")[0]:
        return chunk  # a conformance: no access modifier allowed
    return ["fileprivate " + first] + chunk[1:]


NAMED = re.compile(r"^(?:@\w+(?:\(.*\))?\s+)?(?:let|var)\s+(\w+)\b")


def used(statements):
    """`_ = name` for each top-level constant, so unused samples compile without warnings."""
    names = []
    for line in statements:
        if line[:1].isspace():
            continue
        match = NAMED.match(line)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return ["_ = " + name for name in names]


def generate(guide, write=True):
    with open(os.path.join(ROOT, guide), encoding="utf-8") as f:
        hashed, prelude, blocks = scan(f.read())
    name = re.sub(r"\W", "", os.path.splitext(os.path.basename(guide))[0])
    # Only the imports the guide's blocks write: the samples compile as a reader copies them.
    assumed = []
    out = [
        "// Generated by Tools/extract-doc-blocks.py from %s: do not edit, run the script." % guide,
        "// blocks-hash: %016x" % fnv1a64(hashed),
    ] + assumed + [""]
    imports, declared, body_lines, samples = [], set(), [], []
    chunks = [(None, split_block(prelude, constants_too=True)[0], [])] if prelude else []
    chunks += [(start, *split_block(body)) for start, body, skipped in blocks if not skipped]
    compile_only = COMPILE_ONLY.get(guide, {})
    unused = set(compile_only)
    for start, declarations, statements in chunks:
        imports += [c[0] for c in declarations if c[0].startswith("import ") and c[0] not in imports]
        names = {declared_name(c) for c in declarations} - {None}
        # A block that declares a name again (a later version of a type) gets a namespace of its own.
        scoped = bool(names & declared) and not any(c[0].startswith("extension ") for c in declarations)
        declared |= names
        lines = []
        for chunk in declarations:
            lines.extend(file_private(chunk))
        if [l for l in statements if l.strip() and not l.strip().startswith("//")]:
            named = [line for line in compile_only if any(l.strip().startswith(line) for l in statements)]
            why = [compile_only[line] for line in named]
            unused -= set(named)
            if why:
                lines.append("// Compiled, not run: %s." % "; ".join(why))
            else:
                samples.append(("Sample_%s_%d." % (name, start + 1) if scoped else "") + "sample_%s_%d" % (name, start + 1))
            lines.append("%sfunc sample_%s_%d() async throws {" % ("static " if scoped else "fileprivate ", name, start + 1))
            lines.extend(("    " + l) if l.strip() else "" for l in statements)
            lines.extend("    " + l for l in used(statements))
            lines.append("}")
        body_lines.append("// The declarations the samples share (shown in the guide)." if start is None else "// %s:%d" % (guide, start + 1))
        if scoped:
            body_lines.append("fileprivate enum Sample_%s_%d {" % (name, start + 1))
            body_lines.extend(("    " + l) if l.strip() else "" for l in lines)
            body_lines.append("}")
        else:
            body_lines.extend(lines)
        body_lines.append("")
    out[2 + len(assumed):2 + len(assumed)] = [i for i in imports if i not in assumed]
    out.extend(body_lines)
    if unused:
        raise SystemExit("%s: COMPILE_ONLY names a line no sample of the guide has: %s" % (guide, ", ".join(sorted(unused))))
    if guide not in ELSEWHERE:
        out.append("/// The samples of %s in the guide's order, for its GuideTests to run." % guide)
        out.append("let samplesOf%s: [@Sendable () async throws -> Void] = [%s]" % (name, ", ".join(samples)))
        if any(NAMED.match(line) and NAMED.match(line).group(1) == "store" for line in prelude):
            out.append("/// The guide's shared `store`, for its GuideTests to read back what the samples left in it.")
            out.append("var sharedStoreOf%s: SettingsStore { store }" % name)
    path = os.path.join(ELSEWHERE.get(guide, OUT), "Generated%s.swift" % name)
    text = "\n".join(out).rstrip("\n") + "\n"
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return path, text


def main():
    if sys.argv[1:] == ["--check"]:
        stale = []
        for guide in GUIDES:
            path, text = generate(guide, write=False)
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read() == text
            except OSError:
                current = False
            if not current:
                stale.append("%s (from %s)" % (os.path.relpath(path, ROOT), guide))
        for line in stale:
            print("stale: " + line, file=sys.stderr)
        if stale:
            print("run: python3 Tools/extract-doc-blocks.py", file=sys.stderr)
        return 1 if stale else 0
    if sys.argv[1:]:
        print("usage: extract-doc-blocks.py [--check]", file=sys.stderr)
        return 2
    os.makedirs(OUT, exist_ok=True)
    for guide in GUIDES:
        print(os.path.relpath(generate(guide)[0], ROOT))


if __name__ == "__main__":
    sys.exit(main())
