#!/usr/bin/env python3
"""Generates the property-list fixtures of `Tests/SettingsPlistTests/Fixtures`.

The package's tests read these files (found through `#filePath`), so `swift test` needs nothing
outside the repository. Each case is an input file plus its expected outcome, decided by two
independent oracles available on Linux:

- CPython's `plistlib` (in process), and
- libplist's `plistutil` (`apt-get install -y libplist-utils`), driven as a converter:
  binary -> XML, and XML -> binary -> XML (it copies XML input unchanged otherwise); its XML output
  is read back with `plistlib`.

A case's expected outcome is what both oracles agree on. Where they disagree, or where both follow a
known limit of theirs that CoreFoundation (which the codecs follow) does not share, the case says
what is expected in `decide` with the reason in `why`; the generator stops on any other
disagreement, so no fixture rests on one oracle alone without a written reason. `manifest.json`
records, per case, what each oracle did and why the case expects what it expects.

Files of a case (the layout the tests expect):
- `NAME.plist` / `NAME.bplist`: the input;
- `NAME.json`: the expected value in canonical typed JSON (`{"int": 1}`, `{"dict": [["k", V]]}`...);
- `NAME.error`: the input must be refused (one line: why);
- both `.json` and `.error`: either outcome is accepted.

Run from anywhere; it rewrites the whole Fixtures folder:
    python3 Tools/generate-plist-fixtures.py
Only the generator needs `plistutil`; the tests do not.
"""

import base64
import datetime as dt
import json
import math
import os
import plistlib
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "SettingsPlistTests", "Fixtures")
REFERENCE = dt.datetime(2001, 1, 1)

# MARK: - Canonical JSON


def canonical(v):
    """A plistlib value as canonical typed JSON (a Python structure ready for json.dumps)."""
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        if math.isnan(v):
            return {"real": "nan"}
        if math.isinf(v):
            return {"real": "inf" if v > 0 else "-inf"}
        return {"real": v}
    if isinstance(v, str):
        return {"string": v}
    if isinstance(v, (bytes, bytearray)):
        return {"data": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dt.datetime):
        return {"date": iso(v)}
    if isinstance(v, plistlib.UID):
        return {"uid": v.data}
    if isinstance(v, list):
        return {"array": [canonical(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[k, canonical(x)] for k, x in v.items()]}
    raise ValueError(f"not a plist value: {type(v)}")


def iso(d):
    """`YYYY-MM-DDTHH:MM:SS[.fraction]Z` for a naive UTC datetime."""
    text = d.strftime("%Y-%m-%dT%H:%M:%S")
    if d.year < 1000:
        text = f"{d.year:04d}" + text[text.index("-"):]
    if d.microsecond:
        text += (".%06d" % d.microsecond).rstrip("0")
    return text + "Z"


def in_range(c):
    """False when a value holds an integer no plist codec can carry (outside Int64.min ... UInt64.max)."""
    if "int" in c:
        return -(2 ** 63) <= c["int"] < 2 ** 64
    for key in ("array",):
        if key in c:
            return all(in_range(x) for x in c[key])
    if "dict" in c:
        return all(in_range(x) for _, x in c["dict"])
    return True


def close(a, b):
    """Equal canonical values, allowing for plistutil's XML output: reals printed with fewer digits,
    dates as whole seconds, dictionary keys in any order."""
    (ta, pa), = a.items()
    (tb, pb), = b.items()
    if ta != tb:
        return False
    if ta == "real":
        if isinstance(pa, str) or isinstance(pb, str):
            return pa == pb
        return pa == pb or abs(pa - pb) <= 1e-6 * max(abs(pa), abs(pb))
    if ta == "date":
        ya, yb = plistlib_date(pa), plistlib_date(pb)
        return abs((ya - yb).total_seconds()) < 1
    if ta == "array":
        return len(pa) == len(pb) and all(close(x, y) for x, y in zip(pa, pb))
    if ta == "dict":
        return sorted(k for k, _ in pa) == sorted(k for k, _ in pb) and all(
            close(x, dict(pb)[k]) for k, x in pa)
    return pa == pb


def plistlib_date(text):
    text = text.rstrip("Z")
    whole, _, fraction = text.partition(".")
    d = dt.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    return d + dt.timedelta(microseconds=int((fraction + "000000")[:6]) if fraction else 0)

# MARK: - Oracles


def run_plistlib(data):
    """("value", canonical) or ("error", message)."""
    try:
        sys.setrecursionlimit(20000)
        value = plistlib.loads(data)
        c = canonical(value)
        if not in_range(c):
            return ("error", "integer out of range")
        return ("value", c)
    except RecursionError:
        return ("error", "recursion")
    except Exception as e:  # plistlib raises many kinds on malformed input
        return ("error", f"{type(e).__name__}: {e}"[:120])


def run_plistutil(data, binary):
    """("value", canonical), ("error", message) or ("unreadable", message) when plistutil's own XML
    output cannot be read back (then it says nothing about the case)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in")
        with open(src, "wb") as f:
            f.write(data)
        if not binary:
            step = os.path.join(tmp, "step.bplist")
            r = subprocess.run(["plistutil", "-i", src, "-f", "bin", "-o", step], capture_output=True, timeout=60)
            if r.returncode != 0 or not os.path.exists(step) or os.path.getsize(step) == 0:
                return ("error", "plistutil could not read it")
            src = step
        out = os.path.join(tmp, "out.plist")
        r = subprocess.run(["plistutil", "-i", src, "-f", "xml", "-o", out], capture_output=True, timeout=60)
        if r.returncode != 0 or not os.path.exists(out):
            return ("error", "plistutil could not read it")
        text = open(out, "rb").read()
        if b"<plist version=\"1.0\">\n</plist>" in text or b"<plist version=\"1.0\"/>" in text or not text.strip():
            return ("error", "plistutil printed an empty document")
        try:
            return ("value", canonical(plistlib.loads(text)))
        except Exception as e:
            return ("unreadable", f"{type(e).__name__}: {e}"[:120])

# MARK: - Binary assembly


def be(value, size):
    return value.to_bytes(size, "big")


def bplist(objects, top=0, ref_size=None, offset_size=None, magic=b"bplist00", count=None,
           table_at=None, offsets=None, trailer_extra=b""):
    """A binary plist from already-encoded objects (references inside them are the caller's)."""
    body = bytearray(magic)
    positions = []
    for obj in objects:
        positions.append(len(body))
        body += obj
    if offsets is not None:
        positions = offsets
    table = len(body) if table_at is None else table_at
    if offset_size is None:
        offset_size = 1 if table < 256 else 2 if table < 65536 else 4
    for p in positions:
        body += be(p, offset_size)
    if ref_size is None:
        ref_size = 1 if len(objects) < 256 else 2
    body += bytes(6) + bytes([offset_size, ref_size])
    body += be(len(objects) if count is None else count, 8) + be(top, 8) + be(table, 8)
    return bytes(body) + trailer_extra


def ascii_string(s):
    raw = s.encode("ascii")
    return marker(0x50, len(raw)) + raw


def utf16_string(s):
    raw = s.encode("utf-16-be")
    return marker(0x60, len(raw) // 2) + raw


def marker(high, count):
    if count < 15:
        return bytes([high | count])
    return bytes([high | 0x0F]) + integer(count)


def integer(n, size=None):
    if size is None:
        size = 1 if 0 <= n < 256 else 2 if 0 <= n < 65536 else 4 if 0 <= n < 2 ** 32 else 8
    width = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}[size]
    return bytes([0x10 | width]) + (n % (1 << (8 * size))).to_bytes(size, "big")


def array(refs, ref_size=1):
    return marker(0xA0, len(refs)) + b"".join(be(r, ref_size) for r in refs)


def dictionary(keys, values, ref_size=1):
    return marker(0xD0, len(keys)) + b"".join(be(r, ref_size) for r in keys + values)


def real64(x):
    return b"\x23" + struct.pack(">d", x)


def date64(x):
    return b"\x33" + struct.pack(">d", x)


def dumps(value, **kw):
    return plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=False, **kw)


def xml_dumps(value):
    return plistlib.dumps(value, fmt=plistlib.FMT_XML, sort_keys=True)

# MARK: - Cases

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n')


def doc(body, head=HEAD):
    return (head + '<plist version="1.0">\n' + body + "\n</plist>\n").encode()


def ref_date(seconds):
    return REFERENCE + dt.timedelta(seconds=seconds)


CASES = []


def case(category, name, data, decide=None, why=None, either=False):
    """One fixture. `decide`: "value", "error" or a canonical value, overriding the oracles (with
    `why`); `either`: the oracles' value is expected, and an error is accepted too (with `why`)."""
    CASES.append(dict(category=category, name=name, data=data, decide=decide, why=why, either=either))


def cases():
    # scalars
    for name, body in [("true", "<true/>"), ("false", "<false/>"), ("integer", "<integer>42</integer>"),
                       ("real", "<real>1.5</real>"), ("string", "<string>hello</string>"),
                       ("date", "<date>2024-02-29T12:34:56Z</date>"), ("data", "<data>AAECAw==</data>")]:
        case("scalars", "xml_" + name, doc(body))
    case("scalars", "xml_uid_cfuid_dict", doc("<dict><key>CF$UID</key><integer>7</integer></dict>"),
         decide={"uid": 7}, why="CoreFoundation reads a dict whose only key is CF$UID as a UID; "
         "plistlib and plistutil keep the dict")
    for name, value in [("true", True), ("false", False), ("integer", 42), ("real", 1.5), ("string", "hello"),
                        ("date", ref_date(730_000_000)), ("data", b"\x00\x01\x02\x03")]:
        case("scalars", "bin_" + name, dumps(value))
    case("scalars", "bin_uid", dumps([plistlib.UID(7), plistlib.UID(300)]),
         decide={"array": [{"uid": 7}, {"uid": 300}]},
         why="plistutil writes UIDs as CF$UID dicts, which plistlib reads as dicts; the binary UID object is a UID")

    # integers
    for name, text, in [("zero", "0"), ("minus_one", "-1"), ("int64_max", "9223372036854775807"),
                        ("int64_min", "-9223372036854775808")]:
        case("integers", "xml_" + name, doc(f"<integer>{text}</integer>"))
    case("integers", "xml_uint64_max", doc("<integer>18446744073709551615</integer>"),
         decide={"int": 18446744073709551615},
         why="libplist stores integers in 64 bits and prints this one negative; CoreFoundation and plistlib read UInt64.max")
    case("integers", "xml_hex", doc("<integer>0x1F</integer>"), decide={"int": 31},
         why="CoreFoundation reads 0x hexadecimal; plistlib refuses it")
    case("integers", "xml_leading_zeros", doc("<integer>000123</integer>"), decide={"int": 123},
         why="CoreFoundation and plistlib read decimal; libplist reads a leading 0 as octal")
    case("integers", "xml_plus_sign", doc("<integer>+5</integer>"))
    case("integers", "xml_overflow_2pow64", doc("<integer>18446744073709551616</integer>"), decide="error",
         why="beyond UInt64.max: CoreFoundation refuses it (plistlib reads any size, libplist clamps)")
    case("integers", "xml_underflow", doc("<integer>-9223372036854775809</integer>"), decide="error",
         why="below Int64.min: CoreFoundation refuses it (plistlib reads any size, libplist clamps)")
    case("integers", "bin_widths_1_2_4_8", dumps([1, 300, 70000, 2 ** 40, -1]))
    case("integers", "bin_negative_is_8_bytes", bplist([array([1, 2]), integer(-2, 8), integer(-(2 ** 40), 8)]))
    case("integers", "bin_non_minimal_width", bplist([array([1, 2]), integer(1, 8), integer(2, 4)]))
    case("integers", "bin_uint64_max_16_bytes", dumps(2 ** 64 - 1), decide={"int": 2 ** 64 - 1},
         why="plistlib writes it as a 16-byte integer; libplist reads the 16 bytes differently, "
         "CoreFoundation reads the low 64 bits unsigned")

    # reals
    for name, text in [("tenth", "0.1"), ("third", "0.3333333333333333"), ("1e308", "1e308"),
                       ("neg_zero", "-0.0"), ("integer_text", "3"), ("exponent", "1.25E-3")]:
        case("reals", "xml_" + name, doc(f"<real>{text}</real>"))
    for name, text, expected in [("nan", "nan", "nan"), ("inf", "inf", "inf"), ("neg_inf", "-inf", "-inf"),
                                 ("infinity_mixed_case", "+Infinity", "inf")]:
        case("reals", "xml_" + name, doc(f"<real>{text}</real>"), decide={"real": expected},
             why="libplist prints non-finite reals in a form plistlib cannot compare; CoreFoundation reads them")
    case("reals", "bin_values", dumps([0.1, -0.0, 1e308, 5e-324, 2.5]))
    case("reals", "bin_float32", bplist([array([1]), b"\x22" + struct.pack(">f", 0.5)]))
    case("reals", "bin_non_finite", dumps([math.inf, -math.inf]), decide={"array": [{"real": "inf"}, {"real": "-inf"}]},
         why="libplist prints non-finite reals in a form plistlib cannot read back")
    case("reals", "bin_nan", dumps(math.nan), decide={"real": "nan"},
         why="libplist prints NaN in a form plistlib cannot read back")

    # dates
    for name, text in [("reference_2001", "2001-01-01T00:00:00Z"), ("unix_epoch_1970", "1970-01-01T00:00:00Z"),
                       ("leap_day", "2000-02-29T23:59:59Z"), ("distant_future", "4001-01-01T00:00:00Z")]:
        case("dates", "xml_" + name, doc(f"<date>{text}</date>"))
    case("dates", "xml_fraction_not_allowed", doc("<date>2020-01-01T00:00:00.5Z</date>"), decide="error",
         why="CoreFoundation reads only whole seconds in XML; plistlib fails too, libplist drops the fraction")
    case("dates", "xml_garbage", doc("<date>yesterday</date>"), decide="error",
         why="not a date; libplist reads it as 1970")
    case("dates", "bin_reference_zero", dumps(ref_date(0)))
    case("dates", "bin_half_second", bplist([array([1, 2]), date64(0.5), date64(-1.25)]),
         decide={"array": [{"date": "2001-01-01T00:00:00.5Z"}, {"date": "2000-12-31T23:59:58.75Z"}]},
         why="libplist prints dates as whole seconds; plistlib and CoreFoundation keep the fraction")
    case("dates", "bin_distant_past_future", bplist([array([1, 2]), date64(-63_113_904_000.0), date64(63_113_904_000.0)]),
         decide={"array": [{"date": "0001-01-01T00:00:00Z"}, {"date": "4001-01-01T00:00:00Z"}]},
         why="libplist's dates stop at 1901 (32-bit seconds); the binary dates are plain doubles")

    # data
    case("data", "xml_small", doc("<data>aGVsbG8=</data>"))
    case("data", "xml_whitespace_everywhere", doc("<data>\n\taGVs\n  bG8g\r\nd29y bGQ=\n</data>"))
    case("data", "xml_all_bytes_wrapped76", xml_dumps(bytes(range(256))))
    case("data", "xml_non_ascii_in_base64", doc("<data>aGVs\u00e9bG8=</data>"), decide="error",
         why="CoreFoundation refuses bytes >= 0x80 in base64 (plistlib and libplist skip them)")
    case("data", "bin_length_15", dumps(bytes(range(15))))
    case("data", "bin_large_20k", dumps(bytes(i % 251 for i in range(20_000))))

    # dicts
    case("dicts", "xml_file_order", doc("<dict><key>zeta</key><integer>1</integer><key>alpha</key><integer>2</integer>"
                                        "<key>mid</key><integer>3</integer></dict>"))
    case("dicts", "xml_300_keys_file_order", xml_plist_keys(300))
    case("dicts", "xml_keys_needing_escapes", doc("<dict><key>a&lt;b&amp;c</key><string>&quot;q&apos;</string></dict>"))
    case("dicts", "xml_duplicate_key_last_wins",
         doc("<dict><key>a</key><integer>1</integer><key>b</key><integer>2</integer><key>a</key><integer>3</integer></dict>"),
         decide={"dict": [["a", {"int": 3}], ["b", {"int": 2}]]},
         why="CoreFoundation keeps the last value at the first position (plistlib the same; libplist keeps both)")
    case("dicts", "bin_file_order", dumps({"zeta": 1, "alpha": 2, "mid": 3}))
    case("dicts", "bin_utf16_keys", dumps({"caf\u00e9": 1, "\u65e5\u672c": 2}))
    case("dicts", "bin_duplicate_key_first_wins",
         bplist([dictionary([1, 1], [2, 3]), ascii_string("a"), integer(1), integer(2)]),
         decide={"dict": [["a", {"int": 1}]]},
         why="CoreFoundation keeps the first value of a binary duplicate key (plistlib the last, libplist both)")

    # empty
    for name, body in [("array_selfclosing", "<array/>"), ("array_open_close", "<array></array>"),
                       ("dict_selfclosing", "<dict/>"), ("dict_open_close", "<dict></dict>"),
                       ("string_selfclosing", "<string/>"), ("string_open_close", "<string></string>"),
                       ("data_open_close", "<data></data>")]:
        case("empty", "xml_" + name, doc(body))
    case("empty", "xml_empty_key", doc("<dict><key></key><integer>1</integer></dict>"))
    for name, value in [("array", []), ("dict", {}), ("data", b""), ("string", ""),
                        ("nested", [[], {}, [[]], {"a": []}])]:
        case("empty", "bin_" + name, dumps(value))

    # unicode
    case("unicode", "xml_non_bmp_raw_utf8", doc("<string>\U0001F600 \u00e9\u4e2d</string>"))
    case("unicode", "xml_combining_marks", doc("<dict><key>e\u0301</key><integer>1</integer>"
                                               "<key>\u00e9</key><integer>2</integer></dict>"))
    case("unicode", "xml_numeric_entities", doc("<string>&#65;&#x42;&#x1F600;</string>"))
    case("unicode", "xml_predefined_entities", doc("<string>&lt;&gt;&amp;&quot;&apos;</string>"))
    case("unicode", "xml_cdata", doc("<string><![CDATA[<not a tag> & more]]></string>"))
    case("unicode", "xml_whitespace_preserved", doc("<string>  two  spaces \t tab  </string>"))
    case("unicode", "xml_utf8_bom", b"\xef\xbb\xbf" + doc("<string>bom</string>"), decide="value",
         why="libplist cannot read a UTF-8 byte-order mark; CoreFoundation and plistlib skip it")
    case("unicode", "xml_crlf_in_string", doc("<string>a\r\nb\rc</string>"), decide={"string": "a\r\nb\rc"},
         why="CoreFoundation does not normalize line ends inside strings; expat (plistlib) does")
    case("unicode", "bin_ascii_long", dumps("x" * 300))
    case("unicode", "bin_utf16_bmp", dumps("caf\u00e9 \u4e2d\u6587"))
    case("unicode", "bin_utf16_non_bmp", dumps("\U0001F600 smile"))
    case("unicode", "bin_string_with_nul", dumps("a\x00b"), decide={"string": "a\u0000b"},
         why="libplist cuts strings at U+0000 when it prints them")

    # nesting
    case("nesting", "xml_array_depth300", doc("<array>" * 300 + "</array>" * 300))
    case("nesting", "xml_dict_depth200", doc("<dict><key>k</key>" * 200 + "<true/>" + "</dict>" * 200))
    case("nesting", "bin_array_depth250", bplist([array([i + 1]) for i in range(249)] + [array([])]))

    # xml-syntax
    case("xml-syntax", "no_declaration", ('<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
                                          '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
                                          '<plist version="1.0"><string>x</string></plist>').encode(),
         decide={"string": "x"}, why="plistlib recognizes XML only when it starts with <?xml or <plist")
    case("xml-syntax", "no_doctype", b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><true/></plist>')
    case("xml-syntax", "no_declaration_no_doctype", b'<plist version="1.0"><integer>1</integer></plist>')
    case("xml-syntax", "plist_without_version", b'<plist><string>v</string></plist>')
    case("xml-syntax", "comments_everywhere", doc("<!-- a --><dict><!-- b --><key>k</key><!-- c --><string>v</string>"
                                                  "<!-- d --></dict><!-- e -->"))
    case("xml-syntax", "processing_instruction_inside", doc("<array><?pi data?><true/></array>"))
    case("xml-syntax", "attributes_ignored", doc('<dict id="1"><key a="b">k</key><string x="y">v</string></dict>'))
    case("xml-syntax", "heavy_whitespace", doc("\n\n  <dict>\n\t\t<key>k</key>   \n\n <integer>5</integer>\n</dict>  \n"))
    case("xml-syntax", "crlf_line_endings", doc("<dict>\r\n<key>k</key>\r\n<true/>\r\n</dict>").replace(b"\n", b"\r\n")
         .replace(b"\r\r\n", b"\r\n"))
    case("xml-syntax", "single_line", b'<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>a</key>'
                                      b'<array><integer>1</integer><string>b</string></array></dict></plist>')
    case("xml-syntax", "selfclosing_with_space", doc("<array><true /><false /></array>"))
    case("xml-syntax", "key_outside_dict_is_string", doc("<array><key>k</key></array>"), decide={"array": [{"string": "k"}]},
         why="CoreFoundation reads a <key> outside a dict as a string; plistlib refuses it")
    case("xml-syntax", "missing_plist_root", HEAD.encode() + b"<dict><key>a</key><true/></dict>\n")

    # xml-malformed
    for name, text, why in [
        ("empty_file", b"", "no document"),
        ("whitespace_only", b" \n\t\n", "no document"),
        ("unclosed_dict", doc("<dict><key>a</key><true/>"), "unclosed element"),
        ("unclosed_plist", HEAD.encode() + b'<plist version="1.0"><true/>', "unclosed element"),
        ("unclosed_string", doc("<string>abc"), "unclosed element"),
        ("mismatched_tags", doc("<array><true/></dict>"), "mismatched end tag"),
        ("unknown_tag_in_array", doc("<array><bogus/></array>"), "unknown element"),
        ("unknown_root_tag", doc("<bogus>1</bogus>"), "unknown element"),
        ("unknown_entity", doc("<string>&nope;</string>"), "undefined entity"),
        ("integer_garbage", doc("<integer>12abc</integer>"), "not an integer"),
        ("integer_empty", doc("<integer></integer>"), "empty integer"),
        ("real_garbage", doc("<real>1.5x</real>"), "not a real"),
        ("real_empty", doc("<real></real>"), "empty real"),
        ("key_without_value", doc("<dict><key>a</key></dict>"), "a key with no value"),
        ("value_without_key", doc("<dict><string>v</string></dict>"), "a value with no key"),
        ("two_root_objects", doc("<true/><false/>"), "two objects inside <plist>"),
        ("unterminated_comment", doc("<!-- never closed <true/>"), "unterminated comment"),
        ("unterminated_cdata", doc("<string><![CDATA[abc</string>"), "unterminated CDATA"),
        ("invalid_utf8_in_string", HEAD.encode() + b'<plist version="1.0"><string>a\xffb</string></plist>', "invalid UTF-8"),
        ("true_with_text", doc("<true>yes</true>"), "text inside <true>"),
    ]:
        case("xml-malformed", name, text, decide="error", why=why)

    # binary-layout
    case("binary-layout", "bin_66000_objects", dumps(list(range(66000))))
    case("binary-layout", "bin_ref_size_2_forced", bplist([array([1, 2], 2), integer(1), ascii_string("two")], ref_size=2))
    case("binary-layout", "bin_offset_size_4_forced", bplist([array([1, 2]), integer(1), ascii_string("two")], offset_size=4))
    case("binary-layout", "bin_top_object_last", bplist([integer(5), ascii_string("s"), array([0, 1])], top=2))
    case("binary-layout", "bin_shared_string", bplist([array([1, 1, 1]), ascii_string("same")]))
    case("binary-layout", "bin_unreferenced_objects", bplist([array([1]), integer(1), ascii_string("orphan")]))
    case("binary-layout", "bin_gap_before_offset_table", bplist([array([1]), integer(9), b"\x00" * 7]))

    # binary-malformed
    good = [array([1]), integer(1)]
    for name, data, why in [
        ("bin_bad_magic", bplist(good, magic=b"xplist00"), "not a binary plist"),
        ("bin_version_10", bplist(good, magic=b"bplist10"), "unknown version"),
        ("bin_header_only", b"bplist00", "no trailer"),
        ("bin_truncated_half", dumps({"a": [1, 2, 3], "b": "text"})[:20], "truncated"),
        ("bin_truncated_trailer", bplist(good)[:-5], "truncated trailer"),
        ("bin_zero_objects", bplist([], count=0), "no objects"),
        ("bin_top_object_out_of_range", bplist(good, top=5), "top object out of range"),
        ("bin_ref_out_of_range", bplist([array([7]), integer(1)]), "reference out of range"),
        ("bin_offset_table_beyond_file", bplist(good, table_at=4000), "offset table beyond the file"),
        ("bin_offset_outside_object_area", bplist(good, offsets=[8, 2]), "an offset into the header"),
        ("bin_string_length_overrun", bplist([array([1]), b"\x5f\x10\x7f" + b"ab"]), "string longer than the file"),
        ("bin_cycle_array_contains_itself", bplist([array([0])]), "a cycle"),
        ("bin_cycle_via_dict", bplist([dictionary([1], [2]), ascii_string("k"), array([0])]), "a cycle"),
        ("bin_dict_key_is_integer", bplist([dictionary([1], [1]), integer(3)]), "a key that is not a string"),
        ("bin_unknown_marker_0x70", bplist([array([1]), b"\x70"]), "unknown marker"),
        ("bin_real_2_bytes", bplist([array([1]), b"\x21\x00\x00"]), "a 2-byte real"),
        ("bin_int_32_bytes", bplist([array([1]), b"\x15" + bytes(32)]), "a 32-byte integer"),
    ]:
        case("binary-malformed", name, data, decide="error", why=why)
    case("binary-malformed", "bin_version_01_accepted", bplist(good, magic=b"bplist01"),
         decide={"array": [{"int": 1}]}, either=True,
         why="CoreFoundation reads bplist0 followed by any character; the others refuse it, so an error is accepted too")

    # writers: files written by other codecs, read back
    written = {"array": [1, "plain", []], "ascii": "plain", "big": 2 ** 63 - 1, "bool": False,
               "data": bytes(range(50)), "date": dt.datetime(2022, 3, 4, 5, 6, 7), "dict": {"nested": True},
               "int": -42, "real": 3.25, "string": "h\u00e9llo \U0001F600"}
    case("writers", "xml_written_by_plistlib", xml_dumps(written))
    case("writers", "bin_written_by_plistlib", plistlib.dumps(written, fmt=plistlib.FMT_BINARY))
    written_by_plistutil = plistutil_binary(xml_dumps(written))
    if written_by_plistutil is not None:
        case("writers", "bin_written_by_plistutil", written_by_plistutil)

    # realworld-like documents
    info = {"CFBundleIdentifier": "org.example.App", "CFBundleVersion": "42", "LSRequiresIPhoneOS": True,
            "UIRequiredDeviceCapabilities": ["armv7"], "UISupportedInterfaceOrientations": ["Portrait", "Landscape"],
            "NSAppTransportSecurity": {"NSAllowsArbitraryLoads": False}}
    case("realworld", "info_plist_like", xml_dumps(info))
    root = {"StringsTable": "Root", "PreferenceSpecifiers": [
        {"Type": "PSGroupSpecifier", "Title": "Group"},
        {"Type": "PSToggleSwitchSpecifier", "Title": "Enabled", "Key": "enabled_preference", "DefaultValue": True},
        {"Type": "PSSliderSpecifier", "Key": "slider_preference", "DefaultValue": 0.5, "MinimumValue": 0,
         "MaximumValue": 1}]}
    case("realworld", "settings_bundle_root", xml_dumps(root))


def xml_plist_keys(n):
    keys = [f"key{(i * 7919) % n:04d}" for i in range(n)]
    return doc("<dict>" + "".join(f"<key>{k}</key><integer>{i}</integer>" for i, k in enumerate(keys)) + "</dict>")


def plistutil_binary(xml):
    if not shutil.which("plistutil"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in.plist"), os.path.join(tmp, "out.bplist")
        open(src, "wb").write(xml)
        subprocess.run(["plistutil", "-i", src, "-f", "bin", "-o", out], check=True, timeout=60)
        return open(out, "rb").read()

# MARK: - Writing


def main():
    if not shutil.which("plistutil"):
        sys.exit("plistutil not found: apt-get install -y libplist-utils")
    cases()
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    manifest = []
    problems = []
    for c in CASES:
        binary = c["data"].startswith(b"bplist") or c["category"].startswith("binary") or c["name"].startswith("bin_")
        a = run_plistlib(c["data"])
        b = run_plistutil(c["data"], binary)
        decide, why = c["decide"], c["why"]
        agree = (a[0] == b[0] == "error") or (a[0] == b[0] == "value" and close(a[1], b[1]))
        if decide is None:
            if not agree:
                problems.append(f"{c['category']}/{c['name']}: plistlib {a}, plistutil {b}: decide it")
                continue
            expected = a[1] if a[0] == "value" else None
        elif decide == "error":
            if not why:
                problems.append(f"{c['category']}/{c['name']}: a decision needs a reason")
            expected = None
        elif decide == "value":
            expected = a[1]
        else:
            expected = decide
        folder = os.path.join(ROOT, c["category"])
        os.makedirs(folder, exist_ok=True)
        stem = os.path.join(folder, c["name"])
        with open(stem + (".bplist" if binary else ".plist"), "wb") as f:
            f.write(c["data"])
        if expected is not None:
            with open(stem + ".json", "w") as f:
                f.write(json.dumps(expected, ensure_ascii=False) + "\n")
        if expected is None or c["either"]:
            with open(stem + ".error", "w") as f:
                f.write((why or a[1] if a[0] == "error" else why or "malformed") + "\n")
        manifest.append({"case": f"{c['category']}/{c['name']}",
                         "expect": "value" if expected is not None else "error",
                         "either": c["either"],
                         "plistlib": a[0] if a[0] != "error" else "error: " + a[1],
                         "plistutil": b[0] if b[0] != "error" else "error: " + b[1],
                         "oracles agree": agree,
                         "why": why})
    if problems:
        sys.exit("\n".join(problems))
    with open(os.path.join(ROOT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(manifest)} cases in {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
