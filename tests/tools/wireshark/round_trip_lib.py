"""What the tshark round trips of swemu's protocols share: {pcn,dlcp,goat,plink}_round_trip.py.

Each of those scripts encodes its protocol's frames itself (the Cases), writes them to one pcap,
reads it with tshark and the Lua dissector and with `swemu-analyze --packets`, and checks that
both give the values encoded. The protocol is the script's: its header, its cases, its summary.
The rest is here: running both tools and reading their cells, the checks every frame gets (each
header field in both tools, malformed or not in both, the dissector's expert words, the Info
column), the port option that moves the protocol's scope in both tools, the bad port options, and
main() with the scripts' exit statuses (0 pass, 1 differences, 2 a tool missing or failing).
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
from dissector_test import ipv4_udp_frame, write_pcap  # noqa: E402

AGGREGATOR = "|"  # between a repeated field's values (expert messages contain commas)
ETH_IP_UDP = 14 + 20 + 8


class SetupError(Exception):
    """A tool is missing or failed: exit 2."""


class Protocol:
    """What the library needs to know of a round trip's protocol."""

    def __init__(self, name, label, port, moved_port, fields, reason_words, tshark_fields=(),
                 check_tshark=None):
        self.name = name    # "dlcp": --dlcp-port, swemu_dlcp.udp_port, dlcp_cases.pcap
        self.label = label  # "DLCP": how the dissector's Info column starts
        self.port = port    # the UDP port both tools decode it on by default
        self.moved_port = moved_port  # the port check_port_option moves it to
        self.fields = list(fields)  # header fields both tools give, compared as numbers
        # The analyzer's malformed reasons, each with the words of the dissector's expert message.
        self.reason_words = reason_words
        # Further dissector fields, checked by check_tshark(case, tshark row) -> [problem].
        self.tshark_fields = (["frame.number"] + self.fields + list(tshark_fields) +
                              ["_ws.malformed", "_ws.expert.message", "_ws.col.Info"])
        self.check_tshark = check_tshark


class Case:
    """A frame of the pcap. A protocol's Case sets name and frame and says what both tools must
    make of it: ours() (is it the protocol's), expect() ({field: value or None}) and these."""
    caplen = None  # bytes of the frame captured; None: all
    reason = ""    # the analyzer's malformed reason, "" if none
    info = None    # the expected start of the Info column; None: the protocol's label
    notes = ()     # words of the dissector's notes (not malformed) it must show

    def ours(self):
        raise NotImplementedError

    def expect(self):
        raise NotImplementedError


class HeaderCase(Case):
    """A Case whose protocol has a header of header_len bytes: h, its values as encoded (None:
    the frame is not the protocol's), in a datagram of `wire` bytes of the protocol's, `kept` of
    them captured (datagram() gives both)."""
    header_len = None

    def __init__(self, name, frame, h=None, reason="", kept=0, wire=0, caplen=None, info=None,
                 notes=()):
        self.name = name
        self.frame = frame
        self.h = h
        self.reason = reason
        self.kept = kept
        self.wire = wire
        self.caplen = caplen
        self.info = info
        self.notes = notes

    def ours(self):
        return self.h is not None

    def snapped_header(self):
        """The capture (not the datagram) cut the header."""
        return self.kept < self.header_len <= self.wire

    def accounted(self):
        """In the analyzer's summary: the protocol's, not malformed, the header captured."""
        return self.ours() and not self.reason and not self.snapped_header()


def datagram(data, sport, dport, src, dst, tos=0, vlan=None, cut=None, caplen_cut=None):
    """The protocol's bytes `data` in Ethernet/IPv4/UDP: (frame, caplen, kept, wire). cut keeps
    only that many of them in the datagram, caplen_cut that many in the capture; kept of them
    are captured, wire are in the datagram."""
    if cut is not None:
        data = data[:cut]
    frame = ipv4_udp_frame(data, sport, dport, vlan, src, dst, tos)
    at = ETH_IP_UDP + (4 if vlan is not None else 0)
    caplen = None if caplen_cut is None else at + caplen_cut
    kept = len(data) if caplen_cut is None else min(len(data), caplen_cut)
    return frame, caplen, kept, len(data)


def frame_ns(index):
    """write_pcap's timestamp of frame `index` (0-based): 1700000000 + i s and 1000 * i ns."""
    return (1700000000 + index) * 10**9 + 1000 * index


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


def check_tshark_stderr(proc):
    errors = [line for line in proc.stderr.splitlines()
              if "lua" in line.lower() or "error" in line.lower()]
    errors += [line for line in proc.stdout.splitlines()
               if "Lua Error" in line or "dissector error" in line]
    if errors:
        raise SetupError("tshark reported errors:\n  " + "\n  ".join(errors[:10]))


def read_tshark(proto, tshark, lua, pcap, extra=()):
    """{frame number: {field: cell}}, repeated values joined by AGGREGATOR."""
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap] + list(extra)
    cmd += ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
            "-E", "aggregator=" + AGGREGATOR]
    for field in proto.tshark_fields:
        cmd += ["-e", field]
    proc = run(cmd, "tshark")
    check_tshark_stderr(proc)
    rows = {}
    for line in proc.stdout.splitlines():
        cells = line.split("\t")
        if len(cells) != len(proto.tshark_fields):
            raise SetupError("tshark printed %d columns, expected %d: %r" % (
                len(cells), len(proto.tshark_fields), line[:200]))
        rows[int(cells[0])] = dict(zip(proto.tshark_fields, cells))
    # The full tree of every frame renders without a Lua error too.
    check_tshark_stderr(run([tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap, "-V"] +
                            list(extra), "tshark -V"))
    return rows


def read_analyzer(proto, analyze, pcap, out_dir, extra=()):
    """{frame number: {column: cell}} of --packets; the summaries land in out_dir (--json as
    summary.json, --csv, the text as summary.txt)."""
    csv_path = os.path.join(out_dir, "packets.csv")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    proc = run([analyze, pcap, "--packets", csv_path, "--json",
                os.path.join(out_dir, "summary.json"), "--csv", out_dir] + list(extra),
               "swemu-analyze")
    with open(os.path.join(out_dir, "summary.txt"), "w") as f:
        f.write(proc.stdout)
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in proto.fields + ["frame", "malformed"] if c not in reader.fieldnames]
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

def check_frames(proto, all_cases, tshark_rows, analyzer_rows, tag):
    """Frame n + 1 is all_cases[n] in both tools: every field, malformed, experts, Info."""
    errors = []
    for n, case in enumerate(all_cases, start=1):
        where = "%s frame %d (%s)" % (tag, n, case.name)
        t_row, a_row = tshark_rows.get(n), analyzer_rows.get(n)
        if t_row is None or a_row is None:
            errors.append("%s: missing from %s" % (where, "tshark" if t_row is None
                                                   else "swemu-analyze"))
            continue
        for field, want in case.expect().items():
            try:
                got_t, got_a = number(t_row[field]), number(a_row[field])
            except ValueError:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze): not a number" % (
                    where, field, t_row[field], a_row[field]))
                continue
            if got_t != want or got_a != want:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze), encoded %r" % (
                    where, field, t_row[field], a_row[field], want))
        if proto.check_tshark is not None:
            errors += ["%s: %s" % (where, e) for e in proto.check_tshark(case, t_row)]
        if a_row["malformed"] != case.reason:
            errors.append("%s: swemu-analyze says malformed %r, expected %r" % (
                where, a_row["malformed"], case.reason))
        messages = t_row["_ws.expert.message"]
        if bool(t_row["_ws.malformed"]) != bool(case.reason):
            errors.append("%s: tshark malformed %r, experts %r" % (where, t_row["_ws.malformed"],
                                                                  messages))
        for words in ((proto.reason_words[case.reason],) if case.reason else ()) + tuple(
                case.notes):
            if words not in messages:
                errors.append("%s: tshark experts %r do not say %r" % (where, messages, words))
        if not case.reason:
            for words in proto.reason_words.values():
                if words in messages:
                    errors.append("%s: not malformed, but tshark experts %r say %r" % (
                        where, messages, words))
        info = t_row["_ws.col.Info"]
        if not case.ours():
            if info.startswith(proto.label):
                errors.append("%s: not %s, but Info is %r" % (where, proto.label, info))
            continue
        want_info = case.info or proto.label
        if not info.startswith(want_info):
            errors.append("%s: Info is %r, expected %r..." % (where, info, want_info))
    return errors


def summary_json(out_dir, proto):
    """The protocol's part of the analyzer's summary.json."""
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)["runs"][0][proto.name]


def check_scope(proto, summary, all_cases):
    """summary.json's malformed frames by reason, its port and the headers (of HeaderCases) the
    capture alone cut."""
    errors = []
    snapped_headers = sum(c.ours() and c.snapped_header() and not c.reason for c in all_cases)
    reasons = {r: sum(c.reason == r for c in all_cases) for r in proto.reason_words}
    if summary.get("malformed") != reasons:
        errors.append("summary.json: %s.malformed is %r, expected %r" % (
            proto.name, summary.get("malformed"), reasons))
    if summary.get("udp_port") != proto.port or summary.get("snapped_headers") != snapped_headers:
        errors.append("summary.json: udp_port %r, snapped_headers %r, expected %d, %d" % (
            summary.get("udp_port"), summary.get("snapped_headers"), proto.port,
            snapped_headers))
    return errors


def check_text_summary(out_dir, line):
    """The analyzer's text summary (summary.txt) has the line."""
    with open(os.path.join(out_dir, "summary.txt")) as f:
        text = f.read()
    return [] if line in text else ["the text summary has no line %r:\n%s" % (line, text)]


def check_port_option(proto, tshark, lua, analyze, out_dir, moved):
    """--NAME-port and swemu_NAME.udp_port move the scope alike to proto.moved_port; the cases
    `moved` sent there and to the old port (then plain UDP) read the same in both tools."""
    port = proto.moved_port
    pcap = os.path.join(out_dir, "%s_port%d.pcap" % (proto.name, port))
    write_pcap(pcap, [(c.frame, c.caplen) for c in moved])
    sub = os.path.join(out_dir, "port%d" % port)
    os.makedirs(sub, exist_ok=True)
    tshark_rows = read_tshark(proto, tshark, lua, pcap,
                              ["-o", "swemu_%s.udp_port:%d" % (proto.name, port)])
    analyzer_rows = read_analyzer(proto, analyze, pcap, sub,
                                  ["--%s-port" % proto.name, str(port)])
    return check_frames(proto, moved, tshark_rows, analyzer_rows, "port%d" % port)


def check_bad_options(proto, analyze, pcap, out_dir):
    """Each bad --NAME-port (and --udp-port NAME=N) ends with one line and exit status 2 before
    any output is written."""
    errors = []
    untouched = os.path.join(out_dir, "bad_option_out")
    shutil.rmtree(untouched, ignore_errors=True)
    option = "--%s-port" % proto.name
    udp_port = "%s=%d" % (proto.name, proto.moved_port)
    for args, prefix in [([option, "0"], "swemu-analyze: %s: " % option),
                         ([option, "65536"], "swemu-analyze: %s: " % option),
                         ([option, "abc"], "swemu-analyze: %s: " % option),
                         ([option, ""], "swemu-analyze: %s: " % option),
                         (["--udp-port", udp_port], "swemu-analyze: --udp-port %s: " % udp_port)]:
        proc = run([analyze, pcap, "--csv", untouched] + args, "swemu-analyze",
                   expect_status=None)
        lines = proc.stderr.splitlines()
        if proc.returncode != 2 or len(lines) != 1 or not lines[0].startswith(prefix):
            errors.append("swemu-analyze %s: exit %d, stderr %r (expected 2 and one line %r...)"
                          % (" ".join(args), proc.returncode, proc.stderr, prefix))
        if proc.stdout or os.path.exists(untouched):
            errors.append("swemu-analyze %s: wrote output before failing" % " ".join(args))
    return errors


def main(doc, proto, cases, check_summary, moved_cases):
    """A round trip's main: cases() in DIR/NAME_cases.pcap through both tools, then
    check_summary(cases, DIR), the port option on moved_cases() and the bad options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
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
        pcap = os.path.join(args.tmp, "%s_cases.pcap" % proto.name)
        write_pcap(pcap, [(c.frame, c.caplen) for c in all_cases])
        errors = check_frames(proto, all_cases, read_tshark(proto, tshark, lua, pcap),
                              read_analyzer(proto, args.analyze, pcap, args.tmp), "cases")
        errors += check_summary(all_cases, args.tmp)
        errors += check_port_option(proto, tshark, lua, args.analyze, args.tmp, moved_cases())
        errors += check_bad_options(proto, args.analyze, pcap, args.tmp)
    except (SetupError, OSError, subprocess.TimeoutExpired) as error:
        print("FAIL (setup): %s" % error, file=sys.stderr)
        return 2
    if errors:
        print("FAIL: %d problem(s) (outputs in %s):" % (len(errors), args.tmp), file=sys.stderr)
        for e in errors[:50]:
            print("  " + e, file=sys.stderr)
        return 1
    print("PASS: %d frames (%d %s) agree with the values encoded, in tshark and swemu-analyze "
          "(outputs in %s)" % (len(all_cases), sum(c.ours() for c in all_cases), proto.label,
                               args.tmp))
    return 0
