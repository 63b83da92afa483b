#!/usr/bin/python3
"""Round trip of PCN's TOS bits through the Wireshark dissector and swemu-analyze.

Usage: pcn_round_trip.py --lua swemu.lua --analyze swemu-analyze --tmp DIR

Encodes PCN signals itself (pipeline/wire/pcn.h, docs/wire.md "PCN": bit 7 START, bit 6 ACK,
bits 5..2 the threshold / 5, bits 1..0 ECN) into Ethernet/IPv4/UDP frames: for every threshold 0..75
in steps of 5 and every ECN codepoint, a worker's START to UDP port 9700 and the PS's ACK from it;
empty and VLAN-tagged ones; START+ACK both set (CS6, 0xC0); no signal; a START bit sent from the
port. Writes them to DIR/pcn_cases.pcap, reads it with tshark and the Lua script and with
`swemu-analyze --packets`, and checks that both give pcn.start, pcn.ack, pcn.threshold and
pcn.ecn equal to the values encoded. Where PCN is not scoped neither may name it: an EF-marked
(TOS 0xB8, a START with threshold 70 if read as PCN) UDP datagram between other ports, and EF over
TCP to port 9700. Also checks the analyzer's summary (--json) and pcn.csv (--csv: one row per
START/ACK, each START answered one frame later), that --pcn-port N and the preference
swemu_pcn.udp_port:N move the scope alike, and that bad --pcn-port values (and --udp-port pcn=N)
end with one line and exit status 2, writing nothing.

Exit status: 0 on success; 1 with each difference; 2 when a tool is missing or fails.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dissector_test import ipv4_udp_frame, udp_as_tcp, write_pcap  # noqa: E402

PCN_PORT = 9700
PS = (10, 0, 0, 100)
FIELDS = ["pcn.start", "pcn.ack", "pcn.threshold", "pcn.ecn"]
TSHARK_FIELDS = ["frame.number"] + FIELDS + ["_ws.malformed", "_ws.expert.message",
                                             "_ws.col.Info"]
AGGREGATOR = "|"
# write_pcap's frame i is at 1700000000 + i seconds and 1000 * i ns: one frame later is this far.
NEXT_FRAME_US = "1000001.000"


class SetupError(Exception):
    """A tool is missing or failed: exit 2."""


def encode(start, ack, threshold, ecn):
    """The TOS byte, written out from the bit layout (not from the C++ code)."""
    assert threshold % 5 == 0 and 0 <= threshold <= 75 and 0 <= ecn <= 3
    return (0x80 if start else 0) | (0x40 if ack else 0) | (threshold // 5) << 2 | ecn


class Case:
    def __init__(self, name, frame, expect=None, kind=None):
        self.name = name
        self.frame = frame
        # None: not PCN; else {field: value} as encoded, and the kind the summary counts.
        self.expect = expect
        self.kind = kind  # "start", "ack", "start_and_ack", "none"


def pcn_case(name, start, ack, threshold, ecn, worker, to_port=True, payload=b"pcn-data",
             vlan=None, port=PCN_PORT):
    tos = encode(start, ack, threshold, ecn)
    if to_port:
        frame = ipv4_udp_frame(payload, 40000 + worker[3], port, vlan, worker, PS, tos)
    else:
        frame = ipv4_udp_frame(payload, port, 40000 + worker[3], vlan, PS, worker, tos)
    if start and ack:
        kind = "start_and_ack"
    elif start and to_port:
        kind = "start"
    elif ack and not to_port:
        kind = "ack"
    else:
        kind = "none"
    expect = {"pcn.start": int(start), "pcn.ack": int(ack), "pcn.threshold": threshold,
              "pcn.ecn": ecn}
    return Case(name, frame, expect, kind)


def cases():
    if encode(True, False, 10, 2) != 0x8A:  # pcn.h's and docs/wire.md's example
        raise SetupError("test bug: encode() disagrees with the documented 0x8A")
    out = []
    for ecn in range(4):
        worker = (10, 0, 0, 1 + ecn)
        for threshold in range(0, 80, 5):
            out.append(pcn_case("START %d ecn %d" % (threshold, ecn), True, False, threshold,
                                ecn, worker))
            out.append(pcn_case("ACK %d ecn %d" % (threshold, ecn), False, True, threshold,
                                ecn, worker, to_port=False))
    # Empty datagrams (Wireshark hands them to no port dissector), and behind a VLAN tag.
    for threshold in (0, 35, 75):
        out.append(pcn_case("empty START %d" % threshold, True, False, threshold, 1,
                            (10, 0, 0, 9), payload=b""))
        out.append(pcn_case("empty ACK %d" % threshold, False, True, threshold, 1,
                            (10, 0, 0, 9), to_port=False, payload=b""))
    out.append(pcn_case("tagged START", True, False, 40, 3, (10, 0, 0, 10), vlan=100))
    out.append(pcn_case("tagged ACK", False, True, 40, 3, (10, 0, 0, 10), to_port=False,
                        vlan=100))
    # Odd: both bits (CS6), no bit, a START bit from the port: named, but not a START or ACK.
    out.append(pcn_case("START+ACK (CS6)", True, True, 0, 0, (10, 0, 0, 11)))
    out.append(pcn_case("no signal", False, False, 0, 2, (10, 0, 0, 11)))
    out.append(pcn_case("START bit from the port", True, False, 10, 2, (10, 0, 0, 11),
                        to_port=False))
    # EF (0xB8) is a START with threshold 70 on the PCN port, and nothing elsewhere.
    out.append(pcn_case("EF to the PCN port", True, False, 70, 0, (10, 0, 0, 12)))
    ef = 0xB8
    out.append(Case("EF udp 5000 > 6000", ipv4_udp_frame(b"voice", 5000, 6000, None,
                                                          (10, 0, 0, 13), PS, ef)))
    out.append(Case("EF udp 6000 > 5000", ipv4_udp_frame(b"voice", 6000, 5000, None, PS,
                                                          (10, 0, 0, 13), ef)))
    out.append(Case("EF tcp to 9700", udp_as_tcp(ipv4_udp_frame(b"x", 40013, PCN_PORT, None,
                                                                (10, 0, 0, 13), PS), tos=ef)))
    return out


# --------------------------------------------------------------------------------------------
# Running both tools
# --------------------------------------------------------------------------------------------

def run(cmd, what, expect_status=0):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    except FileNotFoundError:
        raise SetupError("%s: %s not found" % (what, cmd[0]))
    if expect_status is not None and proc.returncode != expect_status:
        raise SetupError("%s exited with %d: %s\n%s" % (what, proc.returncode, " ".join(cmd),
                                                      proc.stderr.strip()[-2000:]))
    return proc


def read_tshark(tshark, lua, pcap, extra=()):
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap] + list(extra)
    cmd += ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
            "-E", "aggregator=" + AGGREGATOR]
    for field in TSHARK_FIELDS:
        cmd += ["-e", field]
    proc = run(cmd, "tshark")
    errors = [line for line in proc.stderr.splitlines()
              if "lua" in line.lower() or "error" in line.lower()]
    if errors:
        raise SetupError("tshark reported errors:\n  " + "\n  ".join(errors[:10]))
    rows = {}
    for line in proc.stdout.splitlines():
        cells = line.split("\t")
        if len(cells) != len(TSHARK_FIELDS):
            raise SetupError("tshark printed %d columns, expected %d: %r" % (
                len(cells), len(TSHARK_FIELDS), line[:200]))
        rows[int(cells[0])] = dict(zip(TSHARK_FIELDS, cells))
    return rows


def read_analyzer(analyze, pcap, out_dir, extra=()):
    csv_path = os.path.join(out_dir, "packets.csv")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    run([analyze, pcap, "--packets", csv_path, "--json", os.path.join(out_dir, "summary.json"),
         "--csv", out_dir] + list(extra), "swemu-analyze")
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in FIELDS + ["frame", "malformed"] if c not in reader.fieldnames]
        if missing:
            raise SetupError("%s has no column %s" % (csv_path, ", ".join(missing)))
        return {int(row["frame"]): row for row in reader}


def number(text):
    """A cell as an int (tshark's booleans: 1/0, or True/False in newer versions); None: empty."""
    if text == "":
        return None
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 0)


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------

def check_frames(all_cases, tshark_rows, analyzer_rows, tag):
    errors = []
    for n, case in enumerate(all_cases, start=1):
        where = "%s frame %d (%s)" % (tag, n, case.name)
        t_row, a_row = tshark_rows.get(n), analyzer_rows.get(n)
        if t_row is None or a_row is None:
            errors.append("%s: missing from %s" % (where, "tshark" if t_row is None
                                                   else "swemu-analyze"))
            continue
        for field in FIELDS:
            want = None if case.expect is None else case.expect[field]
            try:
                got_t, got_a = number(t_row[field]), number(a_row[field])
            except ValueError:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze): not a number" % (
                    where, field, t_row[field], a_row[field]))
                continue
            if got_t != want or got_a != want:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze), encoded %r" % (
                    where, field, t_row[field], a_row[field], want))
        odd = case.kind == "start_and_ack"
        a_reason = a_row["malformed"]
        if a_reason != ("pcn_start_and_ack" if odd else ""):
            errors.append("%s: swemu-analyze says malformed %r" % (where, a_reason))
        messages = t_row["_ws.expert.message"]
        if bool(t_row["_ws.malformed"]) != odd or odd != ("START and ACK both set" in messages):
            errors.append("%s: tshark malformed %r, experts %r" % (where, t_row["_ws.malformed"],
                                                                  messages))
        info = t_row["_ws.col.Info"]
        if case.expect is None:
            if info.startswith("PCN"):
                errors.append("%s: not PCN, but Info is %r" % (where, info))
            continue
        label = {"start": "START", "ack": "ACK", "start_and_ack": "START+ACK",
                 "none": "no signal"}[case.kind]
        want_info = "PCN %s threshold %d" % (label, case.expect["pcn.threshold"])
        if not info.startswith(want_info):
            errors.append("%s: Info is %r, expected %r..." % (where, info, want_info))
    return errors


def check_summary(all_cases, out_dir):
    errors = []
    kinds = [c.kind for c in all_cases]
    starts, acks = kinds.count("start"), kinds.count("ack")
    unanswered = 1  # the EF START on the PCN port; every other START's ACK is the next frame
    with open(os.path.join(out_dir, "summary.json")) as f:
        pcn = json.load(f)["runs"][0]["pcn"]
    want = {"udp_port": PCN_PORT, "starts": starts, "acks": acks,
            "starts_without_ack": unanswered, "acks_without_start": 0,
            "without_signal": kinds.count("none")}
    for key, value in want.items():
        if pcn.get(key) != value:
            errors.append("summary.json: pcn.%s is %r, expected %r" % (key, pcn.get(key), value))
    if pcn.get("odd", {}).get("pcn_start_and_ack") != 1:
        errors.append("summary.json: pcn.odd is %r, expected pcn_start_and_ack 1" %
                      pcn.get("odd"))
    with open(os.path.join(out_dir, "pcn.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    signals = [c for c in all_cases if c.kind in ("start", "ack", "start_and_ack")]
    if len(rows) != len(signals):
        errors.append("pcn.csv: %d rows, expected %d (one per START, ACK and START+ACK)" % (
            len(rows), len(signals)))
    for row, case in zip(rows, signals):
        got = (row["kind"], int(row["threshold"]), int(row["ecn"]))
        want_row = (case.kind, case.expect["pcn.threshold"], case.expect["pcn.ecn"])
        if got != want_row:
            errors.append("pcn.csv: row %r, expected %r (%s)" % (got, want_row, case.name))
        answered = case.kind == "start" and case.name != "EF to the PCN port"
        if row["round_trip_us"] != (NEXT_FRAME_US if answered else ""):
            errors.append("pcn.csv: %s round_trip_us %r" % (case.name, row["round_trip_us"]))
    return errors


def check_port_option(tshark, lua, analyze, out_dir):
    """--pcn-port and swemu_pcn.udp_port move the scope alike; 9700 is then plain UDP."""
    moved = [
        pcn_case("START to 9800", True, False, 10, 2, (10, 0, 0, 1), port=9800),
        pcn_case("ACK from 9800", False, True, 10, 2, (10, 0, 0, 1), to_port=False, port=9800),
        Case("START to 9700 after the move", ipv4_udp_frame(b"x", 40001, PCN_PORT, None,
                                                            (10, 0, 0, 1), PS, 0x8A)),
    ]
    pcap = os.path.join(out_dir, "pcn_port9800.pcap")
    write_pcap(pcap, [(c.frame, None) for c in moved])
    sub = os.path.join(out_dir, "port9800")
    os.makedirs(sub, exist_ok=True)
    return check_frames(moved,
                        read_tshark(tshark, lua, pcap, ["-o", "swemu_pcn.udp_port:9800"]),
                        read_analyzer(analyze, pcap, sub, ["--pcn-port", "9800"]), "port9800")


def check_bad_options(analyze, pcap, out_dir):
    """Each ends with one line and exit status 2 before any output is written."""
    errors = []
    untouched = os.path.join(out_dir, "bad_option_out")
    shutil.rmtree(untouched, ignore_errors=True)
    for args, prefix in [(["--pcn-port", "0"], "swemu-analyze: --pcn-port: "),
                         (["--pcn-port", "65536"], "swemu-analyze: --pcn-port: "),
                         (["--pcn-port", "abc"], "swemu-analyze: --pcn-port: "),
                         (["--pcn-port", ""], "swemu-analyze: --pcn-port: "),
                         (["--udp-port", "pcn=9800"], "swemu-analyze: --udp-port pcn=9800: ")]:
        proc = run([analyze, pcap, "--csv", untouched] + args, "swemu-analyze",
                   expect_status=None)
        lines = proc.stderr.splitlines()
        if proc.returncode != 2 or len(lines) != 1 or not lines[0].startswith(prefix):
            errors.append("swemu-analyze %s: exit %d, stderr %r (expected 2 and one line %r...)"
                          % (" ".join(args), proc.returncode, proc.stderr, prefix))
        if proc.stdout or os.path.exists(untouched):
            errors.append("swemu-analyze %s: wrote output before failing" % " ".join(args))
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lua", required=True)
    parser.add_argument("--analyze", required=True)
    parser.add_argument("--tmp", required=True, help="directory for the pcaps and outputs")
    args = parser.parse_args()
    try:
        tshark = shutil.which("tshark")
        if tshark is None:
            raise SetupError("tshark not found (apt-get install tshark); this test does not skip")
        lua = os.path.abspath(args.lua)
        if not os.path.isfile(lua):
            raise SetupError("--lua %s: no such file" % args.lua)
        os.makedirs(args.tmp, exist_ok=True)
        all_cases = cases()
        pcap = os.path.join(args.tmp, "pcn_cases.pcap")
        write_pcap(pcap, [(c.frame, None) for c in all_cases])
        errors = check_frames(all_cases, read_tshark(tshark, lua, pcap),
                              read_analyzer(args.analyze, pcap, args.tmp), "cases")
        errors += check_summary(all_cases, args.tmp)
        errors += check_port_option(tshark, lua, args.analyze, args.tmp)
        errors += check_bad_options(args.analyze, pcap, args.tmp)
    except (SetupError, OSError, subprocess.TimeoutExpired) as error:
        print("FAIL (setup): %s" % error, file=sys.stderr)
        return 2
    if errors:
        print("FAIL: %d problem(s) (outputs in %s):" % (len(errors), args.tmp), file=sys.stderr)
        for e in errors[:50]:
            print("  " + e, file=sys.stderr)
        return 1
    print("PASS: %d frames (%d PCN) agree with the values encoded, in tshark and swemu-analyze "
          "(outputs in %s)" % (len(all_cases), sum(c.expect is not None for c in all_cases),
                               args.tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
