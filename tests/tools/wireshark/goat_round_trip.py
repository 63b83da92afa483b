#!/usr/bin/python3
"""Round trip of GOAT's header through the Wireshark dissector and swemu-analyze.

Usage: goat_round_trip.py --lua swemu.lua --analyze swemu-analyze --tmp DIR

Encodes GOAT frames itself (pipeline/wire/goat.h: a 28-byte big-endian header after UDP to port
9100, byte 0 version << 4 | type, byte 1 flags (bit 0 resend, 1 overflow, 2 aggregate, 3
excluded), then job, node id, sub-model, fragment, round, num_elements, count and a 64-bit
bitmap, then num_elements int32 elements): a job's fragments from workers to a switch, to the PS
and to any switch, switch aggregates full and partial, results with and without a late worker,
every flag byte's bits, field extremes, a VLAN tag, trailing bytes, headers and elements cut in the
datagram and by the snap length, other versions and types, a count that is not the bitmap's
popcount. Writes them to DIR/goat_cases.pcap, reads it with tshark and the Lua script and with
`swemu-analyze --packets`, and checks that both give every goat.* field equal to the values
encoded (and the dissector each flag bit and each captured element), the same malformed frames,
and the Info column. Where GOAT is not scoped neither may name it: GOAT bytes in UDP to another
port, from port 9100 to another, and in TCP to 9100. Also checks the analyzer's summary (--json,
--csv goat.csv, the text) against a model of the spec computed here, that --goat-port N and the
preference swemu_goat.udp_port:N move the scope alike, and that bad --goat-port values (and
--udp-port goat=N) end with one line and exit status 2, writing nothing.

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
from round_trip_lib import (AGGREGATOR, SetupError, check_scope,  # noqa: E402
                            check_text_summary, datagram, number, summary_json)

GOAT_PORT = 9100
HEADER_LEN = 28
GRADIENT, RESULT = 0, 1
RESEND, OVERFLOW, AGGREGATE, EXCLUDED = 0x01, 0x02, 0x04, 0x08
FLAG_NAMES = {RESEND: "resend", OVERFLOW: "overflow", AGGREGATE: "aggregate",
              EXCLUDED: "excluded"}
NODE_PS, NODE_ANY = 0, 0xFFFF
WORKER, PS = (10, 0, 0, 1), (10, 0, 0, 16)
# (field, last byte + 1) of the header; version and type share byte 0.
HEADER_FIELDS = [("goat.version", 1), ("goat.type", 1), ("goat.flags", 2), ("goat.job_id", 4),
                 ("goat.node_id", 6), ("goat.submodel", 8), ("goat.fragment", 12),
                 ("goat.round", 16), ("goat.num_elements", 18), ("goat.count", 20),
                 ("goat.bitmap", 28)]
FIELDS = [name for name, _ in HEADER_FIELDS]
FLAG_FIELDS = ["goat.flags." + name for name in FLAG_NAMES.values()]
# The words of the dissector's expert message for each of the analyzer's reasons.
REASON_WORDS = {
    "goat_truncated_header": "truncated: GOAT header",
    "goat_bad_version": "unsupported GOAT version",
    "goat_bad_type": "unknown GOAT type",
    "goat_truncated_elements": "elements need",
    "goat_bad_count": "is not popcount(bitmap)",
}


def check_tshark(case, t_row):
    """The dissector's own fields: each flag bit and each captured element."""
    errors = []
    for field, want in case.expect_flags().items():
        if number(t_row[field]) != want:
            errors.append("%s is %r (tshark), encoded %r" % (field, t_row[field], want))
    elements = [int(v) for v in t_row["goat.element"].split(AGGREGATOR) if v]
    if elements != case.expect_elements():
        errors.append("goat.element is %r (tshark), encoded %r" % (elements[:8],
                                                                   case.expect_elements()[:8]))
    return errors


GOAT = round_trip_lib.Protocol("goat", "GOAT", GOAT_PORT, 9200, FIELDS, REASON_WORDS,
                               FLAG_FIELDS + ["goat.element"], check_tshark)


def header_bytes(h):
    """The 28 header bytes, written out from the layout (not from the C++ code)."""
    return struct.pack("!BBHHHIIHHQ", (h["version"] & 0xF) << 4 | (h["type"] & 0xF), h["flags"],
                       h["job"], h["node"], h["submodel"], h["fragment"], h["round"], h["n"],
                       h["count"], h["bitmap"])


def element(i):
    """The i-th element a case carries: both signs and the int32 extremes."""
    return [-2**31, 2**31 - 1, -1, 0][i] if i < 4 else (i * 7919) % 2**20 - 2**19


class Case(round_trip_lib.HeaderCase):
    header_len = HEADER_LEN

    def expect(self):
        """{field: value or None} as encoded: a header field when its bytes were captured."""
        if self.h is None:
            return {f: None for f in FIELDS}
        values = {"goat.version": self.h["version"], "goat.type": self.h["type"],
                  "goat.flags": self.h["flags"], "goat.job_id": self.h["job"],
                  "goat.node_id": self.h["node"], "goat.submodel": self.h["submodel"],
                  "goat.fragment": self.h["fragment"], "goat.round": self.h["round"],
                  "goat.num_elements": self.h["n"], "goat.count": self.h["count"],
                  "goat.bitmap": self.h["bitmap"]}
        return {name: (values[name] if self.kept >= end else None) for name, end in HEADER_FIELDS}

    def expect_flags(self):
        """The dissector's flag bits, once the flag byte was captured."""
        if self.h is None or self.kept < 2:
            return {f: None for f in FLAG_FIELDS}
        return {"goat.flags." + name: int(bool(self.h["flags"] & bit))
                for bit, name in FLAG_NAMES.items()}

    def expect_elements(self):
        """The captured whole elements, in a whole header of a known version and type."""
        h = self.h
        if h is None or self.kept < HEADER_LEN or h["version"] != 1 or h["type"] > RESULT:
            return []
        return [element(i) for i in range(min(h["n"], (self.kept - HEADER_LEN) // 4))]


def hdr(ptype=GRADIENT, flags=0, job=1, node=1, submodel=0, fragment=0, rnd=1, n=4, bitmap=1,
        count=None, version=1):
    return dict(version=version, type=ptype, flags=flags, job=job, node=node, submodel=submodel,
                fragment=fragment, round=rnd, n=n, bitmap=bitmap,
                count=bin(bitmap).count("1") if count is None else count)


def grad(worker, node, submodel=0, fragment=0, rnd=1, flags=0):
    """A worker's own fragment."""
    return hdr(GRADIENT, flags, node=node, submodel=submodel, fragment=fragment, rnd=rnd,
               bitmap=1 << worker)


def goat_case(name, h, elements=None, cut=None, caplen_cut=None, reason="", vlan=None,
              sport=30000, dport=GOAT_PORT, info=None):
    """A GOAT datagram: the header h, then `elements` elements (default: h's n); cut keeps only
    that many GOAT bytes in the datagram, caplen_cut that many in the capture."""
    elements = h["n"] if elements is None else elements
    data = header_bytes(h) + b"".join(struct.pack("!i", element(i)) for i in range(elements))
    frame, caplen, kept, wire = datagram(data, sport, dport, WORKER, PS, 0, vlan, cut, caplen_cut)
    return Case(name, frame, h, reason, kept, wire, caplen, info)


def cases():
    if header_bytes(hdr(RESULT, 0x0F, 2, 3, 4, 5, 6, 7, 0x8000000000000001)) != bytes.fromhex(
            "110f" "0002" "0003" "0004" "00000005" "00000006" "0007" "0002" "8000000000000001"):
        raise SetupError("test bug: header_bytes() disagrees with the layout")
    out = []
    # Job 1, sub-model 0, fragment 0: four workers to switch 1, its full aggregate to the PS.
    for w in range(4):
        out.append(goat_case("fragment 0 worker %d" % w, grad(w, 1)))
    out.append(goat_case("fragment 0 aggregate", hdr(flags=AGGREGATE, node=NODE_PS, bitmap=0xF),
                         info="GOAT gradient job 1 to PS submodel 0 fragment 0 round 1 count 4 "
                              "bitmap 0xf [aggregate]"))
    # Fragment 1: worker 1's retransmission flushes a partial sum; 2 and 3 go to the PS.
    out.append(goat_case("fragment 1 worker 0", grad(0, 1, fragment=1)))
    out.append(goat_case("fragment 1 worker 1 resend", grad(1, 1, fragment=1, flags=RESEND),
                         info="GOAT gradient job 1 to node 1 submodel 0 fragment 1 round 1 "
                              "count 1 bitmap 0x2 [resend]"))
    out.append(goat_case("fragment 1 partial", hdr(flags=AGGREGATE, node=NODE_PS, fragment=1,
                                                   bitmap=0x3)))
    out.append(goat_case("fragment 1 worker 2 to the PS", grad(2, NODE_PS, fragment=1)))
    out.append(goat_case("fragment 1 worker 3 to the PS", grad(3, NODE_PS, fragment=1,
                                                               flags=RESEND)))
    # Sub-model 1 shared ATP-style; an aggregate that overflowed.
    out.append(goat_case("any worker 0", grad(0, NODE_ANY, submodel=1),
                         info="GOAT gradient job 1 to any (ATP-style) submodel 1 fragment 0 "
                              "round 1 count 1 bitmap 0x1"))
    out.append(goat_case("any worker 1", grad(1, NODE_ANY, submodel=1)))
    out.append(goat_case("any aggregate", hdr(flags=AGGREGATE, node=NODE_ANY, submodel=1,
                                              bitmap=0x3)))
    out.append(goat_case("overflow", hdr(flags=AGGREGATE | OVERFLOW, node=NODE_PS, submodel=1,
                                         fragment=1, bitmap=0x7)))
    # The PS's results, the second without the late worker 3.
    out.append(goat_case("result", hdr(RESULT, node=NODE_PS, bitmap=0xF),
                         info="GOAT result job 1 to PS submodel 0 fragment 0 round 1 count 4 "
                              "bitmap 0xf"))
    out.append(goat_case("result excluded", hdr(RESULT, EXCLUDED, node=NODE_PS, fragment=1,
                                                bitmap=0x7)))
    # Round 2; several workers' values without the aggregate flag; no worker at all.
    out.append(goat_case("round 2", grad(0, 1, rnd=2)))
    out.append(goat_case("other", hdr(node=NODE_PS, fragment=2, rnd=2, bitmap=0x5)))
    out.append(goat_case("no worker", hdr(node=NODE_PS, fragment=3, rnd=2, bitmap=0)))
    # Every flag byte, on job 2: each bit alone, all of them, the unknown bits.
    for flags in (0x00, 0x01, 0x02, 0x04, 0x08, 0x0F, 0xF0, 0xFF):
        for ptype in (GRADIENT, RESULT):
            out.append(goat_case("type %d flags 0x%02x" % (ptype, flags),
                                 hdr(ptype, flags, job=2, node=2, fragment=flags, bitmap=0x30)))
    # Field extremes (job 65535), element counts 0, 1 and 64, a VLAN tag, trailing bytes, the
    # elements cut by the capture: none is malformed.
    out.append(goat_case("extremes", hdr(RESULT, 0, 0xFFFF, 0xFFFE, 0xFFFF, 0xFFFFFFFF,
                                         0xFFFFFFFF, 0, 2**64 - 1),
                         info="GOAT result job 65535 to node 65534 submodel 65535 fragment "
                              "4294967295 round 4294967295 count 64 bitmap 0xffffffffffffffff"))
    out.append(goat_case("top bit", hdr(job=0xFFFF, bitmap=1 << 63, n=1)))
    out.append(goat_case("64 elements", hdr(job=0xFFFF, fragment=1, n=64)))
    out.append(goat_case("vlan tagged", hdr(job=0xFFFF, fragment=2), vlan=100))
    out.append(goat_case("trailing bytes", hdr(job=0xFFFF, fragment=3), elements=6))
    out.append(goat_case("elements snapped", hdr(job=0xFFFF, fragment=4),
                         caplen_cut=HEADER_LEN + 6,
                         info="GOAT gradient job 65535 to node 1 submodel 0 fragment 4 round 1 "
                              "count 1 bitmap 0x1 [snapped]"))
    # Malformed, job 3: headers cut in the datagram, other versions and types, elements past the
    # datagram, a count that is not the bitmap's. Fields as far as the bytes go.
    for cut in (0, 1, 2, 17, 27):
        out.append(goat_case("header cut to %d" % cut, hdr(job=3), cut=cut,
                             reason="goat_truncated_header",
                             info="GOAT (truncated header, %d of 28 bytes)" % cut))
    for version in (0, 2, 15):
        out.append(goat_case("version %d" % version, hdr(job=3, version=version),
                             reason="goat_bad_version",
                             info="GOAT v%d gradient job 3" % version))
    for ptype in (2, 15):
        out.append(goat_case("type %d" % ptype, hdr(ptype, job=3), reason="goat_bad_type",
                             info="GOAT type %d job 3" % ptype))
    out.append(goat_case("elements short", hdr(job=3), elements=3,
                         reason="goat_truncated_elements"))
    out.append(goat_case("no elements", hdr(job=3, n=0xFFFF), elements=0,
                         reason="goat_truncated_elements"))
    for count, bitmap in ((2, 1), (0, 1), (1, 3), (65, 2**64 - 1)):
        out.append(goat_case("count %d bitmap 0x%x" % (count, bitmap),
                             hdr(job=3, bitmap=bitmap, count=count), reason="goat_bad_count"))
    # The header cut by the capture only: not malformed, not accounted; and by both.
    out.append(goat_case("header snapped", hdr(job=3), caplen_cut=10,
                         info="GOAT (header cut by the capture, 10 of 28 bytes)"))
    out.append(goat_case("header cut and snapped", hdr(job=3), cut=20, caplen_cut=3,
                         reason="goat_truncated_header"))
    # Not GOAT: GOAT bytes to another port, from 9100 to another port, and in TCP to 9100.
    like = header_bytes(hdr(n=0))
    out.append(Case("udp to 9101", ipv4_udp_frame(like, 30000, 9101, None, WORKER, PS)))
    out.append(Case("udp from 9100 to 40000", ipv4_udp_frame(like, GOAT_PORT, 40000, None,
                                                             WORKER, PS)))
    out.append(Case("tcp to 9100", udp_as_tcp(ipv4_udp_frame(like, 40000, GOAT_PORT, None,
                                                             WORKER, PS))))
    return out


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------

def model(all_cases):
    """The per-job summary the spec implies, from the values encoded."""
    jobs = {}
    for case in all_cases:
        if not case.accounted():
            continue
        h = case.h
        job = jobs.setdefault(h["job"], {
            "gradient_packets": 0, "worker_packets": 0, "counts": {}, "to_ps_packets": 0,
            "to_switch_packets": 0, "to_any_packets": 0, "result_packets": 0,
            "excluded_result_packets": 0, "resend_packets": 0, "overflow_packets": 0,
            "fragments": set(), "rounds": set(), "workers_bitmap": 0})
        job["fragments"].add((h["submodel"], h["fragment"], h["round"]))
        job["rounds"].add(h["round"])
        job["resend_packets"] += bool(h["flags"] & RESEND)
        job["overflow_packets"] += bool(h["flags"] & OVERFLOW)
        if h["type"] == RESULT:
            job["result_packets"] += 1
            job["excluded_result_packets"] += bool(h["flags"] & EXCLUDED)
            continue
        job["gradient_packets"] += 1
        job["workers_bitmap"] |= h["bitmap"]
        if h["flags"] & AGGREGATE:
            job["counts"][h["count"]] = job["counts"].get(h["count"], 0) + 1
        elif h["count"] == 1:
            job["worker_packets"] += 1
        key = {NODE_PS: "to_ps_packets", NODE_ANY: "to_any_packets"}.get(h["node"],
                                                                         "to_switch_packets")
        job[key] += 1
    return jobs


def model_row(job):
    """The job's goat.csv columns (and JSON keys) as the analyzer must write them."""
    aggregates = sum(job["counts"].values())
    row = {k: v for k, v in job.items() if k not in ("counts", "fragments", "rounds")}
    row.update(aggregate_packets=aggregates,
               other_gradient_packets=job["gradient_packets"] - job["worker_packets"] - aggregates,
               fragments=len(job["fragments"]), rounds=len(job["rounds"]),
               round_min=min(job["rounds"]), round_max=max(job["rounds"]))
    return row


def check_summary(all_cases, out_dir):
    errors = []
    jobs = model(all_cases)
    with open(os.path.join(out_dir, "goat.csv"), newline="") as f:
        rows = {int(r["job"]): r for r in csv.DictReader(f)}
    if sorted(rows) != sorted(jobs):
        errors.append("goat.csv: jobs %s, expected %s" % (sorted(rows), sorted(jobs)))
    goat = summary_json(out_dir, GOAT)
    by_job = {j["job"]: j for j in goat.get("jobs", [])}
    for job_id, job in jobs.items():
        want = model_row(job)
        counts = sorted(job["counts"])
        csv_want = dict(want, aggregate_count_min=counts[0] if counts else "",
                        aggregate_count_max=counts[-1] if counts else "")
        row = rows.get(job_id, {})
        for column, value in csv_want.items():
            if row.get(column) != str(value):
                errors.append("goat.csv job %d: %s is %r, expected %r" % (
                    job_id, column, row.get(column), value))
        j = by_job.get(job_id, {})
        json_want = dict(want, aggregate_counts=[{"count": c, "packets": job["counts"][c]}
                                                 for c in counts])
        for key, value in json_want.items():
            if j.get(key) != value:
                errors.append("summary.json job %d: %s is %r, expected %r" % (
                    job_id, key, j.get(key), value))
    errors += check_scope(GOAT, goat, all_cases)
    line = "  goat: udp port %d, %d job(s), %d gradient(s), %d result(s)" % (
        GOAT_PORT, len(jobs), sum(j["gradient_packets"] for j in jobs.values()),
        sum(j["result_packets"] for j in jobs.values()))
    errors += check_text_summary(out_dir, line)
    return errors


def moved_cases():
    """To port 9200 once --goat-port and swemu_goat.udp_port moved there; 9100 is then plain
    UDP."""
    return [
        goat_case("gradient to 9200", grad(2, 7), dport=9200,
                  info="GOAT gradient job 1 to node 7 submodel 0 fragment 0 round 1 count 1 "
                       "bitmap 0x4"),
        goat_case("result to 9200", hdr(RESULT, EXCLUDED, node=NODE_PS), dport=9200),
        Case("gradient to 9100 after the move", ipv4_udp_frame(header_bytes(hdr()), 30000,
                                                               GOAT_PORT, None, WORKER, PS)),
    ]


if __name__ == "__main__":
    sys.exit(round_trip_lib.main(__doc__, GOAT, cases, check_summary, moved_cases))
