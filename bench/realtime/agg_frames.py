#!/usr/bin/python3
"""Aggregation frames for compare.sh's atp and goat lines (net_pcap, replayed with infinite_rx).

usage: agg_frames.py atp IN.pcap OUT.pcap --seqs N --group-mac MAC --group-ip IP
       agg_frames.py goat OUT.pcap --job J --node N --fragments F --workers W --ps-mac MAC
                                   --ps-ip IP [--elements E]

A replayed pcap repeats its frames, so each workload returns the aggregators to where it found
them once per pass (else the second pass would find them full and drop every frame as a
duplicate):

- atp: keeps swemu-gen's gradients of seqs below N (its merged file: per seq every worker, in
  worker order) and after each seq's last gradient inserts the PS's parameter packet for it
  (docs/wire.md, "ATP": flags param | float, bitmap of the workers; to the job's group MAC and
  IP, from the PS), which frees the aggregator. Per seq: a claim and two adds (consumed), the
  gradient that completes it (sent on to the PS) and the parameter packet (sent on to the group).
- goat: gradients (docs/wire.md, "GOAT") for sub-models 0 and 1 of one job in turn, F fragments
  each, every worker in turn per fragment, round 0. The switch's goat_node entries give both
  sub-models the same slots (compare.sh's goat_*.cli / swx_goat_node.txt), so each claim takes a
  slot the other sub-model completed, as a new round takes its previous round's: a replayed pcap
  cannot advance the round. Per fragment: a claim and W-2 adds (consumed), one complete.

Frames carry UDP checksum 0, as the hosts send them. The output keeps the input's pcap format
(goat: nanosecond timestamps, 1 us apart; infinite_rx ignores them).
"""
import argparse
import struct
import sys

PCAP_NS = 0xA1B23C4D
PCAP_US = 0xA1B2C3D4
ATP_HDR = 42  # Ethernet + IPv4 (no options) + UDP
ATP_FLAG_PARAM = 0x20
ATP_FLAG_FLOAT = 0x01
ATP_VERSION = 1


def read_pcap(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (PCAP_NS, PCAP_US):
        sys.exit(f"agg_frames: {path}: not a little-endian pcap")
    header, off, frames = data[:24], 24, []
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
        frames.append(((sec, frac), data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return header, frames


def write_pcap(path, header, frames):
    with open(path, "wb") as f:
        f.write(header)
        for (sec, frac), frame in frames:
            f.write(struct.pack("<IIII", sec, frac, len(frame), len(frame)))
            f.write(frame)


def mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def ipv4(text):
    return bytes(int(x) for x in text.split("."))


def ipv4_checksum(header):
    s = sum(struct.unpack("!10H", header[:10] + b"\0\0" + header[12:20]))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp_frame(dst_mac, src_mac, src_ip, dst_ip, port, payload, tos=0):
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, 28 + len(payload), 0, 0x4000, 64, 17,
                               0, src_ip, dst_ip))
    ip[10:12] = struct.pack("!H", ipv4_checksum(ip))
    udp = struct.pack("!HHHH", port, port, 8 + len(payload), 0)
    return dst_mac + src_mac + b"\x08\x00" + bytes(ip) + udp + payload


def atp(args):
    header, frames = read_pcap(args.input)
    out, workers = [], {}
    seqs_seen = set()
    for ts, frame in frames:
        h = frame[ATP_HDR:ATP_HDR + 16]
        seq, bitmap = struct.unpack("!II", h[8:16])
        if seq >= args.seqs:
            continue
        if h[0] & ATP_FLAG_FLOAT:
            sys.exit(f"agg_frames: seq {seq} went as float32; pick another --seed for swemu-gen")
        out.append((ts, frame))
        fan_in = h[2]
        workers[seq] = workers.get(seq, 0) | bitmap
        if bin(workers[seq]).count("1") < fan_in:
            continue
        seqs_seen.add(seq)
        # The PS's answer: from the PS (the gradient's destination) to the job's group.
        param = bytearray(h)
        param[0] = (ATP_VERSION << 6) | ATP_FLAG_PARAM | ATP_FLAG_FLOAT
        param[1] = 0  # worker_id
        param[12:16] = struct.pack("!I", workers[seq])
        elements = struct.unpack("!H", h[6:8])[0]
        values = struct.pack(f"!{elements}f", *[0.25 * i for i in range(elements)])
        out.append((ts, udp_frame(mac(args.group_mac), frame[0:6], frame[30:34],
                                  ipv4(args.group_ip), 9000, bytes(param) + values)))
    if len(seqs_seen) != args.seqs:
        sys.exit(f"agg_frames: {args.input} completes {len(seqs_seen)} seqs, not {args.seqs}")
    write_pcap(args.output, header, out)
    print(f"agg_frames: {len(out)} frames, {args.seqs} seqs: "
          f"{len(out) - 2 * args.seqs} consumed, {args.seqs} completing, {args.seqs} parameter")


def goat(args):
    header = struct.pack("<IHHiIII", PCAP_NS, 2, 4, 0, 0, 262144, 1)
    out, t = [], 0
    for submodel in (0, 1):
        for fragment in range(args.fragments):
            for w in range(args.workers):
                goat_h = struct.pack("!BBHHHIIHHQ", 0x10, 0, args.job, args.node, submodel,
                                     fragment, 0, args.elements, 1, 1 << w)
                values = struct.pack(f"!{args.elements}i",
                                     *[1000 * w + i - 32 for i in range(args.elements)])
                src_mac = bytes([2, 0, 0, 0, 0, w])
                out.append(((1 + t // 10**9, t % 10**9),
                            udp_frame(mac(args.ps_mac), src_mac, bytes([10, 0, 0, w]),
                                      ipv4(args.ps_ip), 9100, goat_h + values)))
                t += 1000
    write_pcap(args.output, header, out)
    n = len(out) // args.workers
    print(f"agg_frames: {len(out)} frames: {len(out) - n} consumed, {n} completing")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="workload", required=True)
    a = sub.add_parser("atp")
    a.add_argument("input")
    a.add_argument("output")
    a.add_argument("--seqs", type=int, required=True)
    a.add_argument("--group-mac", required=True)
    a.add_argument("--group-ip", required=True)
    g = sub.add_parser("goat")
    g.add_argument("output")
    for opt in ("--job", "--node", "--fragments", "--workers"):
        g.add_argument(opt, type=int, required=True)
    g.add_argument("--ps-mac", required=True)
    g.add_argument("--ps-ip", required=True)
    g.add_argument("--elements", type=int, default=64)
    args = p.parse_args()
    atp(args) if args.workload == "atp" else goat(args)


if __name__ == "__main__":
    main()
