#!/usr/bin/python3
"""Round trip of PLink's header through the Wireshark dissector and swemu-analyze.

Usage: plink_round_trip.py --lua swemu.lua --analyze swemu-analyze --tmp DIR

Encodes PLink frames itself (pipeline/wire/plink.h, docs/wire.md "PLink": a 24-byte big-endian
header after UDP to port 9200, byte 0 version << 4 | type (0 probe request, 1 probe reply, 2
chunk, 3 chunk ack), byte 1 flags (in chunks and acks bits 1-0 the schedule step), then sender,
receiver, epoch, seq, offset and a 64-bit stamp; a chunk's payload after it; a chunk ack is a
chunk packet's header sent back, sender and receiver swapped): probe requests and their replies
(answered, unanswered, a reply to no request), probes with a payload or an offset (notes, not
malformed), chunks in pieces, one ending at its size, an empty one, one whose payload the capture
cut, chunks of every step, chunk acks (a duplicate, one of a chunk not captured, one with bytes
after its header: a note), flag bytes, field extremes, a VLAN tag, headers cut in the datagram
and by the snap length, other versions and types, chunks whose payload runs past their size.
Writes them to DIR/plink_cases.pcap, reads it with tshark and the Lua script and with
`swemu-analyze --packets`, and checks that both give every plink.* field equal to the values
encoded (and the dissector the captured payload as plink.payload, a chunk's or ack's step as
plink.step), the same malformed frames, the notes, and the Info column. Where PLink is not
scoped neither may name it:
PLink bytes in UDP to another port, from port 9200 to another, and in TCP to 9200. Also checks
the analyzer's summary (--json, --csv plink.csv, the text) against a model of the spec computed
here (replies matched to requests in capture time, the round trips from the pcap's timestamps,
chunk packets per step, chunk acks counted with the chunks they acknowledge),
that --plink-port N and the preference swemu_plink.udp_port:N move the scope alike, and that bad
--plink-port values (and --udp-port plink=N) end with one line and exit status 2, writing
nothing.

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
from round_trip_lib import (SetupError, check_scope, check_text_summary,  # noqa: E402
                            datagram, frame_ns, summary_json)

PLINK_PORT = 9200
HEADER_LEN = 24
REQUEST, REPLY, CHUNK, ACK = 0, 1, 2, 3
STEPS = 4  # flags bits 1-0 of a chunk or an ack
A, B = (10, 0, 0, 1), (10, 0, 0, 2)
# (field, last byte + 1) of the header; version and type share byte 0.
HEADER_FIELDS = [("plink.version", 1), ("plink.type", 1), ("plink.flags", 2),
                 ("plink.sender", 4), ("plink.receiver", 6), ("plink.epoch", 8),
                 ("plink.seq", 12), ("plink.offset", 16), ("plink.stamp", 24)]
FIELDS = [name for name, _ in HEADER_FIELDS]
# The words of the dissector's expert message for each of the analyzer's reasons.
REASON_WORDS = {
    "plink_truncated_header": "truncated: PLink header",
    "plink_bad_version": "unsupported PLink version",
    "plink_bad_type": "unknown PLink type",
    "plink_chunk_overrun": "past the chunk's size",
}
PROBE_PAYLOAD_NOTE = "bytes after the probe header"
PROBE_OFFSET_NOTE = "probe offset"
ACK_PAYLOAD_NOTE = "bytes after the chunk ack header"


def check_tshark(case, t_row):
    """The dissector's own fields: a chunk's or ack's step and the captured payload."""
    errors = []
    step = case.expect_step()
    if t_row["plink.step"] != ("" if step is None else str(step)):
        errors.append("plink.step is %r (tshark), expected %r" % (t_row["plink.step"], step))
    payload = t_row["plink.payload"].replace(":", "").lower()
    if payload != case.expect_payload():
        errors.append("plink.payload is %r (tshark), encoded %r" % (payload[:40],
                                                                    case.expect_payload()[:40]))
    return errors


PLINK = round_trip_lib.Protocol("plink", "PLink", PLINK_PORT, 9300, FIELDS, REASON_WORDS,
                                ["plink.step", "plink.payload"], check_tshark)


def header_bytes(h):
    """The 24 header bytes, written out from the layout (not from the C++ code)."""
    return struct.pack("!BBHHHIIQ", (h["version"] & 0xF) << 4 | (h["type"] & 0xF), h["flags"],
                       h["sender"], h["receiver"], h["epoch"], h["seq"], h["offset"], h["stamp"])


def payload_bytes(n):
    return bytes((i * 7 + 3) % 256 for i in range(n))


class Case(round_trip_lib.HeaderCase):
    header_len = HEADER_LEN

    def expect(self):
        """{field: value or None} as encoded: a header field when its bytes were captured."""
        if self.h is None:
            return {f: None for f in FIELDS}
        return {name: (self.h[name.split(".")[1]] if self.kept >= end else None)
                for name, end in HEADER_FIELDS}

    def expect_payload(self):
        """The captured payload, in a whole header of a known version and type."""
        h = self.h
        if not self.known():
            return ""
        return payload_bytes(self.wire - HEADER_LEN)[:self.kept - HEADER_LEN].hex()

    def known(self):
        """A whole header of a known version and type was captured."""
        h = self.h
        return (h is not None and self.kept >= HEADER_LEN and h["version"] == 1 and
                h["type"] <= ACK)

    def expect_step(self):
        """plink.step: flags bits 1-0 of a known chunk or ack, else none."""
        if self.known() and self.h["type"] in (CHUNK, ACK):
            return self.h["flags"] & (STEPS - 1)
        return None

    def payload_len(self):
        return self.wire - HEADER_LEN


def hdr(ptype=REQUEST, sender=1, receiver=2, epoch=0, seq=1, offset=0, stamp=0, flags=0,
        version=1):
    return dict(version=version, type=ptype, flags=flags, sender=sender, receiver=receiver,
                epoch=epoch, seq=seq, offset=offset, stamp=stamp)


def plink_case(name, h, payload=0, cut=None, caplen_cut=None, reason="", vlan=None, sport=30000,
               dport=PLINK_PORT, info=None, notes=()):
    """A PLink datagram: the header h, then `payload` bytes; cut keeps only that many PLink bytes
    in the datagram, caplen_cut that many in the capture."""
    data = header_bytes(h) + payload_bytes(payload)
    frame, caplen, kept, wire = datagram(data, sport, dport, A, B, 0, vlan, cut, caplen_cut)
    return Case(name, frame, h, reason, kept, wire, caplen, info, notes)


def request(sender, receiver, epoch, seq, stamp=0, **kw):
    return hdr(REQUEST, sender, receiver, epoch, seq, stamp=stamp, **kw)


def reply(requester, responder, epoch, seq, stamp=0, **kw):
    """The reply copies the request, sender and receiver swapped."""
    return hdr(REPLY, responder, requester, epoch, seq, stamp=stamp, **kw)


def chunk(sender, receiver, epoch, chunk_id, offset, size, **kw):
    return hdr(CHUNK, sender, receiver, epoch, chunk_id, offset, size, **kw)


def ack(chunk_header):
    """The ack of a chunk packet: its header sent back, sender and receiver swapped, type 3."""
    h = dict(chunk_header, type=ACK)
    h["sender"], h["receiver"] = chunk_header["receiver"], chunk_header["sender"]
    return h


def cases():
    if header_bytes(hdr(CHUNK, 2, 3, 4, 5, 6, 0x0102030405060708, 0x80)) != bytes.fromhex(
            "1280" "0002" "0003" "0004" "00000005" "00000006" "0102030405060708"):
        raise SetupError("test bug: header_bytes() disagrees with the layout")
    out = []
    # 1 probes 2 in epoch 0: two answered, one unanswered, a reply to no request.
    out.append(plink_case("request 1", request(1, 2, 0, 1, 1000),
                          info="PLink probe request 1 -> 2 epoch 0 seq 1 stamp 1000"))
    out.append(plink_case("reply 1", reply(1, 2, 0, 1, 1000),
                          info="PLink probe reply 2 -> 1 epoch 0 seq 1 stamp 1000"))
    out.append(plink_case("request 2", request(1, 2, 0, 2, 2000)))
    out.append(plink_case("request 3 (unanswered)", request(1, 2, 0, 3, 3000)))
    out.append(plink_case("reply 2", reply(1, 2, 0, 2, 2000)))
    out.append(plink_case("reply to no request", reply(1, 2, 0, 9, 9000)))
    # 2 probes 1 in epochs 1 and 2; a reply of another epoch matches nothing.
    out.append(plink_case("2 -> 1 request", request(2, 1, 1, 1)))
    out.append(plink_case("2 -> 1 reply", reply(2, 1, 1, 1)))
    out.append(plink_case("2 -> 1 request epoch 2", request(2, 1, 2, 2)))
    out.append(plink_case("2 -> 1 reply epoch 3", reply(2, 1, 3, 2)))
    # Probes with a payload or an offset: notes, counted all the same.
    out.append(plink_case("probe with payload", request(3, 4, 0, 1), payload=6,
                          notes=(PROBE_PAYLOAD_NOTE,)))
    out.append(plink_case("reply with offset", reply(3, 4, 0, 1, offset=7),
                          info="PLink probe reply 4 -> 3 epoch 0 seq 1 offset 7 stamp 0",
                          notes=(PROBE_OFFSET_NOTE,)))
    # Chunks 1 -> 2: chunk 7 of epoch 1 (3000 bytes) in three pieces and its first again, a chunk
    # ending at its size, an empty one, one the capture cut (counted in full).
    for offset, length in ((0, 1400), (1400, 1400), (2800, 200), (0, 1400)):
        out.append(plink_case("chunk 7 at %d" % offset, chunk(1, 2, 1, 7, offset, 3000),
                              payload=length,
                              info="PLink chunk 1 -> 2 epoch 1 id 7 offset %d len %d size 3000"
                                   % (offset, length)))
    out.append(plink_case("chunk 8 whole", chunk(1, 2, 1, 8, 0, 100), payload=100))
    out.append(plink_case("chunk empty", chunk(1, 2, 2, 7, 10, 10)))
    out.append(plink_case("chunk snapped", chunk(1, 2, 2, 9, 0, 64), payload=64,
                          caplen_cut=HEADER_LEN + 10,
                          info="PLink chunk 1 -> 2 epoch 2 id 9 offset 0 len 64 size 64 step 0 "
                               "[snapped]"))
    # 5 bytes: not a whole number of float32 values, not malformed either.
    out.append(plink_case("chunk 2 -> 1", chunk(2, 1, 4, 1, 0, 5, flags=2), payload=5,
                          info="PLink chunk 2 -> 1 epoch 4 id 1 offset 0 len 5 size 5 step 2"))
    # Chunks of every step (flags bits 1-0), and with other flag bits set (counted by bits 1-0,
    # the byte shown in the Info column).
    for step in range(STEPS):
        out.append(plink_case("chunk step %d" % step, chunk(5, 6, 2, 10 + step, 0, 8, flags=step),
                              payload=8,
                              info="PLink chunk 5 -> 6 epoch 2 id %d offset 0 len 8 size 8 step %d"
                                   % (10 + step, step)))
    out.append(plink_case("chunk step 2, other flag bits", chunk(5, 6, 2, 14, 0, 8, flags=0x86),
                          payload=8,
                          info="PLink chunk 5 -> 6 epoch 2 id 14 offset 0 len 8 size 8 step 2 "
                               "[flags 0x86]"))
    # Chunk acks, each counted with the chunks it acknowledges (the ack's receiver first): 2 acks
    # chunk 7's first piece twice (once per copy) and chunk 8; 1 acks 2's chunk; 6 acks two of
    # 5's chunks; 4 acks chunks of 3 the capture did not see, one ack with bytes after its header
    # (a note; an ack has no size check: offset plus those bytes pass its size).
    out.append(plink_case("ack chunk 7 at 0", ack(chunk(1, 2, 1, 7, 0, 3000)),
                          info="PLink chunk ack 2 -> 1 epoch 1 id 7 offset 0 size 3000 step 0"))
    out.append(plink_case("ack chunk 7 at 0 again", ack(chunk(1, 2, 1, 7, 0, 3000))))
    out.append(plink_case("ack chunk 8", ack(chunk(1, 2, 1, 8, 0, 100))))
    out.append(plink_case("ack chunk 2 -> 1", ack(chunk(2, 1, 4, 1, 0, 5, flags=2)),
                          info="PLink chunk ack 1 -> 2 epoch 4 id 1 offset 0 size 5 step 2"))
    out.append(plink_case("ack step 1", ack(chunk(5, 6, 2, 11, 0, 8, flags=1)),
                          info="PLink chunk ack 6 -> 5 epoch 2 id 11 offset 0 size 8 step 1"))
    out.append(plink_case("ack step 3, other flag bits", ack(chunk(5, 6, 2, 13, 0, 8, flags=0x43)),
                          info="PLink chunk ack 6 -> 5 epoch 2 id 13 offset 0 size 8 step 3 "
                               "[flags 0x43]"))
    out.append(plink_case("ack of a chunk not captured", ack(chunk(3, 4, 0, 1, 0, 8, flags=3))))
    out.append(plink_case("ack with payload", ack(chunk(3, 4, 0, 2, 16, 16, flags=1)), payload=4,
                          info="PLink chunk ack 4 -> 3 epoch 0 id 2 offset 16 size 16 step 1",
                          notes=(ACK_PAYLOAD_NOTE,)))
    # Flag bytes, field extremes, a VLAN tag: none is malformed.
    for flags in (0x01, 0x80, 0xFF):
        out.append(plink_case("flags 0x%02x" % flags, request(5, 6, 0, flags, flags=flags),
                              info="PLink probe request 5 -> 6 epoch 0 seq %d stamp 0 "
                                   "[flags 0x%02x]" % (flags, flags)))
    out.append(plink_case("extremes", chunk(0xFFFF, 0xFFFE, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
                                            2**64 - 1, flags=0xFF), payload=3))
    out.append(plink_case("stamp extreme", request(0xFFFF, 0, 0xFFFF, 0xFFFFFFFF, 2**64 - 1),
                          info="PLink probe request 65535 -> 0 epoch 65535 seq 4294967295 "
                               "stamp 18446744073709551615"))
    out.append(plink_case("vlan tagged", request(7, 8, 0, 1), vlan=100))
    # Malformed: headers cut in the datagram, other versions and types, chunks past their size.
    for cut in (0, 1, 2, 17, 23):
        out.append(plink_case("header cut to %d" % cut, request(9, 10, 0, 1), cut=cut,
                              reason="plink_truncated_header",
                              info="PLink (truncated header, %d of 24 bytes)" % cut))
    for version in (0, 2, 15):
        out.append(plink_case("version %d" % version, request(9, 10, 0, 1, version=version),
                              reason="plink_bad_version",
                              info="PLink v%d probe request 9 -> 10" % version))
    for ptype in (4, 15):
        out.append(plink_case("type %d" % ptype, hdr(ptype, 9, 10), reason="plink_bad_type",
                              info="PLink type %d 9 -> 10" % ptype))
    out.append(plink_case("chunk past its size", chunk(9, 10, 0, 1, 0, 100), payload=101,
                          reason="plink_chunk_overrun",
                          info="PLink chunk 9 -> 10 epoch 0 id 1 offset 0 len 101 size 100 "
                               "step 0 [overrun]"))
    out.append(plink_case("chunk starting at its size", chunk(9, 10, 0, 1, 100, 100), payload=1,
                          reason="plink_chunk_overrun"))
    out.append(plink_case("chunk past 2^32", chunk(9, 10, 0, 1, 0xFFFFFFFF, 0xFFFFFFFF),
                          payload=2, reason="plink_chunk_overrun"))
    # The header cut by the capture only: not malformed, not accounted; and by both.
    out.append(plink_case("header snapped", request(9, 10, 0, 1), caplen_cut=10,
                          info="PLink (header cut by the capture, 10 of 24 bytes)"))
    out.append(plink_case("header cut and snapped", request(9, 10, 0, 1), cut=20, caplen_cut=3,
                          reason="plink_truncated_header"))
    # Not PLink: PLink bytes to another port, from 9200 to another port, and in TCP to 9200.
    like = header_bytes(request(1, 2, 0, 1))
    out.append(Case("udp to 9201", ipv4_udp_frame(like, 30000, 9201, None, A, B)))
    out.append(Case("udp from 9200 to 40000", ipv4_udp_frame(like, PLINK_PORT, 40000, None, A,
                                                             B)))
    out.append(Case("tcp to 9200", udp_as_tcp(ipv4_udp_frame(like, 40000, PLINK_PORT, None, A,
                                                             B))))
    return out


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------

def new_row():
    return {"requests": 0, "replies": 0, "rtts": [], "unmatched_replies": 0,
            "probe_epochs": set(), "chunk_packets": 0, "chunk_steps": [0] * STEPS,
            "chunk_bytes": 0, "chunks": set(), "chunk_epochs": set(), "chunk_acks": 0}


def model(all_cases):
    """The per-pair summary the spec implies, from the values encoded and the pcap's times."""
    pairs, pending = {}, {}
    for index, case in enumerate(all_cases):  # write_pcap's times grow with the index
        if not case.accounted():
            continue
        h = case.h
        if h["type"] == CHUNK:
            row = pairs.setdefault((h["sender"], h["receiver"]), new_row())
            row["chunk_packets"] += 1
            row["chunk_steps"][h["flags"] & (STEPS - 1)] += 1
            row["chunk_bytes"] += case.payload_len()
            row["chunks"].add((h["epoch"], h["seq"]))
            row["chunk_epochs"].add(h["epoch"])
            continue
        if h["type"] == ACK:  # with the chunks it acknowledges: (its receiver, its sender)
            pairs.setdefault((h["receiver"], h["sender"]), new_row())["chunk_acks"] += 1
            continue
        key = ((h["receiver"], h["sender"]) if h["type"] == REPLY
               else (h["sender"], h["receiver"]))
        row = pairs.setdefault(key, new_row())
        row["probe_epochs"].add(h["epoch"])
        waiting = pending.setdefault((key, h["epoch"], h["seq"]), [])
        if h["type"] == REQUEST:
            row["requests"] += 1
            waiting.append(frame_ns(index))
            continue
        row["replies"] += 1
        if waiting:
            row["rtts"].append(frame_ns(index) - waiting.pop(0))
        else:
            row["unmatched_replies"] += 1
    return pairs


def micros(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def model_values(row):
    """A row's summary: {column: value} as the analyzer's JSON ("probes" and "chunks") has it."""
    rtts, probe_epochs, chunk_epochs = row["rtts"], row["probe_epochs"], row["chunk_epochs"]
    probes = {"requests": row["requests"], "replies": row["replies"], "matched": len(rtts),
              "unanswered": row["requests"] - len(rtts),
              "unmatched_replies": row["unmatched_replies"], "epochs": len(probe_epochs)}
    if rtts:
        probes.update(rtt_min_ns=min(rtts), rtt_mean_ns=sum(rtts) // len(rtts),
                      rtt_max_ns=max(rtts))
    if probe_epochs:
        probes.update(epoch_min=min(probe_epochs), epoch_max=max(probe_epochs))
    chunks = {"packets": row["chunk_packets"], "step_packets": list(row["chunk_steps"]),
              "bytes": row["chunk_bytes"], "chunk_ids": len(row["chunks"]),
              "acks": row["chunk_acks"], "epochs": len(chunk_epochs)}
    if chunk_epochs:
        chunks.update(epoch_min=min(chunk_epochs), epoch_max=max(chunk_epochs))
    return {"probes": probes, "chunks": chunks}


def model_csv(row):
    """A row's plink.csv columns as the analyzer must write them."""
    v = model_values(row)
    p, c = v["probes"], v["chunks"]
    out = {k: p[k] for k in ("requests", "replies", "matched", "unanswered",
                             "unmatched_replies")}
    for k in ("min", "mean", "max"):
        out["rtt_%s_us" % k] = micros(p["rtt_%s_ns" % k]) if "rtt_min_ns" in p else ""
    for kind, d in (("probe", p), ("chunk", c)):
        out["%s_epochs" % kind] = d["epochs"]
        out["%s_epoch_min" % kind] = d.get("epoch_min", "")
        out["%s_epoch_max" % kind] = d.get("epoch_max", "")
    out.update(chunk_packets=c["packets"], chunk_bytes=c["bytes"], chunk_ids=c["chunk_ids"],
               chunk_acks=c["acks"])
    for step, n in enumerate(c["step_packets"]):
        out["chunk_step%d_packets" % step] = n
    return {k: str(val) for k, val in out.items()}


def check_summary(all_cases, out_dir):
    errors = []
    pairs = model(all_cases)
    with open(os.path.join(out_dir, "plink.csv"), newline="") as f:
        rows = {(int(r["sender"]), int(r["receiver"])): r for r in csv.DictReader(f)}
    if sorted(rows) != sorted(pairs):
        errors.append("plink.csv: pairs %s, expected %s" % (sorted(rows), sorted(pairs)))
    plink = summary_json(out_dir, PLINK)
    by_pair = {(p["sender"], p["receiver"]): p for p in plink.get("pairs", [])}
    everything = new_row()
    for key, row in sorted(pairs.items()):
        for column, value in model_csv(row).items():
            if rows.get(key, {}).get(column) != value:
                errors.append("plink.csv %s: %s is %r, expected %r" % (
                    key, column, rows.get(key, {}).get(column), value))
        want = dict(sender=key[0], receiver=key[1], **model_values(row))
        if by_pair.get(key) != want:
            errors.append("summary.json pair %s: %r, expected %r" % (key, by_pair.get(key), want))
        for k, v in row.items():
            if k == "chunk_steps":
                everything[k] = [a + b for a, b in zip(everything[k], v)]
            else:
                everything[k] = (everything[k] + v if isinstance(v, (int, list))
                                 else everything[k] | v)
    # Chunk ids are per pair: every pair's distinct ones, added up.
    everything["chunks"] = {(k, c) for k, row in pairs.items() for c in row["chunks"]}
    if plink.get("all") != model_values(everything):
        errors.append("summary.json all: %r, expected %r" % (plink.get("all"),
                                                            model_values(everything)))
    errors += check_scope(PLINK, plink, all_cases)
    line = "  plink: udp port %d, %d pair(s), %d probe(s), %d chunk packet(s), %d chunk ack(s)" % (
        PLINK_PORT, len(pairs), everything["requests"] + everything["replies"],
        everything["chunk_packets"], everything["chunk_acks"])
    errors += check_text_summary(out_dir, line)
    return errors


def moved_cases():
    """To port 9300 once --plink-port and swemu_plink.udp_port moved there; 9200 is then plain
    UDP."""
    return [
        plink_case("request to 9300", request(1, 2, 3, 4, 5), dport=9300,
                   info="PLink probe request 1 -> 2 epoch 3 seq 4 stamp 5"),
        plink_case("chunk to 9300", chunk(1, 2, 3, 4, 0, 8, flags=1), payload=8, dport=9300),
        plink_case("ack to 9300", ack(chunk(1, 2, 3, 4, 0, 8, flags=1)), dport=9300,
                   info="PLink chunk ack 2 -> 1 epoch 3 id 4 offset 0 size 8 step 1"),
        Case("request to 9200 after the move", ipv4_udp_frame(header_bytes(request(1, 2, 0, 1)),
                                                              30000, PLINK_PORT, None, A, B)),
    ]


if __name__ == "__main__":
    sys.exit(round_trip_lib.main(__doc__, PLINK, cases, check_summary, moved_cases))
