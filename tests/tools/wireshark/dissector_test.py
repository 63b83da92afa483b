#!/usr/bin/python3
"""Tests tools/wireshark/swemu.lua, the Wireshark dissector of swemu's ATP header.

Usage: dissector_test.py PATH/TO/swemu.lua [OUT_DIR]

Writes its own pcaps (Ethernet/IPv4/UDP frames with ATP payloads whose header values cover every
field, every flag and the edge cases), decodes them with tshark and the Lua script, and compares
every field of every frame with what it wrote. Headers and elements cut short in the datagram
must be flagged truncated (malformed), ones cut only by the capture's snap length noted (not
malformed), a bad version warned about, datagrams to other ports and non-UDP frames left alone,
and the udp_port preference (swemu_atp.udp_port) must move the protocol, also onto GOAT's port while
GOAT moves onto ATP's. Exits 0 on success; otherwise prints each failure and exits 1 (2 when
tshark is missing or fails). OUT_DIR (default: a temporary directory) keeps the pcaps and
tshark's outputs.
"""

import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

ATP_PORT = 9000
ATP_HEADER_LEN = 16
PROTO = "swemu_atp"  # the protocol's filter name; "atp" is Wireshark's AppleTalk ATP
# swemu-analyze's malformed reasons for ATP, each with the words of the dissector's expert message
# (dissector_vs_analyzer.py checks them, as the *_round_trip.py files' for their protocols).
REASON_WORDS = {
    "atp_truncated_header": "truncated: ATP header",
    "atp_truncated_elements": "elements need",
    "atp_bad_version": "unsupported ATP version",
}

FLAGS = ["param", "resend", "edge", "ecn", "overflow", "float"]  # bits 5..0
FLAG_BIT = {name: 1 << (5 - i) for i, name in enumerate(FLAGS)}

# Header fields in wire order: (filter name, size in bytes, key in a header dict).
# atp.version and atp.flags share byte 0.
HEADER_FIELDS = [
    ("atp.worker_id", 1, "worker_id"),
    ("atp.fan_in0", 1, "fan_in0"),
    ("atp.fan_in1", 1, "fan_in1"),
    ("atp.job_id", 2, "job_id"),
    ("atp.num_elements", 2, "num_elements"),
    ("atp.seq", 4, "seq"),
    ("atp.bitmap", 4, "bitmap"),
]
FIELDS = (["frame.number", "udp.dstport", "atp.version", "atp.flags"] +
          ["atp.flags." + name for name in FLAGS] +
          [name for name, _, _ in HEADER_FIELDS] +
          ["atp.element", "atp.element_float", "_ws.expert.message", "_ws.malformed",
           "_ws.col.Info"])
AGGREGATOR = "|"  # between the values of a repeated field (expert messages contain commas)


class Failure(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Building frames and pcaps
# --------------------------------------------------------------------------------------------

def ones_complement_sum(data, total=0):
    if len(data) % 2:
        data += b"\0"
    for (word,) in struct.iter_unpack("!H", data):
        total += word
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def checksum(data, total=0):
    return ~ones_complement_sum(data, total) & 0xFFFF


def ipv4_udp_frame(payload, sport, dport, vlan=None, src_ip=(10, 0, 0, 1), dst_ip=(10, 0, 0, 2),
                   tos=0x02):
    """Ethernet | [802.1Q] | IPv4 | UDP | payload, lengths and checksums right, padded to 60."""
    src, dst = bytes(src_ip), bytes(dst_ip)
    udp_len = 8 + len(payload)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    udp_csum = checksum(udp, ones_complement_sum(pseudo)) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", udp_csum) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, 0x1234, 0x4000, 64, 17, 0,
                     src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    eth = bytes.fromhex("02000000000b") + bytes.fromhex("02000000000a")
    if vlan is not None:
        eth += struct.pack("!HH", 0x8100, vlan)
    frame = eth + struct.pack("!H", 0x0800) + ip + udp
    return frame + bytes(max(0, 60 - len(frame)))


def udp_as_tcp(frame, tos=0):
    """The same frame with a 20-byte TCP header (SYN, no options) instead of the UDP one."""
    ip_at, payload = 14, frame[14 + 20 + 8:]
    src, dst = frame[ip_at + 12:ip_at + 16], frame[ip_at + 16:ip_at + 20]
    sport, dport = struct.unpack("!HH", frame[ip_at + 20:ip_at + 24])
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, 0x02, 65535, 0, 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(tcp, ones_complement_sum(pseudo))) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return frame[:14] + ip + tcp


def write_pcap(path, frames):
    """frames: list of (bytes, caplen or None). Nanosecond pcap, Ethernet link type."""
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i, (frame, caplen) in enumerate(frames):
            caplen = len(frame) if caplen is None else caplen
            out.write(struct.pack("<IIII", 1700000000 + i, 1000 * i, caplen, len(frame)))
            out.write(frame[:caplen])


def atp_payload(h, elements=()):
    ver_flags = ((h["version"] & 3) << 6) | (h["flags"] & 0x3F)
    data = struct.pack("!BBBBHHII", ver_flags, h["worker_id"], h["fan_in0"], h["fan_in1"],
                       h["job_id"], h["num_elements"], h["seq"], h["bitmap"])
    fmt = "!f" if h["flags"] & FLAG_BIT["float"] else "!i"
    return data + b"".join(struct.pack(fmt, e) for e in elements)


# --------------------------------------------------------------------------------------------
# What the dissector must show: decoded from the bytes it can see
# --------------------------------------------------------------------------------------------

class Expect:
    """What a correct dissector shows for an ATP datagram."""

    def __init__(self, fields, truncated, snapped, bad_version):
        self.fields = fields            # filter name -> list of values
        self.truncated = truncated      # the datagram ends inside the header or elements
        self.snapped = snapped          # only the capture ends early (not malformed)
        self.bad_version = bad_version  # a whole header with a version other than 1


def expected_fields(atp_bytes, wire_len=None):
    """Decodes the captured ATP bytes as the dissector must: each header field whose bytes were
    captured, the whole captured elements once the header was, the flags. wire_len: the ATP
    bytes on the wire (the UDP length; default: all were captured). A datagram shorter on the
    wire than its header or elements is truncated; a whole one cut by the capture is snapped."""
    wire_len = len(atp_bytes) if wire_len is None else wire_len
    exp = {name: [] for name in FIELDS}
    truncated = snapped = bad_version = False
    if len(atp_bytes) >= 1:
        b = atp_bytes[0]
        exp["atp.version"] = [b >> 6]
        exp["atp.flags"] = [b & 0x3F]
        for name in FLAGS:
            exp["atp.flags." + name] = [1 if b & FLAG_BIT[name] else 0]
    offset = 1
    values = {}
    for name, size, key in HEADER_FIELDS:
        if len(atp_bytes) >= offset + size:
            values[key] = int.from_bytes(atp_bytes[offset:offset + size], "big")
            exp[name] = [values[key]]
        offset += size
    if len(atp_bytes) < ATP_HEADER_LEN:
        truncated = wire_len < ATP_HEADER_LEN
        snapped = not truncated
    else:
        n = values["num_elements"]
        whole = min(n, (len(atp_bytes) - ATP_HEADER_LEN) // 4)
        truncated = wire_len < ATP_HEADER_LEN + 4 * n
        snapped = not truncated and whole < n
        bad_version = (atp_bytes[0] >> 6) != 1
        is_float = atp_bytes[0] & FLAG_BIT["float"]
        body = atp_bytes[ATP_HEADER_LEN:ATP_HEADER_LEN + 4 * whole]
        fmt, key = ("!f", "atp.element_float") if is_float else ("!i", "atp.element")
        exp[key] = [v for (v,) in struct.iter_unpack(fmt, body)]
    return Expect(exp, truncated, snapped, bad_version)


def check_reference(name, h, elements, payload):
    """expected_fields() of a whole packet gives back the values it was built from (so the
    comparison is with the values written, not only with a second decoder)."""
    expect = expected_fields(payload)
    want = {"atp.version": [h["version"]], "atp.flags": [h["flags"]]}
    want.update({field: [h[key]] for field, _, key in HEADER_FIELDS})
    for flag in FLAGS:
        want["atp.flags." + flag] = [1 if h["flags"] & FLAG_BIT[flag] else 0]
    is_float = h["flags"] & FLAG_BIT["float"]
    want["atp.element_float" if is_float else "atp.element"] = list(elements)
    for field, values in want.items():
        got = expect.fields[field]
        same = (len(got) == len(values) and
                all(same_float(g, w) if is_float and field == "atp.element_float" else g == w
                    for g, w in zip(got, values)))
        if not same:
            raise Failure("test bug: case %r, %s decodes to %r, built from %r" % (
                name, field, got[:8], values[:8]))
    if expect.truncated or expect.snapped or expect.bad_version != (h["version"] != 1):
        raise Failure("test bug: case %r: truncated/bad-version reference is wrong" % name)


class Packet:
    def __init__(self, name, payload, dport=ATP_PORT, sport=ATP_PORT, caplen=None, vlan=None,
                 is_atp=True, info=None, frame=None):
        self.name = name
        self.frame = frame if frame is not None else ipv4_udp_frame(payload, sport, dport,
                                                                    vlan=vlan)
        self.caplen = caplen
        self.is_atp = is_atp
        self.info = info  # exact Info column expected, if given
        header_at = 14 + (4 if vlan is not None else 0) + 20 + 8
        visible = len(self.frame) if caplen is None else caplen
        self.atp_bytes = payload[:max(0, visible - header_at)]  # captured
        self.atp_wire_len = len(payload)


def header(**kw):
    h = dict(version=1, flags=0, worker_id=2, fan_in0=4, fan_in1=8, job_id=1, num_elements=0,
             seq=64, bitmap=0x5)
    h.update(kw)
    return h


def atp_packets():
    pk = []

    def add(name, h, elements=None, cut=None, **kw):
        if elements is None:
            elements = list(range(1, h["num_elements"] + 1))
        payload = atp_payload(h, elements)
        if cut is None and "caplen" not in kw:
            check_reference(name, h, elements, payload)
        if cut is not None:
            payload = payload[:cut]
        pk.append(Packet(name, payload, **kw))

    # The Info example of the brief, exactly.
    add("info example", header(flags=FLAG_BIT["resend"], num_elements=1),
        info="ATP grad job 1 seq 64 w2 bitmap 0x5 [resend]")
    add("param info", header(flags=FLAG_BIT["param"] | FLAG_BIT["float"], worker_id=0,
                             num_elements=1, bitmap=0xF), elements=[0.5],
        info="ATP param job 1 seq 64 bitmap 0xf [float]")
    # Every flag alone, none, all.
    for i, name in enumerate(FLAGS):
        n = 1 if name == "float" else 2
        elements = [1.25] if name == "float" else [i, -i]
        add("flag " + name, header(flags=FLAG_BIT[name], worker_id=i, num_elements=n,
                                   seq=1000 + i), elements)
    add("no flags", header(flags=0, num_elements=1))
    add("all flags", header(flags=0x3F, num_elements=2), elements=[-2.5, 1e6],
        info="ATP param job 1 seq 64 bitmap 0x5 [resend,edge,ecn,overflow,float]")
    # Field extremes.
    add("worker 0", header(worker_id=0, num_elements=1))
    add("worker 31", header(worker_id=31, num_elements=1))
    add("worker 255 fan-ins 0/255", header(worker_id=255, fan_in0=0, fan_in1=255))
    add("fan-ins 255/0", header(fan_in0=255, fan_in1=0, num_elements=1))
    add("job 1", header(job_id=1, num_elements=1))
    add("job 65535", header(job_id=65535, num_elements=1))
    add("job 0", header(job_id=0, num_elements=1))
    add("seq 0", header(seq=0, num_elements=1))
    add("seq max", header(seq=0xFFFFFFFF, num_elements=1))
    add("bitmap 0", header(bitmap=0, num_elements=1))
    add("bitmap max", header(bitmap=0xFFFFFFFF, num_elements=1),
        info="ATP grad job 1 seq 64 w2 bitmap 0xffffffff")
    add("bitmap high bit", header(bitmap=0x80000000, num_elements=1))
    # Element counts and values.
    add("0 elements", header(num_elements=0))
    add("1 element", header(num_elements=1), elements=[-1])
    ints = [-2**31, 2**31 - 1, 0, -1, 1] + [(i * 2654435761) % 2**32 - 2**31 for i in range(59)]
    add("64 int elements", header(num_elements=64), elements=ints)
    floats = [0.0, -0.0, 1.5, -3.25e-07, 3.4028234663852886e38, -1.17549435e-38, 1e-45,
              float("inf"), float("-inf"), float("nan")]
    floats += [(i - 27) * 0.125 for i in range(64 - len(floats))]
    add("64 float elements", header(flags=FLAG_BIT["float"], num_elements=64), elements=floats)
    add("param 64 floats", header(flags=FLAG_BIT["param"] | FLAG_BIT["float"] | FLAG_BIT["ecn"],
                                  worker_id=0, num_elements=64, bitmap=0xF),
        elements=[i * 0.5 for i in range(64)])
    # Truncated headers (the UDP and IP lengths say so; Ethernet pads the short frames).
    for cut in (1, 6, 10, 15):
        add("header cut to %d bytes" % cut, header(flags=FLAG_BIT["resend"], num_elements=4),
            cut=cut)
    # Truncated elements: 64 announced, 5 and a half there; 2 announced, none there.
    add("elements cut", header(num_elements=64), cut=ATP_HEADER_LEN + 22)
    add("elements missing", header(flags=FLAG_BIT["float"], num_elements=2), elements=[1.0, 2.0],
        cut=ATP_HEADER_LEN, info="ATP grad job 1 seq 64 w2 bitmap 0x5 [float] [truncated]")
    # Cut by the capture (snaplen), not in the packet: decoded as far as captured, a note, not
    # malformed. Then cut by both.
    add("snapped elements", header(num_elements=64), caplen=14 + 20 + 8 + ATP_HEADER_LEN + 42,
        info="ATP grad job 1 seq 64 w2 bitmap 0x5 [snapped]")
    add("snapped in header", header(num_elements=64), caplen=14 + 20 + 8 + 7,
        info="ATP (header cut by the capture, 7 of 16 bytes)")
    add("snapped and elements cut", header(num_elements=64), cut=ATP_HEADER_LEN + 40,
        caplen=14 + 20 + 8 + ATP_HEADER_LEN + 10)
    add("snapped and header cut", header(num_elements=4), cut=12, caplen=14 + 20 + 8 + 5)
    # Versions other than 1: decoded, and warned about.
    for version in (0, 2, 3):
        add("version %d" % version, header(version=version, num_elements=1))
    # More bytes than the elements (a note, not an error).
    pk.append(Packet("trailing bytes", atp_payload(header(num_elements=1), [7]) + b"\xAA\xBB"))
    # Behind a VLAN tag.
    add("vlan tagged", header(num_elements=2), vlan=100)
    # Not ATP: another destination port, ATP's port only as the source, an empty payload.
    atp_like = atp_payload(header(num_elements=1), [5])
    pk.append(Packet("udp to 9001", atp_like, dport=9001, sport=40000, is_atp=False))
    pk.append(Packet("udp from 9000 to 40001", atp_like, dport=40001, sport=ATP_PORT,
                     is_atp=False))
    pk.append(Packet("empty udp from 9000 to 40002", b"", dport=40002, is_atp=False))
    # Not UDP: an ARP request, and TCP to port 9000 carrying ATP-like bytes.
    arp = (bytes.fromhex("ffffffffffff02000000000a0806") +
           bytes.fromhex("0001080006040001") + bytes.fromhex("02000000000a0a000001") +
           bytes(6) + bytes([10, 0, 0, 2]))
    pk.append(Packet("arp", b"", frame=arp + bytes(60 - len(arp)), is_atp=False))
    tcp = udp_as_tcp(ipv4_udp_frame(atp_like, 40004, ATP_PORT))
    pk.append(Packet("tcp to 9000", b"", frame=tcp, is_atp=False))
    # An empty datagram to the ATP port: a header of 0 bytes, truncated.
    pk.append(Packet("empty udp to 9000", b"", sport=40003,
                     info="ATP (truncated header, 0 of 16 bytes)"))
    # Random bytes to the ATP port: whatever they say, no Lua error, fields as the bytes say.
    rng = random.Random(20240607)
    for i in range(24):
        length = rng.choice([rng.randint(1, 20), rng.randint(16, 90)])
        data = bytes(rng.getrandbits(8) for _ in range(length))
        if i % 3 == 0 and length >= 8:  # a plausible element count, so elements get decoded
            data = data[:6] + struct.pack("!H", rng.randint(0, 20)) + data[8:]
        pk.append(Packet("random %d (%d bytes)" % (i, length), data))
    return pk


# --------------------------------------------------------------------------------------------
# Running tshark and comparing
# --------------------------------------------------------------------------------------------

def find_tshark():
    path = shutil.which("tshark") or ("/usr/bin/tshark" if os.path.exists("/usr/bin/tshark")
                                      else None)
    if path is None:
        print("FAIL: tshark not found (install the tshark package: apt-get install tshark); "
              "this test does not skip without it.", file=sys.stderr)
        sys.exit(2)
    return path


def run_tshark(tshark, lua, pcap, extra, out_dir, tag):
    cmd = [tshark, "-n", "-X", "lua_script:" + lua] + extra + ["-r", pcap]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=300)
    with open(os.path.join(out_dir, tag + ".out"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(out_dir, tag + ".err"), "w") as f:
        f.write(proc.stderr)
    problems = []
    if proc.returncode != 0:
        problems.append("tshark exited with %d: %s" % (proc.returncode, " ".join(cmd)))
    for line in proc.stderr.splitlines():
        if "lua" in line.lower() or "error" in line.lower() or "invalid" in line.lower():
            problems.append("tshark stderr: " + line)
    for line in proc.stdout.splitlines():
        if "Lua Error" in line or "dissector error" in line:
            problems.append("tshark output: " + line.strip())
    if problems:
        raise Failure("\n  ".join(["%s:" % tag] + problems[:20]))
    return proc.stdout


def fields_run(tshark, lua, pcap, out_dir, tag, extra=()):
    args = list(extra) + ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
                          "-E", "aggregator=" + AGGREGATOR]
    for name in FIELDS:
        args += ["-e", name]
    rows = {}
    for line in run_tshark(tshark, lua, pcap, args, out_dir, tag).splitlines():
        cells = line.split("\t")
        if len(cells) != len(FIELDS):
            raise Failure("%s: expected %d columns, got %d: %r" % (tag, len(FIELDS), len(cells),
                                                                  line))
        rows[int(cells[0])] = dict(zip(FIELDS, cells))
    return rows


def parse_number(text, is_float):
    text = text.strip()
    if is_float:
        return float(text)  # "inf", "-inf", "nan", "-nan" included
    if text in ("True", "False"):  # booleans in newer tsharks
        return 1 if text == "True" else 0
    return int(text, 0)  # decimal, or "0x..."


def same_float(got, want):
    want = struct.unpack("!f", struct.pack("!f", want))[0]  # the float32 that was sent
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want) or want == 0.0:
        return got == want
    return abs(got - want) <= 1e-5 * abs(want) or abs(got - want) <= 1e-44  # 6 digits printed


def check_packet(number, packet, row):
    """Differences between tshark's row and what the packet holds, as messages."""
    errors = []
    where = "frame %d (%s)" % (number, packet.name)
    messages = [m for m in row["_ws.expert.message"].split(AGGREGATOR) if m]
    if not packet.is_atp:
        for name in FIELDS:
            if name.startswith("atp.") and row[name]:
                errors.append("%s: not ATP, but %s = %r" % (where, name, row[name]))
        if row["_ws.col.Info"].startswith("ATP"):
            errors.append("%s: not ATP, but Info is %r" % (where, row["_ws.col.Info"]))
        ours = [m for m in messages if "ATP" in m or "truncated" in m or "version" in m]
        if ours or row["_ws.malformed"]:
            errors.append("%s: not ATP, but flagged: %r" % (where, messages))
        return errors

    expect = expected_fields(packet.atp_bytes, packet.atp_wire_len)
    exp, truncated, bad_version = expect.fields, expect.truncated, expect.bad_version
    for name in FIELDS:
        if not name.startswith("atp."):
            continue
        is_float = name == "atp.element_float"
        cell = row[name]
        try:
            got = [parse_number(v, is_float) for v in cell.split(AGGREGATOR)] if cell else []
        except ValueError:
            errors.append("%s: %s = %r is not a number" % (where, name, cell))
            continue
        want = exp[name]
        if len(got) != len(want):
            errors.append("%s: %s has %d values %s, expected %d %s" % (
                where, name, len(got), cell[:80], len(want), want[:8]))
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            if not (same_float(g, w) if is_float else g == w):
                errors.append("%s: %s[%d] = %r, expected %r" % (where, name, i, g, w))
                break
    has_truncated = any("truncated" in m for m in messages)
    if has_truncated != truncated:
        errors.append("%s: truncated %s, but expert messages are %r" % (
            where, "expected" if truncated else "not expected", messages))
    has_snapped = any(m.startswith("snapped") for m in messages)
    if has_snapped != expect.snapped:
        errors.append("%s: cut-by-capture note %s, but expert messages are %r" % (
            where, "expected" if expect.snapped else "not expected", messages))
    has_version = any("version" in m for m in messages)
    if has_version != bad_version:
        errors.append("%s: bad-version warning %s, but expert messages are %r" % (
            where, "expected" if bad_version else "not expected", messages))
    # Both problems are in the expert group Malformed, which also sets _ws.malformed; a frame
    # cut by the capture only is not malformed.
    if bool(row["_ws.malformed"]) != (truncated or bad_version):
        errors.append("%s: _ws.malformed is %r, expected %s" % (
            where, row["_ws.malformed"], "set" if truncated or bad_version else "empty"))
    info = row["_ws.col.Info"]
    if packet.info is not None and info != packet.info:
        errors.append("%s: Info is %r, expected %r" % (where, info, packet.info))
    if not info.startswith("ATP"):
        errors.append("%s: Info is %r, expected ATP ..." % (where, info))
    if truncated and "truncated" not in info:
        errors.append("%s: Info %r does not say truncated" % (where, info))
    if expect.snapped and not ("snapped" in info or "capture" in info):
        errors.append("%s: Info %r does not say cut by the capture" % (where, info))
    return errors


def check_run(packets, rows, tag):
    errors = []
    if len(rows) != len(packets):
        errors.append("%s: tshark printed %d frames, the pcap has %d" % (tag, len(rows),
                                                                          len(packets)))
    for number, packet in enumerate(packets, start=1):
        if number not in rows:
            errors.append("%s: frame %d (%s) missing from tshark's output" % (tag, number,
                                                                               packet.name))
            continue
        errors += check_packet(number, packet, rows[number])
    return errors


def check_port_swap(tshark, lua, out_dir):
    goat = bytes([0x10]) + bytes(27)  # a GOAT header (version 1, gradient), no elements
    frames = [ipv4_udp_frame(atp_payload(header(num_elements=1, seq=5), [1]), 40000, 9100),
              ipv4_udp_frame(goat, 40000, 9000)]
    pcap = os.path.join(out_dir, "port_swap.pcap")
    write_pcap(pcap, [(f, None) for f in frames])
    prefs = [["-o", PROTO + ".udp_port:9100"], ["-o", "swemu_goat.udp_port:9000"]]
    errors = []
    for tag, order in (("swap_atp_first", prefs), ("swap_goat_first", prefs[::-1])):
        extra = [arg for pref in order for arg in pref]
        extra += ["-T", "fields", "-E", "separator=/t", "-e", "atp.seq", "-e", "goat.version"]
        rows = [line.split("\t") for line in
                run_tshark(tshark, lua, pcap, extra, out_dir, tag).splitlines()]
        if rows != [["5", ""], ["", "1"]]:
            errors.append("%s: expected ATP seq 5 to 9100 and GOAT version 1 to 9000, got %r"
                          % (tag, rows))
    return errors


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    lua = os.path.abspath(argv[1])
    if not os.path.isfile(lua):
        print("FAIL: no Lua script at %s" % lua, file=sys.stderr)
        return 2
    out_dir = argv[2] if len(argv) == 3 else tempfile.mkdtemp(prefix="swemu_dissector_")
    os.makedirs(out_dir, exist_ok=True)
    tshark = find_tshark()

    errors = []
    try:
        # 1. Every field of every packet, on the default port.
        packets = atp_packets()
        pcap = os.path.join(out_dir, "atp_cases.pcap")
        write_pcap(pcap, [(p.frame, p.caplen) for p in packets])
        errors += check_run(packets, fields_run(tshark, lua, pcap, out_dir, "fields"), "fields")
        # The full tree of every packet renders without a Lua error.
        run_tshark(tshark, lua, pcap, ["-V"], out_dir, "tree")

        # 2. The preference moves the protocol: 9100 decoded, 9000 no longer.
        moved = [
            Packet("to 9100", atp_payload(header(num_elements=2, seq=7), [3, 4]), dport=9100,
                   sport=9100),
            Packet("to 9000 after the move", atp_payload(header(num_elements=1), [1]),
                   is_atp=False),
            Packet("truncated to 9100", atp_payload(header(num_elements=4), [1, 2, 3, 4])[:20],
                   dport=9100),
            Packet("empty to 9100", b"", dport=9100, sport=40000),
            Packet("empty to 9000 after the move", b"", sport=40000, is_atp=False),
        ]
        pcap = os.path.join(out_dir, "atp_port9100.pcap")
        write_pcap(pcap, [(p.frame, p.caplen) for p in moved])
        rows = fields_run(tshark, lua, pcap, out_dir, "port9100",
                          extra=["-o", PROTO + ".udp_port:9100"])
        errors += check_run(moved, rows, "port9100")
        # And without the preference, 9100 is not ATP.
        rows = fields_run(tshark, lua, pcap, out_dir, "port9100_default")
        if any(rows.get(1, {}).get(name) for name in FIELDS if name.startswith("atp.")):
            errors.append("port9100_default: frame 1 to 9100 decoded as ATP without the "
                          "preference")
        if not rows.get(2, {}).get("atp.seq"):
            errors.append("port9100_default: frame 2 to 9000 not decoded as ATP")

        # 3. Two protocols trading ports (ATP onto GOAT's 9100, GOAT onto ATP's 9000), the
        # preferences given in either order: each port goes to the protocol moved onto it.
        errors += check_port_swap(tshark, lua, out_dir)
    except Failure as failure:
        errors.append(str(failure))
    except subprocess.TimeoutExpired as timeout:
        errors.append("tshark timed out: %s" % timeout)

    if errors:
        print("FAIL: %d problem(s) (outputs in %s):" % (len(errors), out_dir), file=sys.stderr)
        for e in errors[:50]:
            print("  " + e, file=sys.stderr)
        return 1
    print("PASS: %d cases and %d preference cases agree with tshark (outputs in %s)"
          % (len(packets), len(moved), out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
