#!/usr/bin/python3
"""Agreement test: tools/wireshark/swemu.lua (under tshark) against swemu's own analyzer.

Usage:
  dissector_vs_analyzer.py --lua swemu.lua --analyze swemu-analyze --tmp DIR
                           (--pcap FILE | --gen swemu-gen [--pcap FILE])

With --gen, first runs `swemu-gen --workload atp --workers 4 --layers 2 --seed 1 --out PCAP`
(PCAP: --pcap, or DIR/atp.pcap). Then runs `swemu-analyze PCAP --packets DIR/packets.csv`,
which writes one row per frame (the columns of LAYER_COLUMNS below, then each protocol's
"<protocol>.<field>" columns in the analyzer's order, then "malformed"), and tshark with the Lua
script on the same pcap, and compares the two row by row, cell by cell. No protocol is named
here: the protocols' columns come from the CSV header, their malformed reasons from their own
tests (dissector_test.py's REASON_WORDS for ATP, each *_round_trip.py's Protocol).

How each analyzer column is compared:
  frame, caplen, len        frame.number, frame.cap_len, frame.len
  time_ns                   frame.time_epoch, as integer nanoseconds
  eth.src, eth.dst          eth.src, eth.dst (lower case)
  vlan.id                   vlan.id of the outer tag
  ip.*                      ip.src, ip.dst, ip.dsfield.dscp, ip.dsfield.ecn, ip.proto (outer)
  l4.sport, l4.dport        udp.srcport/dstport, else tcp.srcport/dstport
  <protocol>.<field>        the dissector's field of the same name, as an integer (atp.flags:
                            the 6 flag bits; pcn.start, dlcp.pull as 0/1; goat.bitmap as 0x...)
  malformed                 as a yes/no: the analyzer names a reason, or tshark flags the frame
                            (_ws.malformed, which the dissector's truncated, bad-version,
                            bad-type, bad-count, chunk-overrun and START+ACK experts set, or an
                            IPv4/UDP/TCP checksum error); a protocol's reason must also be among
                            the dissector's expert messages (the words its own test gives)
Numbers are compared as integers (tshark's "0x..." parsed as hex). An empty cell means the
header (or, in a header cut short, the field) is absent; the other side must be empty too. Both
tools decode a cut header as far as its bytes go, and neither calls a frame cut only by the
capture's snap length malformed.

Exit status: 0 when every cell agrees and at least one frame with a program header (ATP, PCN,
DLCP, GOAT, PLink, ...) was compared; 1 on
differences (the first --max-diffs are printed: frame, column, both values); 2 when a tool is
missing or fails.
"""

import argparse
import csv
import glob
import importlib
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dissector_test  # noqa: E402
import round_trip_lib  # noqa: E402

# The analyzer's columns of every frame's layers, before the protocols' columns.
LAYER_COLUMNS = [
    "frame", "time_ns", "caplen", "len", "eth.src", "eth.dst", "vlan.id", "ip.src", "ip.dst",
    "ip.dscp", "ip.ecn", "ip.proto", "l4.sport", "l4.dport",
]
PROTOCOL_COLUMN = re.compile(r"^([a-z][a-z0-9_]*)\.[a-z0-9_.]+$")

# Layer column -> (tshark fields tried in order, the first non-empty one counts; kind).
# Kinds: "int" (decimal or 0x hex), "text" (compared lower case), "time" (seconds -> ns).
LAYER_SOURCES = {
    "frame": (["frame.number"], "int"),
    "time_ns": (["frame.time_epoch"], "time"),
    "caplen": (["frame.cap_len"], "int"),
    "len": (["frame.len"], "int"),
    "eth.src": (["eth.src"], "text"),
    "eth.dst": (["eth.dst"], "text"),
    "vlan.id": (["vlan.id"], "int"),
    "ip.src": (["ip.src"], "text"),
    "ip.dst": (["ip.dst"], "text"),
    "ip.dscp": (["ip.dsfield.dscp"], "int"),
    "ip.ecn": (["ip.dsfield.ecn"], "int"),
    "ip.proto": (["ip.proto"], "int"),
    "l4.sport": (["udp.srcport", "tcp.srcport"], "int"),
    "l4.dport": (["udp.dstport", "tcp.dstport"], "int"),
}

# tshark fields read to decide "malformed".
EXPERT_FIELDS = ["_ws.malformed", "_ws.expert.group", "_ws.expert.severity",
                 "_ws.expert.message"]
PI_CHECKSUM = 0x01000000  # epan/proto.h expert groups and severities
PI_ERROR = 0x00800000


def protocol_reason_words():
    """The analyzer's malformed reasons -> the words of the dissector's expert message, as each
    protocol's own test gives them: dissector_test.py (ATP) and every *_round_trip.py here."""
    words = dict(dissector_test.REASON_WORDS)
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "*_round_trip.py"))):
        module = importlib.import_module(os.path.splitext(os.path.basename(path))[0])
        for value in vars(module).values():
            if isinstance(value, round_trip_lib.Protocol):
                words.update(value.reason_words)
    return words


AGGREGATOR = "|"  # between repeated values of one field (messages may contain commas)
GEN_ARGS = ["--workload", "atp", "--workers", "4", "--layers", "2", "--seed", "1"]


class SetupError(Exception):
    """A tool is missing or failed: not a disagreement, exit 2."""


def run(cmd, what, timeout=600):
    print("+ " + " ".join(cmd), flush=True)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise SetupError("%s: %s not found" % (what, cmd[0]))
    except subprocess.TimeoutExpired:
        raise SetupError("%s timed out after %d s: %s" % (what, timeout, " ".join(cmd)))
    if proc.returncode != 0:
        raise SetupError("%s exited with %d: %s\n%s" % (what, proc.returncode, " ".join(cmd),
                                                      proc.stderr.strip()[-2000:]))
    return proc


def find_tshark():
    path = shutil.which("tshark") or ("/usr/bin/tshark" if os.path.exists("/usr/bin/tshark")
                                      else None)
    if path is None:
        raise SetupError("tshark not found (install the tshark package: apt-get install "
                         "tshark); this test does not skip without it")
    return path


def check_executable(path, option):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise SetupError("%s %s: not an executable file" % (option, path))


# --------------------------------------------------------------------------------------------
# Reading both sides
# --------------------------------------------------------------------------------------------

def protocol_columns(header):
    """{protocol: its columns}, in the header's order, from the analyzer's CSV header: the
    layers' columns, then "<protocol>.<field>" columns, each protocol's together, then
    "malformed". Raises SetupError on any other header."""
    middle = (header or [])[len(LAYER_COLUMNS):-1]
    if (header or [])[:len(LAYER_COLUMNS)] != LAYER_COLUMNS or header[-1:] != ["malformed"]:
        raise SetupError("header is\n  %s\nexpected %s, then <protocol>.<field> columns, then "
                         "malformed" % (",".join(header or []), ",".join(LAYER_COLUMNS)))
    protocols = {}
    previous = None
    for column in middle:
        match = PROTOCOL_COLUMN.match(column)
        if not match:
            raise SetupError("header column %r is not <protocol>.<field>" % column)
        name = match.group(1)
        if name in protocols and name != previous:
            raise SetupError("header: the %s columns are not together" % name)
        protocols.setdefault(name, []).append(column)
        previous = name
    if not protocols:
        raise SetupError("header has no protocol columns: %s" % ",".join(header))
    return protocols


def column_sources(protocols):
    """Analyzer column -> (tshark fields, kind): the layers', then every protocol column from
    the dissector's field of the same name."""
    sources = dict(LAYER_SOURCES)
    for columns in protocols.values():
        for column in columns:
            sources[column] = ([column], "int")
    return sources


def read_analyzer_csv(path):
    """({protocol: columns}, {frame number: {column: cell}}) from the analyzer's CSV."""
    if not os.path.isfile(path):
        raise SetupError("the analyzer wrote no %s" % path)
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        try:
            protocols = protocol_columns(header)
        except SetupError as error:
            raise SetupError("%s: %s" % (path, error))
        rows = {}
        for line_number, cells in enumerate(reader, start=2):
            if len(cells) != len(header):
                raise SetupError("%s line %d: %d cells, expected %d" % (
                    path, line_number, len(cells), len(header)))
            row = dict(zip(header, (c.strip() for c in cells)))
            rows[int(row["frame"])] = row
    return protocols, rows


def tshark_fields(sources):
    fields = []
    for fields_tried, _ in sources.values():
        fields += [f for f in fields_tried if f not in fields]
    return fields + EXPERT_FIELDS


def read_tshark(tshark, lua, pcap, atp_port, sources, out_path):
    """{frame number: {field: [values]}} from tshark with the dissector."""
    fields = tshark_fields(sources)
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap,
           "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
           "-o", "tcp.check_checksum:TRUE",
           "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
           "-E", "aggregator=" + AGGREGATOR]
    if atp_port is not None:
        cmd += ["-o", "swemu_atp.udp_port:%d" % atp_port]
    for f in fields:
        cmd += ["-e", f]
    proc = run(cmd, "tshark")
    with open(out_path, "w") as out:
        out.write(proc.stdout)
    lua_errors = [line for line in proc.stderr.splitlines() if "lua" in line.lower()]
    if lua_errors:
        raise SetupError("tshark reported Lua errors:\n  " + "\n  ".join(lua_errors[:10]))
    rows = {}
    for line in proc.stdout.splitlines():
        cells = line.split("\t")
        if len(cells) != len(fields):
            raise SetupError("tshark printed %d columns, expected %d: %r" % (
                len(cells), len(fields), line[:200]))
        row = {f: ([v for v in c.split(AGGREGATOR)] if c else [])
               for f, c in zip(fields, cells)}
        rows[int(row["frame.number"][0])] = row
    return rows


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------

def seconds_to_ns(text):
    """'1700000000.000001000' -> 1700000000000001000, exactly (no float rounding)."""
    whole, _, fraction = text.partition(".")
    return int(whole) * 10**9 + int((fraction + "000000000")[:9])


def normalize(text, kind):
    """A cell as a comparable value; raises ValueError when it does not parse."""
    if text == "":
        return None
    if kind == "int":
        if text in ("True", "False"):  # booleans in newer tsharks
            return int(text == "True")
        return int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text)
    if kind == "time":
        return seconds_to_ns(text) if "." in text else int(text) * 10**9
    return text.lower()


def tshark_cell(row, sources):
    for f in sources:
        if row.get(f):
            return row[f][0]  # the first (outermost) occurrence
    return ""


def tshark_malformed(row):
    """Why tshark thinks the frame is malformed ("" if it does not)."""
    reasons = []
    if row["_ws.malformed"]:
        reasons.append("malformed")
    for group, severity in zip(row["_ws.expert.group"], row["_ws.expert.severity"]):
        try:
            if int(group, 0) == PI_CHECKSUM and int(severity, 0) >= PI_ERROR:
                reasons.append("checksum")
        except ValueError:
            pass
    if reasons and row["_ws.expert.message"]:
        reasons.append("(" + "; ".join(row["_ws.expert.message"][:3]) + ")")
    return " ".join(reasons)


def compare(analyzer, tshark, protocols):
    """Returns (differences as (frame, column, analyzer value, tshark value), frames compared,
    {protocol: frames where both tools read its first column})."""
    diffs = []
    frames = 0
    per_protocol = {name: 0 for name in protocols}
    sources = column_sources(protocols)
    reasons = protocol_reason_words()
    for frame in sorted(set(analyzer) | set(tshark)):
        if frame not in tshark:
            diffs.append((frame, "(row)", "present", "missing"))
            continue
        if frame not in analyzer:
            diffs.append((frame, "(row)", "missing", "present"))
            continue
        a_row, t_row = analyzer[frame], tshark[frame]
        frames += 1
        a_malformed = a_row["malformed"]
        t_malformed = tshark_malformed(t_row)
        for column, (fields, kind) in sources.items():
            a_text, t_text = a_row[column], tshark_cell(t_row, fields)
            try:  # the analyzer writes time_ns as integer nanoseconds already
                a_value = normalize(a_text, "int" if kind == "time" else kind)
            except ValueError:
                diffs.append((frame, column, a_text + " (not a number)", t_text))
                continue
            try:
                t_value = normalize(t_text, kind)
            except ValueError:
                diffs.append((frame, column, a_text, t_text + " (not a number)"))
                continue
            if a_value != t_value:
                diffs.append((frame, column, a_text or "(empty)", t_text or "(empty)"))
        if bool(a_malformed) != bool(t_malformed):
            diffs.append((frame, "malformed", a_malformed or "(empty)",
                          t_malformed or "(empty)"))
        elif a_malformed in reasons and not any(
                reasons[a_malformed] in m for m in t_row["_ws.expert.message"]):
            diffs.append((frame, "malformed", a_malformed,
                          "; ".join(t_row["_ws.expert.message"]) or "(no expert message)"))
        for name, columns in protocols.items():
            if a_row[columns[0]] and tshark_cell(t_row, columns[:1]):
                per_protocol[name] += 1
    return diffs, frames, per_protocol


def main():
    parser = argparse.ArgumentParser(
        description="Compare the Wireshark dissector with swemu-analyze, cell by cell.")
    parser.add_argument("--lua", required=True, help="tools/wireshark/swemu.lua")
    parser.add_argument("--analyze", required=True, help="the swemu-analyze binary")
    parser.add_argument("--pcap", help="pcap to compare on (with --gen: where to write it)")
    parser.add_argument("--gen", help="swemu-gen binary: generate an ATP pcap first")
    parser.add_argument("--tmp", required=True, help="directory for the pcap, CSV and outputs")
    parser.add_argument("--atp-port", type=int, default=None,
                        help="ATP's UDP port for tshark (default: the dissector's, 9000)")
    parser.add_argument("--max-diffs", type=int, default=20,
                        help="differences printed (default 20)")
    args = parser.parse_args()

    try:
        if not args.pcap and not args.gen:
            raise SetupError("give --pcap FILE, --gen swemu-gen, or both")
        lua = os.path.abspath(args.lua)
        if not os.path.isfile(lua):
            raise SetupError("--lua %s: no such file" % args.lua)
        tshark = find_tshark()
        check_executable(args.analyze, "--analyze")
        os.makedirs(args.tmp, exist_ok=True)
        pcap = args.pcap or os.path.join(args.tmp, "atp.pcap")
        if args.gen:
            check_executable(args.gen, "--gen")
            run([args.gen] + GEN_ARGS + ["--out", pcap], "swemu-gen")
        if not os.path.isfile(pcap):
            raise SetupError("no pcap at %s" % pcap)

        csv_path = os.path.join(args.tmp, "packets.csv")
        if os.path.exists(csv_path):
            os.remove(csv_path)  # never compare against a stale CSV
        run([args.analyze, pcap, "--packets", csv_path], "swemu-analyze")
        protocols, analyzer = read_analyzer_csv(csv_path)
        dissector = read_tshark(tshark, lua, pcap, args.atp_port, column_sources(protocols),
                                os.path.join(args.tmp, "tshark_fields.tsv"))
    except SetupError as error:
        print("FAIL (setup): %s" % error, file=sys.stderr)
        return 2

    diffs, frames, per_protocol = compare(analyzer, dissector, protocols)
    summary = ("%d frames compared (with each protocol's header or bits on both sides: %s), "
               "%d analyzer CSV rows, %d tshark rows" % (
                   frames, ", ".join("%s %d" % kv for kv in per_protocol.items()),
                   len(analyzer), len(dissector)))
    if diffs:
        by_column = {}
        for _, column, _, _ in diffs:
            by_column[column] = by_column.get(column, 0) + 1
        print("FAIL: %d differing cells between swemu-analyze and the dissector" % len(diffs),
              file=sys.stderr)
        print("  per column: " + ", ".join("%s %d" % kv for kv in sorted(by_column.items())),
              file=sys.stderr)
        print("  %-7s %-16s %-28s %s" % ("frame", "column", "swemu-analyze", "tshark+lua"),
              file=sys.stderr)
        for frame, column, a_value, t_value in diffs[:args.max_diffs]:
            print("  %-7s %-16s %-28s %s" % (frame, column, a_value, t_value), file=sys.stderr)
        if len(diffs) > args.max_diffs:
            print("  ... %d more" % (len(diffs) - args.max_diffs), file=sys.stderr)
        print("  " + summary, file=sys.stderr)
        print("  inputs and outputs in %s (pcap %s)" % (args.tmp, pcap), file=sys.stderr)
        return 1
    if sum(per_protocol.values()) == 0:
        print("FAIL: no frame with a protocol's header or bits (%s) on both sides; nothing was "
              "compared (%s)" % (", ".join(protocols), summary), file=sys.stderr)
        return 1
    print("PASS: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
