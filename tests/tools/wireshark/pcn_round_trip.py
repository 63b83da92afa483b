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

import csv
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round_trip_lib  # noqa: E402
from dissector_test import ipv4_udp_frame, udp_as_tcp  # noqa: E402
from round_trip_lib import SetupError, summary_json  # noqa: E402

PCN_PORT = 9700
PS = (10, 0, 0, 100)
FIELDS = ["pcn.start", "pcn.ack", "pcn.threshold", "pcn.ecn"]
PCN = round_trip_lib.Protocol("pcn", "PCN", PCN_PORT, 9800, FIELDS,
                              {"pcn_start_and_ack": "START and ACK both set"})
# write_pcap's frame i is at 1700000000 + i seconds and 1000 * i ns: one frame later is this far.
NEXT_FRAME_US = "1000001.000"


def encode(start, ack, threshold, ecn):
    """The TOS byte, written out from the bit layout (not from the C++ code)."""
    assert threshold % 5 == 0 and 0 <= threshold <= 75 and 0 <= ecn <= 3
    return (0x80 if start else 0) | (0x40 if ack else 0) | (threshold // 5) << 2 | ecn


class Case(round_trip_lib.Case):
    def __init__(self, name, frame, values=None, kind=None):
        self.name = name
        self.frame = frame
        # None: not PCN; else {field: value} as encoded, and the kind the summary counts.
        self.values = values
        self.kind = kind  # "start", "ack", "start_and_ack", "none"
        # Both bits (CS6) is the one odd signal: malformed to both tools.
        self.reason = "pcn_start_and_ack" if kind == "start_and_ack" else ""
        if values is not None:
            label = {"start": "START", "ack": "ACK", "start_and_ack": "START+ACK",
                     "none": "no signal"}[kind]
            self.info = "PCN %s threshold %d" % (label, values["pcn.threshold"])

    def ours(self):
        return self.values is not None

    def expect(self):
        return dict.fromkeys(FIELDS) if self.values is None else self.values


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
    values = {"pcn.start": int(start), "pcn.ack": int(ack), "pcn.threshold": threshold,
              "pcn.ecn": ecn}
    return Case(name, frame, values, kind)


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
# Checking
# --------------------------------------------------------------------------------------------

def check_summary(all_cases, out_dir):
    errors = []
    kinds = [c.kind for c in all_cases]
    starts, acks = kinds.count("start"), kinds.count("ack")
    unanswered = 1  # the EF START on the PCN port; every other START's ACK is the next frame
    pcn = summary_json(out_dir, PCN)
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
        want_row = (case.kind, case.values["pcn.threshold"], case.values["pcn.ecn"])
        if got != want_row:
            errors.append("pcn.csv: row %r, expected %r (%s)" % (got, want_row, case.name))
        answered = case.kind == "start" and case.name != "EF to the PCN port"
        if row["round_trip_us"] != (NEXT_FRAME_US if answered else ""):
            errors.append("pcn.csv: %s round_trip_us %r" % (case.name, row["round_trip_us"]))
    return errors


def moved_cases():
    """To and from port 9800 once --pcn-port and swemu_pcn.udp_port moved there; 9700 is then
    plain UDP."""
    return [
        pcn_case("START to 9800", True, False, 10, 2, (10, 0, 0, 1), port=9800),
        pcn_case("ACK from 9800", False, True, 10, 2, (10, 0, 0, 1), to_port=False, port=9800),
        Case("START to 9700 after the move", ipv4_udp_frame(b"x", 40001, PCN_PORT, None,
                                                            (10, 0, 0, 1), PS, 0x8A)),
    ]


if __name__ == "__main__":
    sys.exit(round_trip_lib.main(__doc__, PCN, cases, check_summary, moved_cases))
