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

import csv
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round_trip_lib  # noqa: E402
from dissector_test import ipv4_udp_frame, udp_as_tcp  # noqa: E402
from round_trip_lib import (SetupError, check_scope, check_text_summary, datagram,  # noqa: E402
                            frame_ns, summary_json)

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
# The words of the dissector's expert message for each of the analyzer's reasons.
REASON_WORDS = {
    "dlcp_truncated_header": "truncated: DLCP header",
    "dlcp_bad_version": "unsupported DLCP version",
    "dlcp_bad_type": "unknown DLCP type",
    "dlcp_truncated_payload": "truncated: DLCP payload length",
}
DLCP = round_trip_lib.Protocol("dlcp", "DLCP", DLCP_PORT, 9900, FIELDS, REASON_WORDS)


def tos(dscp, ecn):
    return dscp << 2 | ecn


def header_bytes(h):
    """The 16 header bytes, written out from the layout (not from the C++ code)."""
    return struct.pack("!BBHIII", (h["version"] & 0xF) << 4 | (h["type"] & 0xF), h["flags"],
                       h["length"], h["tensor"], h["seq"], h["offset"])


class Case(round_trip_lib.HeaderCase):
    header_len = HEADER_LEN

    def __init__(self, name, frame, h=None, tos_byte=0, src=SENDER, dst=RECEIVER, reason="",
                 kept=0, wire=0, caplen=None, info=None):
        super().__init__(name, frame, h, reason, kept, wire, caplen, info)
        self.tos = tos_byte
        self.src, self.dst = src, dst

    def is_data(self):
        return (self.h is not None and self.kept >= 1 and self.h["version"] == 1 and
                self.h["type"] == 1)

    def expect(self):
        """{field: value or None} as encoded: a header field when its bytes were captured."""
        if self.h is None:
            return {f: None for f in FIELDS}
        values = {"dlcp.version": self.h["version"], "dlcp.type": self.h["type"],
                  "dlcp.pull": self.h["flags"] & 1, "dlcp.length": self.h["length"],
                  "dlcp.tensor": self.h["tensor"], "dlcp.seq": self.h["seq"],
                  "dlcp.offset": self.h["offset"]}
        out = {name: (values[name] if self.kept >= end else None)
               for name, _, end in HEADER_FIELDS}
        dscp, ecn = self.tos >> 2, self.tos & 3
        data = self.is_data()
        tagged = DSCP_BASE <= dscp < DSCP_BASE + 7
        out["dlcp.tag"] = dscp - DSCP_BASE if data and tagged else None
        out["dlcp.important"] = int(ecn != 0) if data else None
        return out


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
    frame, caplen, kept, wire = datagram(data, sport, dport, src, dst, tos_byte, vlan, cut,
                                         caplen_cut)
    return Case(name, frame, h, tos_byte, src, dst, reason, kept, wire, caplen, info)


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
# Checking
# --------------------------------------------------------------------------------------------

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
    dlcp = summary_json(out_dir, DLCP)
    errors += check_scope(DLCP, dlcp, all_cases)
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
    line = "  dlcp: udp port %d, %d flow(s), %d data packet(s), %d signal(s)" % (
        DLCP_PORT, len(flows), sum(f["data_packets"] for f in flows.values()),
        sum(sum(f["signals"].values()) for f in flows.values()))
    errors += check_text_summary(out_dir, line)
    return errors


def moved_cases():
    """To port 9900 once --dlcp-port and swemu_dlcp.udp_port moved there; 9800 is then plain
    UDP."""
    return [
        dlcp_case("data to 9900", hdr(1, tensor=1, length=4), tos_byte=tos(DSCP_BASE + 4, 3),
                  sport=40000, dport=9900,
                  info="DLCP data tensor 1 seq 0 offset 0 len 4 tag 4 important"),
        dlcp_case("start to 9900", hdr(2, tensor=1, offset=4), sport=40000, dport=9900),
        Case("data to 9800 after the move", ipv4_udp_frame(header_bytes(hdr(1, length=0)),
                                                           40000, DLCP_PORT, None, SENDER,
                                                           RECEIVER, tos(DSCP_BASE, 2))),
    ]


if __name__ == "__main__":
    sys.exit(round_trip_lib.main(__doc__, DLCP, cases, check_summary, moved_cases))
