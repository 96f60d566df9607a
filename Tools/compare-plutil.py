#!/usr/bin/env python3
"""Compares the `settings` tool's plutil-style commands with a `plutil` on random files and operations.

    python3 Tools/compare-plutil.py [--settings PATH] [--plutil PATH] [--runs N] [--seed S]

By default it compares `.build/debug/settings` with the `plutil` that ships with the Swift
toolchain (`$(dirname $(readlink -f $(which swift)))/plutil`, swift-corelibs-foundation). Each run
makes a random property list (plistlib), picks a random operation (`-extract` in each format,
`-type`, `-insert` with each type and with `-append`, `-replace`, `-remove`, `-convert`, `-lint`,
`-p`), runs it with both tools on copies of the file, and compares the exit status (zero or not),
what is printed (`-extract ... raw`, `-type`, `-extract ... json`, read as JSON) and the file
afterwards (read back with plistlib). Differences are grouped by operation and printed with one
example each; Docs/Tool.md lists the ones that remain and why.

The table is checked too: before the random runs, each row of Tool.md's "Differences from the
toolchain's `plutil`" table is run as the fixed cases below (TABLE), which must still differ as the
row says; the cases of SAME (differences that were removed) must give the same output with both;
and a row without a case, or a case without a row, is an error. A random run that differs is
matched to the row that documents it; one that no row documents is an error. Exit status 1 on any
error (--table-only: the fixed cases alone, as SettingsCLITests' PlutilTableCLITests runs them).
"""
import argparse
import collections
import datetime as dt
import json
import os
import plistlib
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def toolchain_plutil():
    swift = shutil.which("swift")
    if not swift:
        return None
    path = os.path.join(os.path.dirname(os.path.realpath(swift)), "plutil")
    return path if os.path.exists(path) else None


def random_scalar(rng):
    kind = rng.choice(["int", "real", "bool", "string", "date", "data"])
    if kind == "int":
        return rng.choice([0, 1, -5, 42, 2 ** 40, -(2 ** 40)])
    if kind == "real":
        return rng.choice([0.5, -2.25, 1e10, 3.0])
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "string":
        return rng.choice(["a", "hello world", "caf\u00e9", "x.y", "", "42"])
    if kind == "date":
        return dt.datetime(2020, 1, 2, 3, 4, 5)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(6)))


def random_value(rng, depth=0):
    if depth >= 3 or rng.random() < 0.4:
        return random_scalar(rng)
    if rng.random() < 0.5:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "name", "list", "deep", "k1", "k2"]): random_value(rng, depth + 1)
            for _ in range(rng.randrange(1, 5))}


def key_paths(value, prefix=""):
    """Every dotted key path in `value` (dictionary keys and array indexes)."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            p = prefix + k
            out.append(p)
            out += key_paths(v, p + ".")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            p = prefix + str(i)
            out.append(p)
            out += key_paths(v, p + ".")
    return out


TYPES = [("-bool", "YES"), ("-integer", "7"), ("-float", "1.5"), ("-string", "new"), ("-date", "2021-01-01T00:00:00Z"),
         ("-data", "AAEC"), ("-json", '{"j": [1, 2]}'), ("-array", None), ("-dictionary", None)]


def operation(rng, root):
    paths = key_paths(root) + ["missing", "a.missing", "list.9"]
    path = rng.choice(paths)
    verb = rng.choice(["extract", "type", "insert", "insert-append", "replace", "remove", "convert", "lint", "p"])
    if verb == "extract":
        return ["-extract", path, rng.choice(["raw", "json", "xml1"])]
    if verb == "type":
        return ["-type", path]
    if verb in ("insert", "insert-append", "replace"):
        flag, text = rng.choice(TYPES)
        args = ["-" + verb.split("-")[0], path, flag] + ([text] if text is not None else [])
        return args + (["-append"] if verb == "insert-append" else [])
    if verb == "remove":
        return ["-remove", path]
    if verb == "convert":
        return ["-convert", rng.choice(["xml1", "binary1", "json"])]
    if verb == "lint":
        return ["-lint"]
    return ["-p"]


def run(tool, args, path):
    r = subprocess.run([tool] + args + [path], capture_output=True, timeout=60)
    try:
        after = plistlib.loads(open(path, "rb").read())
    except Exception:
        try:
            after = json.loads(open(path, "rb").read())
        except Exception:
            after = "<unreadable>"
    return r.returncode == 0, r.stdout, after


def printed(args, out):
    """What is compared of standard output: raw and -type text, JSON as a value, -p's text (the
    random files hold no data and their keys are sorted: the table's rows on -p cover those);
    not the XML layout."""
    if args[0] == "-type" or (args[0] == "-extract" and args[2] == "raw"):
        return out.decode(errors="replace")
    if args[0] == "-extract" and args[2] == "json":
        try:
            return json.loads(out)
        except Exception:
            return out.decode(errors="replace")
    if args[0] == "-p":
        return out.decode(errors="replace")
    return None


TABLE_HEADING = "### Differences from the toolchain's `plutil`"


def table_rows():
    """The first cells of the differences table in Docs/Tool.md."""
    text = open(os.path.join(ROOT, "Docs", "Tool.md"), encoding="utf-8").read()
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.strip() == TABLE_HEADING
        elif inside and line.startswith("|") and not line.startswith("|---") and not line.startswith("| case "):
            rows.append(line.split("|")[1].strip())
    return rows


def xml(body):
    return ("<plist><dict>" + body + "</dict></plist>").encode()


TAGS = xml("<key>tags</key><array><string>a</string><string>b</string></array><key>s</key><string>x</string>")
REALS = xml("<key>w</key><real>30</real><key>z</key><real>-0.0</real><key>tiny</key><real>1e-7</real><key>big</key><real>1e20</real>")
ORDER = xml("<key>d</key><dict><key>zeta</key><integer>1</integer><key>Alpha</key><integer>2</integer>"
            "<key>10</key><integer>3</integer><key>9</key><integer>4</integer></dict>")
DATA = xml("<key>d</key><data>CgX/AA==</data>")  # bytes 0a 05 ff 00
CONTROL = xml("<key>s</key><string>a\nb</string>")
BAD_DATE = xml("<key>d</key><date>2024-13-45T00:00:00Z</date>")
EMPTY = xml("<key>a</key><dict/><key>b</key><integer>1</integer>")

# (row of the table, files, arguments, check): check(plutil, settings) returns None when both
# behave as the row says, else what is wrong. Each result has .ok, .out, .err, .files (bytes after).
TABLE = [
    ("`-replace KEYPATH.N` at an existing array index", {"f.plist": TAGS}, ["-replace", "tags.0", "-string", "z", "f.plist"],
     lambda p, s: None if plistlib.loads(p.files["f.plist"])["tags"] == ["z", "a", "b"]
     and plistlib.loads(s.files["f.plist"])["tags"] == ["z", "b"] else "tags afterwards"),
    ("`-extract KEYPATH json` of a string, number, Boolean", {"f.plist": TAGS}, ["-extract", "s", "json", "-o", "-", "f.plist"],
     lambda p, s: None if not p.ok and s.ok and s.out == b'"x"\n' else "exit status or output"),
    ("`-extract KEYPATH raw` of a real", {"f.plist": REALS}, ["-extract", "w", "raw", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b"30.000000\n", b"30\n") else "output"),
    ("`-extract KEYPATH raw` of a real", {"f.plist": REALS}, ["-extract", "tiny", "raw", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b"0.000000\n", b"1e-07\n") else "output"),
    ("`-extract KEYPATH raw` of a real", {"f.plist": REALS}, ["-extract", "z", "raw", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b"-0.000000\n", b"-0\n") else "output"),
    ("`-extract` without `-o`", {"f.plist": TAGS}, ["-extract", "tags", "xml1", "f.plist"],
     lambda p, s: None if plistlib.loads(p.files["f.plist"]) == ["a", "b"] and s.files["f.plist"] == TAGS
     and plistlib.loads(s.out) == ["a", "b"] else "file or output"),
    ("JSON output (`-convert json -o -`, `-extract ... json`)", {"f.plist": xml("<key>n</key><integer>1</integer>")},
     ["-convert", "json", "-o", "-", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b'{"n":1}', b'{"n":1}\n') else "output"),
    ("JSON output of a whole real", {"f.plist": REALS}, ["-extract", "w", "json", "-o", "-", "f.plist"],
     lambda p, s: None if not p.ok and s.out == b"30.0\n" else "output"),
    ("JSON output of a whole real", {"f.plist": xml("<key>w</key><real>30</real>")}, ["-convert", "json", "-o", "-", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b'{"w":30}', b'{"w":30.0}\n') else "output"),
    ("`-convert json -r` layout", {"f.plist": EMPTY}, ["-convert", "json", "-r", "-o", "-", "f.plist"],
     lambda p, s: None if p.out == b'{\n  "a" : {\n\n  },\n  "b" : 1\n}' and s.out == b'{\n  "a": {},\n  "b": 1\n}\n' else "output"),
    ("key order: `-p`, `-extract KEYPATH raw` of a dictionary, `-convert json -r`", {"f.plist": ORDER},
     ["-extract", "d", "raw", "f.plist"],
     lambda p, s: None if (p.out, s.out) == (b"9\n10\nAlpha\nzeta\n", b"zeta\nAlpha\n10\n9\n") else "output"),
    ("key order: `-p`, `-extract KEYPATH raw` of a dictionary, `-convert json -r`", {"f.plist": ORDER}, ["-p", "f.plist"],
     lambda p, s: None if p.out.index(b'"9"') < p.out.index(b'"zeta"') and s.out.index(b'"zeta"') < s.out.index(b'"9"') else "order"),
    ("`-p` of data", {"f.plist": DATA}, ["-p", "f.plist"],
     lambda p, s: None if b"bytes = 0xa5ff0}" in p.out and b"bytes = 0x0a05ff00}" in s.out else "output"),
    ("`-p` of text with control characters", {"f.plist": CONTROL}, ["-p", "f.plist"],
     lambda p, s: None if b'"a\nb"' in p.out and b'"a\\nb"' in s.out else "output"),
    ("`-lint` of a file with out-of-range `<date>` fields or malformed base64", {"f.plist": BAD_DATE}, ["-lint", "f.plist"],
     lambda p, s: None if p.ok and s.ok and p.out == s.out == b"f.plist: OK\n" and p.err == b"" and b"warning" in s.err else "lint"),
    ("`-lint` with no files", {}, ["-lint"],
     lambda p, s: None if (p.status, s.status) == (1, 2) else "exit status"),
]

# Differences that were removed: both tools print the same.
SAME = [
    # -p of reals: 30.0, -0.0, 1e-07, 1e+20 (keys in plutil's order: key order is a row of the table)
    ({"f.plist": xml("<key>big</key><real>1e20</real><key>tiny</key><real>1e-7</real><key>w</key><real>30</real>"
                     "<key>z</key><real>-0.0</real>")}, ["-p", "f.plist"]),
    ({"f.plist": TAGS}, ["-type", "tags", "f.plist"]),
    ({"f.plist": TAGS}, ["-extract", "tags.1", "raw", "f.plist"]),
]


class Result:
    def __init__(self, status, out, err, files):
        self.status, self.ok, self.out, self.err, self.files = status, status == 0, out, err, files


def run_case(tool, files, args):
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in files.items():
            open(os.path.join(tmp, name), "wb").write(data)
        r = subprocess.run([tool] + args, capture_output=True, timeout=60, cwd=tmp)
        after = {name: open(os.path.join(tmp, name), "rb").read() for name in files}
        return Result(r.returncode, r.stdout, r.stderr, after)


def check_table(settings, plutil):
    """Runs TABLE and SAME; returns the problems found."""
    problems = []
    rows, cased = table_rows(), {row for row, *_ in TABLE}
    problems += [f"Tool.md row without a case in compare-plutil.py: {row}" for row in rows if row not in cased]
    problems += [f"case without a row in Tool.md's table: {row}" for row in sorted(cased) if row not in rows]
    for row, files, args, check in TABLE:
        p, s = run_case(plutil, files, args), run_case(settings, files, args)
        wrong = check(p, s)
        if wrong:
            problems.append(f"{row}: {' '.join(args)}: {wrong} not as the table says: plutil {p.status} {p.out!r} {p.err!r}, "
                            f"settings {s.status} {s.out!r} {s.err!r}")
    for files, args in SAME:
        p, s = run_case(plutil, files, args), run_case(settings, files, args)
        if (p.ok, p.out) != (s.ok, s.out):
            problems.append(f"{' '.join(args)}: differs: plutil {p.out!r}, settings {s.out!r}")
    print(f"table: {len(rows)} rows, {len(TABLE)} cases, {len(SAME)} cases that must not differ, {len(problems)} problems")
    for problem in problems:
        print("  " + problem)
    return problems


def documented(what, args, ours, theirs):
    """The table row that documents a difference seen in a random run, or None."""
    verb, kind = args[0], what.rsplit(": ", 1)[-1]
    if verb == "-replace" and kind == "file" and args[1].rsplit(".", 1)[-1].isdigit():
        return "`-replace KEYPATH.N` at an existing array index"
    if verb == "-extract" and args[2] == "json" and kind == "exit status" and ours and not theirs:
        return "`-extract KEYPATH json` of a string, number, Boolean"
    if verb == "-extract" and args[2] == "raw" and kind == "output":
        try:
            if float(ours) == float(theirs):
                return "`-extract KEYPATH raw` of a real"
        except ValueError:
            pass
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", default=os.path.join(ROOT, ".build", "debug", "settings"))
    parser.add_argument("--plutil", default=toolchain_plutil())
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--table-only", action="store_true", help="only the table's fixed cases")
    a = parser.parse_args()
    if not a.plutil or not os.path.exists(a.plutil):
        sys.exit("no plutil found: pass --plutil PATH")
    problems = check_table(a.settings, a.plutil)
    if a.table_only:
        sys.exit(1 if problems else 0)
    rng = random.Random(a.seed)
    differences = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            root = {"name": "Ada", "list": [1, "two"]}
            root.update({k: random_value(rng) for k in rng.sample(["a", "b", "deep", "k1"], rng.randrange(1, 4))})
            original = plistlib.dumps(root, fmt=plistlib.FMT_XML)
            args = operation(rng, root)
            results = []
            for tool in (a.settings, a.plutil):
                path = os.path.join(tmp, f"{i}-{os.path.basename(tool)}.plist")
                open(path, "wb").write(original)
                # Our -extract prints to standard output without -o, plutil's replaces the file:
                # give both -o - so that both print.
                extra = ["-o", "-"] if args[0] == "-extract" else []
                ok, out, after = run(tool, args + extra, path)
                # -p of data is a row of the table (plutil drops each byte's leading zero).
                shown = None if args[0] == "-p" and b"<data>" in original else printed(args, out)
                results.append((ok, shown, after))
            (ok1, out1, after1), (ok2, out2, after2) = results
            what = " ".join(args[:1] + [x for x in args[2:3] if x.startswith("-") or args[0] == "-extract"])
            if ok1 != ok2:
                differences[what + ": exit status"].append((args, ok1, ok2))
            elif ok1 and out1 != out2:
                differences[what + ": output"].append((args, out1, out2))
            elif ok1 and args[0] != "-extract" and after1 != after2:
                differences[what + ": file"].append((args, after1, after2))
    total = sum(len(v) for v in differences.values())
    undocumented = 0
    for what, cases in sorted(differences.items()):
        rows = collections.Counter(documented(what, *case) for case in cases)
        undocumented += rows[None]
        args, ours, theirs = cases[0]
        where = "; ".join(f"{n} documented by the row {row}" if row else f"{n} NOT DOCUMENTED" for row, n in rows.items())
        print(f"{what}: {len(cases)} case(s) ({where}); e.g. {' '.join(args)}: settings {ours!r}, plutil {theirs!r}")
    print(f"{a.runs} runs, {total} differing, {undocumented} not documented in Docs/Tool.md")
    sys.exit(1 if problems or undocumented else 0)


if __name__ == "__main__":
    main()
