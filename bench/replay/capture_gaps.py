#!/usr/bin/python3
"""Gaps between the frames of a capture (pcap or pcapng, micro- or nanosecond timestamps).

usage: capture_gaps.py FILE INTENDED_GAP_NS
Prints one line: frames, achieved pps over the first-to-last span, and the gap error
|gap - intended gap| in microseconds at p50, p99 and max (intended 0: the gaps themselves).
"""
import math
import struct
import sys


def pcap_times(data):
    magic = struct.unpack_from("<I", data, 0)[0]
    endian = "<"
    if magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
        magic = struct.unpack_from(">I", data, 0)[0]
    scale = 1 if magic == 0xA1B23C4D else 1000  # nanosecond or microsecond pcap
    times, at = [], 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from(endian + "IIII", data, at)
        times.append(sec * 1_000_000_000 + frac * scale)
        at += 16 + caplen
    return times


def pcapng_times(data):
    times, resolution, at, endian = [], [], 0, "<"
    while at + 12 <= len(data):
        if struct.unpack_from("<I", data, at)[0] == 0x0A0D0D0A:  # section header
            endian = "<" if struct.unpack_from("<I", data, at + 8)[0] == 0x1A2B3C4D else ">"
            resolution = []
        kind, length = struct.unpack_from(endian + "II", data, at)
        if kind == 1:  # interface description: look for if_tsresol (option 9)
            units_per_sec = 1_000_000
            opt = at + 16
            while opt + 4 <= at + length - 4:
                code, size = struct.unpack_from(endian + "HH", data, opt)
                if code == 0:
                    break
                if code == 9:
                    value = data[opt + 4]
                    units_per_sec = 2 ** (value & 0x7F) if value & 0x80 else 10 ** value
                opt += 4 + (size + 3) // 4 * 4
            resolution.append(units_per_sec)
        elif kind == 6:  # enhanced packet
            iface, high, low = struct.unpack_from(endian + "III", data, at + 8)
            units = (high << 32) | low
            times.append(units * 1_000_000_000 // resolution[iface])
        at += length
    return times


def main():
    path, intended = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        data = f.read()
    is_ng = len(data) >= 4 and struct.unpack_from("<I", data, 0)[0] == 0x0A0D0D0A
    times = pcapng_times(data) if is_ng else pcap_times(data)
    if len(times) < 2:
        print(len(times), "0", "-", "-", "-")
        return
    errors = sorted(abs((b - a) - intended) for a, b in zip(times, times[1:]))
    span = times[-1] - times[0]
    pps = (len(times) - 1) * 1e9 / span if span > 0 else float("inf")

    def rank(q):  # nearest rank: the smallest error with at least q of them at or below it
        return errors[max(0, math.ceil(q * len(errors)) - 1)]

    print(len(times), "%.0f" % pps, "%.2f" % (rank(0.5) / 1e3), "%.2f" % (rank(0.99) / 1e3),
          "%.2f" % (errors[-1] / 1e3))


main()
