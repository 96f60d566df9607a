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
    """What is compared of standard output: raw and -type text, JSON as a value; nothing else
    (plutil -p and the XML layout are not stable formats)."""
    if args[0] == "-type" or (args[0] == "-extract" and args[2] == "raw"):
        return out.decode(errors="replace")
    if args[0] == "-extract" and args[2] == "json":
        try:
            return json.loads(out)
        except Exception:
            return out.decode(errors="replace")
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", default=os.path.join(ROOT, ".build", "debug", "settings"))
    parser.add_argument("--plutil", default=toolchain_plutil())
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args()
    if not a.plutil or not os.path.exists(a.plutil):
        sys.exit("no plutil found: pass --plutil PATH")
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
                results.append((ok, printed(args, out), after))
            (ok1, out1, after1), (ok2, out2, after2) = results
            what = " ".join(args[:1] + [x for x in args[2:3] if x.startswith("-") or args[0] == "-extract"])
            if ok1 != ok2:
                differences[what + ": exit status"].append((args, ok1, ok2))
            elif ok1 and out1 != out2:
                differences[what + ": output"].append((args, out1, out2))
            elif ok1 and args[0] != "-extract" and after1 != after2:
                differences[what + ": file"].append((args, after1, after2))
    total = sum(len(v) for v in differences.values())
    for what, cases in sorted(differences.items()):
        args, ours, theirs = cases[0]
        print(f"{what}: {len(cases)} case(s); e.g. {' '.join(args)}: settings {ours!r}, plutil {theirs!r}")
    print(f"{a.runs} runs, {total} differing")


if __name__ == "__main__":
    main()
