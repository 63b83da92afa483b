#!/usr/bin/python3
"""Round trip of DLCP's header and DSCP classes through the Wireshark dissector and swemu-analyze.

Usage: dlcp_round_trip.py --lua swemu.lua --analyze swemu-analyze --tmp DIR

Encodes DLCP frames itself (pipeline/wire/dlcp.h, docs/wire.md "DLCP": a 16-byte big-endian
header after UDP to port 9800, byte 0 version << 4 | type, byte 1 flags (bit 0 pull), then
length, tensor, seq, offset; a data packet's tag rides in the DSCP as 16 + tag, its importance in
ECN): every type with and without the pull flag, tags 0..6 under every ECN codepoint, data whose
DSCP is no tag's, signals in DSCP 48, headers cut in the datagram and by the snap length, other
versions and types, a payload length past the datagram, trailing bytes, a VLAN tag. Writes them
to DIR/dlcp_cases.pcap, reads it with tshark and the Lua script and with `swemu-analyze
--packets`, and checks that both give every dlcp.* field equal to the values encoded (dlcp.tag
and dlcp.important on data packets only), the same malformed frames, and the Info column. Where
DLCP is not scoped neither may name it: DLCP bytes in UDP to another port, from port 9800 to
another, and in TCP to 9800. Also checks the analyzer's summary (--json, --csv dlcp.csv, the text)
against a model of the spec computed here, that --dlcp-port N and the preference
swemu_dlcp.udp_port:N move the scope alike, and that bad --dlcp-port values (and --udp-port
dlcp=N) end with one line and exit status 2, writing nothing.

Exit status: 0 on success; 1 with each difference; 2 when a tool is missing or fails.
"""

import argparse
import csv
import json
import os
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dissector_test import ipv4_udp_frame, udp_as_tcp, write_pcap  # noqa: E402

DLCP_PORT = 9800
HEADER_LEN = 16
DSCP_BASE, CONTROL_DSCP = 16, 48
TYPES = {1: "data", 2: "start", 3: "finish", 4: "stop", 5: "retransmit", 6: "confirm",
         7: "rate", 8: "ack"}
SIGNALS = ["start", "finish", "stop", "retransmit", "confirm", "rate", "ack"]
SENDER, RECEIVER = (10, 0, 0, 1), (10, 0, 0, 2)
# (field, first byte, last byte + 1) of the header; version and type share byte 0.
HEADER_FIELDS = [("dlcp.version", 0, 1), ("dlcp.type", 0, 1), ("dlcp.pull", 1, 2),
                 ("dlcp.length", 2, 4), ("dlcp.tensor", 4, 8), ("dlcp.seq", 8, 12),
                 ("dlcp.offset", 12, 16)]
FIELDS = [name for name, _, _ in HEADER_FIELDS] + ["dlcp.tag", "dlcp.important"]
TSHARK_FIELDS = ["frame.number"] + FIELDS + ["_ws.malformed", "_ws.expert.message",
                                             "_ws.col.Info"]
AGGREGATOR = "|"
ETH_IP_UDP = 14 + 20 + 8
# The words of the dissector's expert message for each of the analyzer's reasons.
REASON_WORDS = {
    "dlcp_truncated_header": "truncated: DLCP header",
    "dlcp_bad_version": "unsupported DLCP version",
    "dlcp_bad_type": "unknown DLCP type",
    "dlcp_truncated_payload": "truncated: DLCP payload length",
}


class SetupError(Exception):
    """A tool is missing or failed: exit 2."""


def tos(dscp, ecn):
    return dscp << 2 | ecn


def header_bytes(h):
    """The 16 header bytes, written out from the layout (not from the C++ code)."""
    return struct.pack("!BBHIII", (h["version"] & 0xF) << 4 | (h["type"] & 0xF), h["flags"],
                       h["length"], h["tensor"], h["seq"], h["offset"])


class Case:
    def __init__(self, name, frame, h=None, tos_byte=0, src=SENDER, dst=RECEIVER, reason="",
                 header_kept=HEADER_LEN, caplen=None, snapped_header=False, info=None):
        self.name = name
        self.frame = frame
        self.h = h                # None: not DLCP; else the header's values as encoded
        self.tos = tos_byte
        self.src, self.dst = src, dst
        self.reason = reason      # the analyzer's malformed reason, "" if none
        self.header_kept = header_kept  # header bytes captured
        self.caplen = caplen
        self.snapped_header = snapped_header  # the capture (not the datagram) cut the header
        self.info = info          # the expected start of the Info column

    def is_data(self):
        return (self.h is not None and self.header_kept >= 1 and self.h["version"] == 1 and
                self.h["type"] == 1)

    def expect(self):
        """{field: value or None} as encoded: a header field when its bytes were captured."""
        if self.h is None:
            return {f: None for f in FIELDS}
        values = {"dlcp.version": self.h["version"], "dlcp.type": self.h["type"],
                  "dlcp.pull": self.h["flags"] & 1, "dlcp.length": self.h["length"],
                  "dlcp.tensor": self.h["tensor"], "dlcp.seq": self.h["seq"],
                  "dlcp.offset": self.h["offset"]}
        out = {name: (values[name] if self.header_kept >= end else None)
               for name, _, end in HEADER_FIELDS}
        dscp, ecn = self.tos >> 2, self.tos & 3
        data = self.is_data()
        tagged = DSCP_BASE <= dscp < DSCP_BASE + 7
        out["dlcp.tag"] = dscp - DSCP_BASE if data and tagged else None
        out["dlcp.important"] = int(ecn != 0) if data else None
        return out

    def accounted(self):
        return self.h is not None and not self.reason and not self.snapped_header


def hdr(ptype, tensor=7, seq=0, offset=0, length=0, flags=0, version=1):
    return dict(version=version, type=ptype, flags=flags, length=length, tensor=tensor, seq=seq,
                offset=offset)


def dlcp_case(name, h, payload_len=None, tos_byte=None, src=SENDER, dst=RECEIVER, cut=None,
              caplen_cut=None, reason="", vlan=None, sport=DLCP_PORT, dport=DLCP_PORT, info=None):
    """A DLCP datagram: the header h, then payload_len bytes (default: h's length); cut keeps
    only that many DLCP bytes in the datagram, caplen_cut that many in the capture."""
    if tos_byte is None:
        tos_byte = tos(DSCP_BASE + 2, 2) if h["type"] == 1 else tos(CONTROL_DSCP, 0)
    payload_len = h["length"] if payload_len is None else payload_len
    data = header_bytes(h) + bytes((i * 7) & 0xFF for i in range(payload_len))
    if cut is not None:
        data = data[:cut]
    frame = ipv4_udp_frame(data, sport, dport, vlan, src, dst, tos_byte)
    at = ETH_IP_UDP + (4 if vlan is not None else 0)
    caplen = None if caplen_cut is None else at + caplen_cut
    kept = min(HEADER_LEN, len(data), HEADER_LEN if caplen_cut is None else caplen_cut)
    snapped = kept < HEADER_LEN and len(data) >= HEADER_LEN
    return Case(name, frame, h, tos_byte, src, dst, reason, kept, caplen, snapped, info)


def cases():
    if header_bytes(hdr(1, tensor=1, seq=2, offset=3, length=4, flags=1)) != bytes.fromhex(
            "1101000400000001000000020000000" "3"):
        raise SetupError("test bug: header_bytes() disagrees with the layout")
    out = []
    # One flow (tensor 7, sender to receiver): START of a 5600-byte tensor, four partitions, one
    # sent again, STOP, CONFIRM; the receiver's FINISH, rate report and ACKs go the other way.
    out.append(dlcp_case("start", hdr(2, seq=0, offset=5600, length=8),
                         info="DLCP start tensor 7 seq 0 size 5600 len 8"))
    for i, (tag, ecn) in enumerate([(0, 2), (3, 0), (6, 3), (1, 1)]):
        out.append(dlcp_case("data %d" % i, hdr(1, seq=i, offset=1400 * i, length=1400),
                             tos_byte=tos(DSCP_BASE + tag, ecn)))
    out.append(dlcp_case("data again", hdr(1, seq=4, offset=1400, length=1400),
                         tos_byte=tos(DSCP_BASE + 3, 2),
                         info="DLCP data tensor 7 seq 4 offset 1400 len 1400 tag 3 important"))
    out.append(dlcp_case("stop", hdr(4, seq=1)))
    out.append(dlcp_case("finish", hdr(3, seq=0), src=RECEIVER, dst=SENDER))
    out.append(dlcp_case("rate", hdr(7, length=4), src=RECEIVER, dst=SENDER,
                         info="DLCP rate tensor 7 seq 0 offset 0 len 4"))
    out.append(dlcp_case("confirm", hdr(6, seq=2)))
    out.append(dlcp_case("ack of finish", hdr(8, seq=0)))
    out.append(dlcp_case("ack of start", hdr(8, seq=0), src=RECEIVER, dst=SENDER))
    # Every type, with and without the pull flag, and the other flag bits (not pull).
    for ptype, name in TYPES.items():
        for flags in (0, 1, 0xFE, 0xFF):
            length = 8 if ptype in (1, 2, 5) else 0
            info = None
            if flags == 1:
                detail = "size 100" if ptype == 2 else "offset 100"
                info = "DLCP %s tensor 20 seq %d %s len %d" % (name, ptype, detail, length)
            out.append(dlcp_case("%s flags 0x%02x" % (name, flags),
                                 hdr(ptype, tensor=20, seq=ptype, offset=100, length=length,
                                     flags=flags), info=info))
    # Tags 0..6 under every ECN codepoint; DSCPs that are no tag; signals in a tag's DSCP.
    for tag in range(7):
        for ecn in range(4):
            word = "important" if ecn else "unimportant"
            out.append(dlcp_case("tag %d ecn %d" % (tag, ecn),
                                 hdr(1, tensor=30, seq=tag * 4 + ecn, offset=4 * (tag * 4 + ecn),
                                     length=4),
                                 tos_byte=tos(DSCP_BASE + tag, ecn),
                                 info="DLCP data tensor 30 seq %d offset %d len 4 tag %d %s" % (
                                     tag * 4 + ecn, 4 * (tag * 4 + ecn), tag, word)))
    for dscp in (0, 15, 23, 46, 48, 63):
        out.append(dlcp_case("data dscp %d" % dscp, hdr(1, tensor=31, seq=dscp, offset=0, length=4),
                             tos_byte=tos(dscp, 1),
                             info="DLCP data tensor 31 seq %d offset 0 len 4 dscp %d important" % (
                                 dscp, dscp)))
    out.append(dlcp_case("start in a tag's dscp", hdr(2, tensor=32, offset=64),
                         tos_byte=tos(DSCP_BASE + 1, 2)))
    # Field extremes, a VLAN tag, trailing bytes (not malformed), the payload cut by the capture.
    out.append(dlcp_case("extremes", hdr(1, tensor=0xFFFFFFFF, seq=0xFFFFFFFF,
                                         offset=0xFFFFFFFF, length=0),
                         info="DLCP data tensor 4294967295 seq 4294967295 offset 4294967295"))
    out.append(dlcp_case("vlan tagged", hdr(1, tensor=33, length=12), vlan=100,
                         tos_byte=tos(DSCP_BASE + 5, 2)))
    out.append(dlcp_case("trailing bytes", hdr(7, tensor=34, length=4), payload_len=10))
    out.append(dlcp_case("payload snapped", hdr(1, tensor=35, length=64),
                         caplen_cut=HEADER_LEN + 10))
    # Malformed: headers cut in the datagram, other versions and types, a payload length past
    # the datagram. Fields as far as the bytes go.
    for cut in (0, 1, 2, 5, 15):
        out.append(dlcp_case("header cut to %d" % cut, hdr(1, tensor=40, length=8), cut=cut,
                             reason="dlcp_truncated_header",
                             info="DLCP (truncated header, %d of 16 bytes)" % cut))
    for version in (0, 2, 15):
        out.append(dlcp_case("version %d" % version, hdr(1, tensor=41, version=version),
                             reason="dlcp_bad_version"))
    for ptype in (0, 9, 15):
        out.append(dlcp_case("type %d" % ptype, hdr(ptype, tensor=42), reason="dlcp_bad_type",
                             info="DLCP type %d tensor 42" % ptype))
    out.append(dlcp_case("payload length past the datagram", hdr(1, tensor=43, length=100),
                         payload_len=10, reason="dlcp_truncated_payload"))
    # The header cut by the capture only: not malformed, not accounted; and by both.
    out.append(dlcp_case("header snapped", hdr(1, tensor=44, length=8), caplen_cut=6,
                         info="DLCP (header cut by the capture, 6 of 16 bytes)"))
    out.append(dlcp_case("header cut and snapped", hdr(1, tensor=45, length=8), cut=12,
                         caplen_cut=3, reason="dlcp_truncated_header"))
    # Not DLCP: DLCP bytes to another port, from 9800 to another port, and in TCP to 9800.
    like = header_bytes(hdr(1, length=0))
    out.append(Case("udp to 9801", ipv4_udp_frame(like, DLCP_PORT, 9801, None, SENDER, RECEIVER,
                                                  tos(DSCP_BASE + 2, 2))))
    out.append(Case("udp from 9800 to 40000", ipv4_udp_frame(like, DLCP_PORT, 40000, None,
                                                             SENDER, RECEIVER,
                                                             tos(DSCP_BASE + 2, 2))))
    out.append(Case("tcp to 9800", udp_as_tcp(ipv4_udp_frame(like, 40000, DLCP_PORT, None,
                                                             SENDER, RECEIVER),
                                              tos=tos(DSCP_BASE + 2, 2))))
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


def check_tshark_stderr(proc):
    errors = [line for line in proc.stderr.splitlines()
              if "lua" in line.lower() or "error" in line.lower()]
    errors += [line for line in proc.stdout.splitlines()
               if "Lua Error" in line or "dissector error" in line]
    if errors:
        raise SetupError("tshark reported errors:\n  " + "\n  ".join(errors[:10]))


def read_tshark(tshark, lua, pcap, extra=()):
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap] + list(extra)
    cmd += ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
            "-E", "aggregator=" + AGGREGATOR]
    for field in TSHARK_FIELDS:
        cmd += ["-e", field]
    proc = run(cmd, "tshark")
    check_tshark_stderr(proc)
    rows = {}
    for line in proc.stdout.splitlines():
        cells = line.split("\t")
        if len(cells) != len(TSHARK_FIELDS):
            raise SetupError("tshark printed %d columns, expected %d: %r" % (
                len(cells), len(TSHARK_FIELDS), line[:200]))
        rows[int(cells[0])] = dict(zip(TSHARK_FIELDS, cells))
    # The full tree of every frame renders without a Lua error too.
    check_tshark_stderr(run([tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap, "-V"] +
                            list(extra), "tshark -V"))
    return rows


def read_analyzer(analyze, pcap, out_dir, extra=()):
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
        want = case.expect()
        for field in FIELDS:
            try:
                got_t, got_a = number(t_row[field]), number(a_row[field])
            except ValueError:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze): not a number" % (
                    where, field, t_row[field], a_row[field]))
                continue
            if got_t != want[field] or got_a != want[field]:
                errors.append("%s: %s is %r (tshark), %r (swemu-analyze), encoded %r" % (
                    where, field, t_row[field], a_row[field], want[field]))
        if a_row["malformed"] != case.reason:
            errors.append("%s: swemu-analyze says malformed %r, expected %r" % (
                where, a_row["malformed"], case.reason))
        messages = t_row["_ws.expert.message"]
        if bool(t_row["_ws.malformed"]) != bool(case.reason):
            errors.append("%s: tshark malformed %r, experts %r" % (where, t_row["_ws.malformed"],
                                                                  messages))
        if case.reason and REASON_WORDS[case.reason] not in messages:
            errors.append("%s: tshark experts %r do not say %r" % (
                where, messages, REASON_WORDS[case.reason]))
        info = t_row["_ws.col.Info"]
        if case.h is None:
            if info.startswith("DLCP"):
                errors.append("%s: not DLCP, but Info is %r" % (where, info))
            continue
        want_info = case.info or "DLCP"
        if not info.startswith(want_info):
            errors.append("%s: Info is %r, expected %r..." % (where, info, want_info))
    return errors


def frame_ns(index):
    """write_pcap's timestamp of frame `index` (0-based): 1700000000 + i s and 1000 * i ns."""
    return (1700000000 + index) * 10**9 + 1000 * index


def model(all_cases):
    """The per-flow summary the spec implies, from the values encoded."""
    flows = {}
    for index, case in enumerate(all_cases):
        if not case.accounted():
            continue
        h = case.h
        key = (".".join(map(str, case.src)), ".".join(map(str, case.dst)), h["tensor"])
        flow = flows.setdefault(key, {
            "data_packets": 0, "data_bytes": 0, "offsets": set(), "duplicates": 0,
            "pull_packets": 0, "tags": [0] * 7, "other_dscp_packets": 0,
            "important_packets": 0, "ce_packets": 0, "signals": dict.fromkeys(SIGNALS, 0),
            "start": None, "confirm": None})
        flow["pull_packets"] += h["flags"] & 1
        ts = frame_ns(index)
        if h["type"] != 1:
            name = TYPES[h["type"]]
            flow["signals"][name] += 1
            if name == "start" and (flow["start"] is None or ts < flow["start"][0]):
                flow["start"] = (ts, h["offset"])
            if name == "confirm" and (flow["confirm"] is None or ts < flow["confirm"]):
                flow["confirm"] = ts
            continue
        flow["data_packets"] += 1
        flow["data_bytes"] += h["length"]
        if h["offset"] in flow["offsets"]:
            flow["duplicates"] += 1
        flow["offsets"].add(h["offset"])
        dscp, ecn = case.tos >> 2, case.tos & 3
        if DSCP_BASE <= dscp < DSCP_BASE + 7:
            flow["tags"][dscp - DSCP_BASE] += 1
        else:
            flow["other_dscp_packets"] += 1
        flow["important_packets"] += ecn != 0
        flow["ce_packets"] += ecn == 3
    return flows


def model_row(flow):
    row = {"data_packets": flow["data_packets"], "data_bytes": flow["data_bytes"],
           "partitions": len(flow["offsets"]), "duplicates": flow["duplicates"],
           "pull_packets": flow["pull_packets"],
           "other_dscp_packets": flow["other_dscp_packets"],
           "important_packets": flow["important_packets"],
           "unimportant_packets": flow["data_packets"] - flow["important_packets"],
           "ce_packets": flow["ce_packets"]}
    for t in range(7):
        row["tag%d_packets" % t] = flow["tags"][t]
    for name in SIGNALS:
        row[name] = flow["signals"][name]
    row["tensor_size"] = "" if flow["start"] is None else flow["start"][1]
    elapsed = ""
    if flow["start"] is not None and flow["confirm"] is not None and \
            flow["confirm"] >= flow["start"][0]:
        ns = flow["confirm"] - flow["start"][0]
        elapsed = "%d.%03d" % (ns // 1000, ns % 1000)
    row["start_to_confirm_us"] = elapsed
    return {k: str(v) for k, v in row.items()}


def check_summary(all_cases, out_dir):
    errors = []
    flows = model(all_cases)
    with open(os.path.join(out_dir, "dlcp.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    got = {(r["src"], r["dst"], int(r["tensor"])): r for r in rows}
    if len(rows) != len(flows) or set(got) != set(flows):
        errors.append("dlcp.csv: flows %s, expected %s" % (sorted(got), sorted(flows)))
    for key, flow in flows.items():
        row = got.get(key)
        if row is None:
            continue
        for column, value in model_row(flow).items():
            if row.get(column) != value:
                errors.append("dlcp.csv %s: %s is %r, expected %r" % (key, column,
                                                                     row.get(column), value))
    with open(os.path.join(out_dir, "summary.json")) as f:
        dlcp = json.load(f)["runs"][0]["dlcp"]
    reasons = {r: sum(c.reason == r for c in all_cases) for r in REASON_WORDS}
    if dlcp.get("malformed") != reasons:
        errors.append("summary.json: dlcp.malformed is %r, expected %r" % (dlcp.get("malformed"),
                                                                          reasons))
    snapped = sum(c.snapped_header and not c.reason for c in all_cases)
    if dlcp.get("udp_port") != DLCP_PORT or dlcp.get("snapped_headers") != snapped:
        errors.append("summary.json: udp_port %r, snapped_headers %r, expected %d, %d" % (
            dlcp.get("udp_port"), dlcp.get("snapped_headers"), DLCP_PORT, snapped))
    by_key = {(f["src"], f["dst"], f["tensor"]): f for f in dlcp.get("flows", [])}
    for key, flow in flows.items():
        j = by_key.get(key)
        if j is None:
            errors.append("summary.json: no flow %s" % (key,))
            continue
        want = {"data_packets": flow["data_packets"], "partitions": len(flow["offsets"]),
                "duplicates": flow["duplicates"], "tag_packets": flow["tags"],
                "ce_packets": flow["ce_packets"], "signals": flow["signals"]}
        for k, v in want.items():
            if j.get(k) != v:
                errors.append("summary.json %s: %s is %r, expected %r" % (key, k, j.get(k), v))
    with open(os.path.join(out_dir, "summary.txt")) as f:
        text = f.read()
    line = "  dlcp: udp port %d, %d flow(s), %d data packet(s), %d signal(s)" % (
        DLCP_PORT, len(flows), sum(f["data_packets"] for f in flows.values()),
        sum(sum(f["signals"].values()) for f in flows.values()))
    if line not in text:
        errors.append("the text summary has no line %r:\n%s" % (line, text))
    return errors


def check_port_option(tshark, lua, analyze, out_dir):
    """--dlcp-port and swemu_dlcp.udp_port move the scope alike; 9800 is then plain UDP."""
    moved = [
        dlcp_case("data to 9900", hdr(1, tensor=1, length=4), tos_byte=tos(DSCP_BASE + 4, 3),
                  sport=40000, dport=9900,
                  info="DLCP data tensor 1 seq 0 offset 0 len 4 tag 4 important"),
        dlcp_case("start to 9900", hdr(2, tensor=1, offset=4), sport=40000, dport=9900),
        Case("data to 9800 after the move", ipv4_udp_frame(header_bytes(hdr(1, length=0)),
                                                           40000, DLCP_PORT, None, SENDER,
                                                           RECEIVER, tos(DSCP_BASE, 2))),
    ]
    pcap = os.path.join(out_dir, "dlcp_port9900.pcap")
    write_pcap(pcap, [(c.frame, c.caplen) for c in moved])
    sub = os.path.join(out_dir, "port9900")
    os.makedirs(sub, exist_ok=True)
    return check_frames(moved,
                        read_tshark(tshark, lua, pcap, ["-o", "swemu_dlcp.udp_port:9900"]),
                        read_analyzer(analyze, pcap, sub, ["--dlcp-port", "9900"]), "port9900")


def check_bad_options(analyze, pcap, out_dir):
    """Each ends with one line and exit status 2 before any output is written."""
    errors = []
    untouched = os.path.join(out_dir, "bad_option_out")
    shutil.rmtree(untouched, ignore_errors=True)
    for args, prefix in [(["--dlcp-port", "0"], "swemu-analyze: --dlcp-port: "),
                         (["--dlcp-port", "65536"], "swemu-analyze: --dlcp-port: "),
                         (["--dlcp-port", "abc"], "swemu-analyze: --dlcp-port: "),
                         (["--dlcp-port", ""], "swemu-analyze: --dlcp-port: "),
                         (["--udp-port", "dlcp=9900"], "swemu-analyze: --udp-port dlcp=9900: ")]:
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
        pcap = os.path.join(args.tmp, "dlcp_cases.pcap")
        write_pcap(pcap, [(c.frame, c.caplen) for c in all_cases])
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
    print("PASS: %d frames (%d DLCP) agree with the values encoded, in tshark and swemu-analyze "
          "(outputs in %s)" % (len(all_cases), sum(c.h is not None for c in all_cases),
                               args.tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
