-- Wireshark/tshark dissector for swemu's program headers (docs/wire.md, pipeline/wire/).
--
--   tshark -X lua_script:tools/wireshark/swemu.lua -r FILE -T fields -e atp.seq
--   wireshark -X lua_script:tools/wireshark/swemu.lua FILE
--   (or copy this file into ~/.local/lib/wireshark/plugins/)
--
-- ATP: protocol "swemu_atp" (Wireshark's AppleTalk ATP owns "atp"), fields atp.*, on datagrams
-- to UDP port 9000; -o swemu_atp.udp_port:N moves it. Fields are listed in docs/wire.md.
-- PCN: protocol "swemu_pcn", fields pcn.start, pcn.ack, pcn.threshold (packets), pcn.ecn, read
-- from the IPv4 TOS byte of datagrams to or from UDP port 9700 only (elsewhere the same bits are
-- ordinary DSCP); -o swemu_pcn.udp_port:N moves it.
-- DLCP: protocol "swemu_dlcp", fields dlcp.* of its header on datagrams to UDP port 9800, and in
-- data packets dlcp.tag and dlcp.important from the IPv4 DSCP and ECN; -o swemu_dlcp.udp_port:N
-- moves it.
-- GOAT: protocol "swemu_goat", fields goat.* of its header and goat.element on datagrams to UDP
-- port 9100; -o swemu_goat.udp_port:N moves it.
-- PLink: protocol "swemu_plink", fields plink.* of its header (plink.step: a chunk's or chunk
-- ack's schedule step) and a chunk's payload as plink.payload on datagrams to UDP port 9200;
-- -o swemu_plink.udp_port:N moves it.
--
-- Layout: part 1 is a small framework (a protocol on a UDP-port preference, a cursor that reads
-- fixed big-endian fields and reports truncation, flag helpers); each header is then one section
-- that declares its fields and a dissect function and calls swemu.udp_protocol{...}. A new header
-- is one more such section at the end of the file.
--
-- Written for the Lua API of Wireshark 3.6/4.0 (Lua 5.2); it uses no bit library, so it also
-- loads under Lua 5.4 (Wireshark 4.2 and later).

------------------------------------------------------------------------------------------------
-- Part 1: the framework
------------------------------------------------------------------------------------------------

local swemu = { protocols = {} }

-- Bits of an unsigned integer without a bit library (works on Lua 5.2 and 5.4 numbers).
local function has_bit(value, mask)
  return math.floor(value / mask) % 2 == 1
end
swemu.has_bit = has_bit

-- Names of the set flags of `value`, in the order of `flags` ({ {mask, name}, ... }).
function swemu.flag_names(value, flags, skip)
  local names = {}
  for _, flag in ipairs(flags) do
    if has_bit(value, flag[1]) and not (skip and skip[flag[2]]) then
      names[#names + 1] = flag[2]
    end
  end
  return names
end

-- A cursor over a tvb: reads fixed-size big-endian fields one after the other, adding each to a
-- tree, and remembers why bytes ran out. Two lengths matter, as in Wireshark: `reported`, the
-- datagram's length on the wire (from the UDP length), and `captured`, what the capture kept
-- (less when the snap length cut the frame). A field past `reported` makes the cursor `short`
-- (the packet is malformed); one past `captured` only makes it `snapped`. Every read checks the
-- captured length first, so no input raises a Lua error.
local Cursor = {}
Cursor.__index = Cursor

function swemu.cursor(tvb, tree)
  return setmetatable({ tvb = tvb, tree = tree, offset = 0, captured = tvb:len(),
                        reported = tvb:reported_len(), short = false, snapped = false }, Cursor)
end

-- Captured bytes from the offset on.
function Cursor:remaining()
  return math.max(0, self.captured - self.offset)
end

-- Wire bytes from the offset on.
function Cursor:reported_remaining()
  return math.max(0, self.reported - self.offset)
end

-- Takes the next `size` bytes: returns them as a TvbRange, or nil (marking the cursor short or
-- snapped) when they were not captured. Advances either way, so the fields after a missing one
-- are looked for at their own offsets.
function Cursor:take(size)
  local finish = self.offset + size
  local range = nil
  if finish <= self.captured then
    range = self.tvb:range(self.offset, size)
  elseif finish > self.reported then
    self.short = true
  else
    self.snapped = true
  end
  self.offset = finish
  return range
end

-- Adds `fields` (one ProtoField or a list sharing the same bytes, e.g. bit fields of one byte)
-- over the next `size` bytes (1..4, or 8: the value is then a UInt64) to `tree` (default: the
-- cursor's) and returns the bytes' unsigned value and the last item added; nil when the bytes
-- were not captured (then nothing is added).
function Cursor:field(fields, size, tree)
  local range = self:take(size)
  if range == nil then return nil end
  tree = tree or self.tree
  if type(fields) ~= "table" then fields = { fields } end
  local item
  for _, f in ipairs(fields) do item = tree:add(f, range) end
  if size == 8 then return range:uint64(), item end
  return range:uint(), item
end

-- After the header: `n` 4-byte elements as `pf`, as many whole ones as were captured, in a
-- subtree labelled with `kind`; then the truncated expert when the datagram ends before the last
-- (the snapped one when only the capture does), and `trailing` (a ProtoExpert) on bytes after
-- them. Returns whether the elements were truncated and whether they were snapped.
function swemu.elements(ctx, n, pf, kind, trailing)
  local c = ctx.cursor
  local whole = math.min(n, math.floor(c:remaining() / 4))
  local wire_bytes = c:reported_remaining()
  if whole > 0 then
    local elements_tree = ctx.tree:add(c.tvb:range(c.offset, whole * 4),
                                       string.format("Elements (%d of %d, %s)", whole, n, kind))
    for _ = 1, whole do c:field(pf, 4, elements_tree) end
  end
  local short = wire_bytes < 4 * n
  local snapped = not short and whole < n
  if short then
    ctx.truncated(string.format("truncated: %d elements need %d bytes, %d present",
                                n, 4 * n, wire_bytes))
  elseif snapped then
    ctx.snapped(string.format("snapped: the capture kept %d of the %d elements", whole, n))
  end
  if wire_bytes > 4 * n then
    ctx.tree:add_proto_expert_info(trailing, string.format("%d bytes after the %d elements",
                                                           wire_bytes - 4 * n, n))
  end
  return short, snapped
end

-- Byte 0 as version << 4 | type (DLCP, GOAT, PLink): checks the version, then the type (known
-- when `type_names` has it), in swemu-analyze's order, and adds the expert of the first problem
-- (experts.bad_version or experts.bad_type). Returns whether both are known.
function swemu.known_version_type(ctx, experts, version, ptype, known_version, type_names)
  if version ~= known_version then
    ctx.tree:add_proto_expert_info(experts.bad_version, string.format(
      "unsupported %s version %d (this layout is version %d)", ctx.column, version,
      known_version))
    return false
  end
  if type_names[ptype] == nil then
    ctx.tree:add_proto_expert_info(experts.bad_type, string.format("unknown %s type %d",
                                                                   ctx.column, ptype))
    return false
  end
  return true
end

-- The TOS byte of the IPv4 header around the datagram being dissected: its value and its range,
-- or nil when the datagram is not over IPv4 (PCN's bits, DLCP's tag and importance).
local ip_dsfield = Field.new("ip.dsfield")
function swemu.ipv4_tos()
  local tos_fields = { ip_dsfield() }
  local tos_field = tos_fields[#tos_fields]  -- the innermost IPv4 header
  if tos_field == nil then return nil end
  return tos_field.value, tos_field.range
end

-- Registers a protocol carried in UDP datagrams to one destination port (or, with from_port, to
-- or from it), chosen by a preference (or by Decode As... on udp.port).
--
--   spec.name          field name prefix, e.g. "atp" (fields are "<name>.<field>")
--   spec.proto_name    the protocol's own filter name, which also names its preferences
--                      (default: spec.name; it must differ from every protocol Wireshark has)
--   spec.description   long name shown in the tree
--   spec.column        Protocol column text (default: upper-case name)
--   spec.default_port  default UDP port (the preference "<proto_name>.udp_port"; 0: none)
--   spec.header_len    bytes of the fixed header (for the message on an empty datagram); 0: the
--                      protocol has no header (PCN), an empty datagram is dissected too
--   spec.from_port     datagrams *from* the port are the protocol's too (PCN's ACK)
--   spec.fields        table of ProtoFields (any keys)
--   spec.experts       table of extra ProtoExperts (any keys)
--   spec.dissect(ctx)  decodes one datagram; ctx has tvb, pinfo, tree (the protocol's subtree),
--                      cursor (swemu.cursor over the tvb), proto, column (spec.column), to_port
--                      and from_port (the datagram goes to / comes from the protocol's port),
--                      truncated(message) and snapped(message), which add the standard experts
--                      below, and header_cut(), which after the header's fields reports a
--                      header cut short (returning true). tvb and cursor are nil for an empty
--                      datagram of a protocol without a header.
--
-- Every protocol gets three standard experts: "<name>.expert.truncated" (the datagram ends
-- inside the header or its payload: group Malformed, Warning), "<name>.expert.snapped" (the
-- capture's snap length cut it, the packet itself is whole: group Undecoded, Note) and
-- "<name>.expert.error" (a Lua error inside dissect, caught: the dissector never fails).
-- An empty datagram to the port is flagged truncated too (by the postdissector below), or, for a
-- protocol without a header, dissected there. Returns the Proto.
function swemu.udp_protocol(spec)
  local proto = Proto(spec.proto_name or spec.name, spec.description)
  local column = spec.column or string.upper(spec.name)

  local field_list = {}
  for _, f in pairs(spec.fields or {}) do field_list[#field_list + 1] = f end
  proto.fields = field_list

  local truncated_expert = ProtoExpert.new(spec.name .. ".expert.truncated", "truncated",
                                           expert.group.MALFORMED, expert.severity.WARN)
  local snapped_expert = ProtoExpert.new(spec.name .. ".expert.snapped", "cut by the capture",
                                         expert.group.UNDECODED, expert.severity.NOTE)
  local error_expert = ProtoExpert.new(spec.name .. ".expert.error", "dissector error",
                                       expert.group.MALFORMED, expert.severity.ERROR)
  local expert_list = { truncated_expert, snapped_expert, error_expert }
  for _, e in pairs(spec.experts or {}) do expert_list[#expert_list + 1] = e end
  proto.experts = expert_list

  proto.prefs.udp_port = Pref.uint("UDP port", spec.default_port,
                                   "UDP port of " .. column .. " datagrams (0: none)")

  local udp_table = DissectorTable.get("udp.port")
  local registered_port = nil
  local function register_port()
    local port = proto.prefs.udp_port
    if registered_port == port then return end
    if registered_port ~= nil and registered_port ~= 0 then
      udp_table:remove(registered_port, proto)
    end
    if port ~= 0 then udp_table:add(port, proto) end
    registered_port = port
  end
  proto.prefs_changed = register_port

  -- Adds the protocol's subtree and runs spec.dissect on a datagram to or from `port` (tvb nil:
  -- an empty one).
  local function dissect_datagram(tvb, pinfo, tree, port)
    pinfo.cols.protocol:set(column)
    local subtree
    if tvb ~= nil and tvb:len() > 0 then
      subtree = tree:add(proto, tvb:range(0, tvb:len()))
    else
      subtree = tree:add(proto)
    end
    local ctx = { tvb = tvb, pinfo = pinfo, tree = subtree, proto = proto, column = column,
                  cursor = tvb and swemu.cursor(tvb, subtree),
                  to_port = pinfo.dst_port == port, from_port = pinfo.src_port == port }
    function ctx.truncated(message)
      subtree:add_proto_expert_info(truncated_expert, message)
    end
    function ctx.snapped(message)
      subtree:add_proto_expert_info(snapped_expert, message)
    end
    -- The header's bytes ran out (the cursor says so): the expert, and the reason in the tree
    -- and the Info column, "ATP (truncated header, 5 of 16 bytes)".
    function ctx.header_cut()
      local c, header_len = ctx.cursor, spec.header_len
      if not (c.short or c.snapped) then return false end
      local label
      if c.short then
        ctx.truncated(string.format("truncated: %s header needs %d bytes, %d present", column,
                                    header_len, c.reported))
        label = string.format("truncated header, %d of %d bytes", c.reported, header_len)
      else
        ctx.snapped(string.format("snapped: the capture kept %d of the %s header's %d bytes",
                                  c.captured, column, header_len))
        label = string.format("header cut by the capture, %d of %d bytes", c.captured,
                              header_len)
      end
      subtree:append_text(" (" .. label .. ")")
      pinfo.cols.info:set(column .. " (" .. label .. ")")
      return true
    end
    local ok, err = pcall(spec.dissect, ctx)
    if not ok then
      subtree:add_proto_expert_info(error_expert, "dissector error: " .. tostring(err))
    end
  end

  function proto.dissector(tvb, pinfo, tree)
    -- Only datagrams *to* the port (and, with from_port, from it), as swemu's parser picks a
    -- program header (Wireshark's UDP tries both ports; a reply from the port goes on to
    -- whatever owns its destination).
    local port = pinfo.match_uint
    if port ~= pinfo.dst_port and not (spec.from_port and port == pinfo.src_port) then
      return 0
    end
    dissect_datagram(tvb, pinfo, tree, port)
    return tvb:len()
  end

  register_port()
  udp_table:add_for_decode_as(proto)
  swemu.protocols[#swemu.protocols + 1] = {
    proto = proto, column = column, header_len = spec.header_len or 1,
    from_port = spec.from_port or false, truncated_expert = truncated_expert,
    port = function() return registered_port end,
    dissect_empty = function(pinfo, tree) dissect_datagram(nil, pinfo, tree, registered_port) end,
  }
  return proto
end

-- Wireshark's UDP never hands an empty payload to a port's dissector, but for swemu's parser a
-- datagram to a program's port without the header is a truncated header. This postdissector
-- (protocol "swemu", which adds nothing to other frames) flags such datagrams, and dissects
-- those of a protocol without a header (PCN), which carry its signal all the same.
local udp_length = Field.new("udp.length")
local udp_srcport = Field.new("udp.srcport")
local udp_dstport = Field.new("udp.dstport")
local empty_datagrams = Proto("swemu", "swemu program headers")

-- The protocol of a datagram from `src` to `dst`: one on its destination port first, then one
-- read both ways on its source port (as swemu-analyze picks it).
local function protocol_of(src, dst)
  for _, p in ipairs(swemu.protocols) do
    if p.port() ~= 0 and p.port() == dst then return p end
  end
  for _, p in ipairs(swemu.protocols) do
    if p.from_port and p.port() ~= 0 and p.port() == src then return p end
  end
  return nil
end

local function flag_empty_datagrams(pinfo, tree)
  local lengths, sports, dports = { udp_length() }, { udp_srcport() }, { udp_dstport() }
  for i = 1, math.min(#lengths, #sports, #dports) do
    local p = lengths[i].value == 8 and protocol_of(sports[i].value, dports[i].value)
    if p and p.header_len == 0 then
      p.dissect_empty(pinfo, tree)
    elseif p then
      local message = string.format("%s header needs %d bytes, 0 present", p.column,
                                    p.header_len)
      tree:add(p.proto, lengths[i].range)
          :add_proto_expert_info(p.truncated_expert, "truncated: " .. message)
      pinfo.cols.protocol:set(p.column)
      pinfo.cols.info:set(string.format("%s (truncated header, 0 of %d bytes)", p.column,
                                        p.header_len))
    end
  end
end

function empty_datagrams.dissector(tvb, pinfo, tree)
  pcall(flag_empty_datagrams, pinfo, tree)
end
register_postdissector(empty_datagrams)

------------------------------------------------------------------------------------------------
-- Part 2: ATP (pipeline/wire/atp.h; docs/wire.md, "ATP")
------------------------------------------------------------------------------------------------

do
  local HEADER_LEN = 16
  local VERSION = 1

  -- ver_flags bits 5..0, most significant first.
  local FLAGS = {
    { 0x20, "param" }, { 0x10, "resend" }, { 0x08, "edge" },
    { 0x04, "ecn" }, { 0x02, "overflow" }, { 0x01, "float" },
  }

  local f = {
    version = ProtoField.uint8("atp.version", "Version", base.DEC, nil, 0xC0),
    flags = ProtoField.uint8("atp.flags", "Flags", base.HEX, nil, 0x3F),
    worker_id = ProtoField.uint8("atp.worker_id", "Worker id", base.DEC),
    fan_in0 = ProtoField.uint8("atp.fan_in0", "Fan-in at the first edge switch", base.DEC),
    fan_in1 = ProtoField.uint8("atp.fan_in1", "Fan-in at the second edge switch", base.DEC),
    job_id = ProtoField.uint16("atp.job_id", "Job id", base.DEC),
    num_elements = ProtoField.uint16("atp.num_elements", "Number of elements", base.DEC),
    seq = ProtoField.uint32("atp.seq", "Sequence number", base.DEC),
    bitmap = ProtoField.uint32("atp.bitmap", "Worker bitmap", base.HEX),
    element = ProtoField.int32("atp.element", "Element", base.DEC),
    element_float = ProtoField.float("atp.element_float", "Element (float32)"),
  }
  local flag_fields = {}
  for _, flag in ipairs(FLAGS) do
    local mask, name = flag[1], flag[2]
    local pf = ProtoField.bool("atp.flags." .. name, name:sub(1, 1):upper() .. name:sub(2), 8,
                               nil, mask)
    f["flag_" .. name] = pf
    flag_fields[#flag_fields + 1] = pf
  end

  local e = {
    bad_version = ProtoExpert.new("atp.expert.bad_version", "unsupported ATP version",
                                  expert.group.MALFORMED, expert.severity.WARN),
    trailing = ProtoExpert.new("atp.expert.trailing", "bytes after the elements",
                               expert.group.PROTOCOL, expert.severity.NOTE),
  }

  local function dissect(ctx)
    local c, tree, info = ctx.cursor, ctx.tree, ctx.pinfo.cols.info

    local ver_flags, flags_item = c:field({ f.version, f.flags }, 1)
    if ver_flags ~= nil then  -- each flag bit under the Flags item
      for _, pf in ipairs(flag_fields) do flags_item:add(pf, c.tvb:range(0, 1)) end
    end
    local worker = c:field(f.worker_id, 1)
    c:field(f.fan_in0, 1)
    c:field(f.fan_in1, 1)
    local job = c:field(f.job_id, 2)
    local n = c:field(f.num_elements, 2)
    local seq = c:field(f.seq, 4)
    local bitmap = c:field(f.bitmap, 4)
    if ctx.header_cut() then return end

    local version = math.floor(ver_flags / 64)
    local flags = ver_flags % 64
    local is_param = has_bit(flags, 0x20)
    local is_float = has_bit(flags, 0x01)
    if version ~= VERSION then
      tree:add_proto_expert_info(e.bad_version, string.format(
        "unsupported ATP version %d (this layout is version %d)", version, VERSION))
    end

    local elements_short, elements_snapped = swemu.elements(
      ctx, n, is_float and f.element_float or f.element, is_float and "float32" or "int32",
      e.trailing)

    -- Info column: "ATP grad job 1 seq 64 w2 bitmap 0x5 [resend]".
    local text = "ATP"
    if version ~= VERSION then text = text .. " v" .. version end
    if is_param then
      text = string.format("%s param job %d seq %d bitmap 0x%x", text, job, seq, bitmap)
    else
      text = string.format("%s grad job %d seq %d w%d bitmap 0x%x", text, job, seq, worker,
                           bitmap)
    end
    local names = swemu.flag_names(flags, FLAGS, { param = true })
    if #names > 0 then text = text .. " [" .. table.concat(names, ",") .. "]" end
    if elements_short then text = text .. " [truncated]" end
    if elements_snapped then text = text .. " [snapped]" end
    info:set(text)

    tree:append_text(string.format(", %s, Job %d, Seq %d, Bitmap 0x%08x",
                                   is_param and "Parameter" or "Gradient", job, seq, bitmap))
  end

  swemu.udp_protocol {
    name = "atp",
    -- Wireshark's AppleTalk Transaction Protocol owns the protocol name "atp" (and the field
    -- atp.bitmap, an 8-bit one: the two coexist). The fields keep the atp. prefix; the protocol
    -- (display filter "swemu_atp") and its preference (swemu_atp.udp_port) take this name.
    proto_name = "swemu_atp",
    description = "swemu ATP (in-network aggregation)",
    default_port = 9000,
    header_len = HEADER_LEN,
    fields = f,
    experts = e,
    dissect = dissect,
  }
end

------------------------------------------------------------------------------------------------
-- Part 3: PCN (pipeline/wire/pcn.h; docs/wire.md, "PCN")
------------------------------------------------------------------------------------------------

-- PCN has no header: the worker's START and the PS's ACK are bits of the IPv4 TOS byte. They are
-- read only on datagrams to or from the PCN port (the same bits elsewhere are ordinary DSCP: EF,
-- 0xB8, would read as a START), and shown over the TOS byte. A START is a datagram to the port
-- with bit 7 set, an ACK one from the port with bit 6 set (as swemu-analyze counts them); the
-- fields name the bits whatever the direction.
do
  local START, ACK = 0x80, 0x40
  local THRESHOLD_STEP = 5  -- packets per unit of bits 5..2
  local ECN_NAMES = { [0] = "Not-ECT", [1] = "ECT(1)", [2] = "ECT(0)", [3] = "CE" }

  local f = {
    start = ProtoField.bool("pcn.start", "START", 8, nil, START,
                            "lower the ECN threshold toward the PS to the one carried here"),
    ack = ProtoField.bool("pcn.ack", "ACK", 8, nil, ACK, "the PS's answer to a START"),
    threshold = ProtoField.uint8("pcn.threshold", "Threshold (packets)", base.DEC, nil, nil,
                                 "TOS bits 5..2 times 5: 0..75 packets"),
    ecn = ProtoField.uint8("pcn.ecn", "ECN", base.DEC, ECN_NAMES, 0x03),
  }

  local e = {
    start_and_ack = ProtoExpert.new("pcn.expert.start_and_ack", "START and ACK both set",
                                    expert.group.MALFORMED, expert.severity.WARN),
  }

  local function dissect(ctx)
    local tos, range = swemu.ipv4_tos()
    if tos == nil then return end  -- not over IPv4: no TOS byte
    local tree = ctx.tree
    local units = math.floor(tos / 4) % 16
    local threshold, ecn = units * THRESHOLD_STEP, tos % 4
    local is_start, is_ack = has_bit(tos, START), has_bit(tos, ACK)

    tree:add(f.start, range)
    tree:add(f.ack, range)
    tree:add(f.threshold, range, threshold)
        :append_text(string.format(" (bits 5..2: %d x %d)", units, THRESHOLD_STEP))
    tree:add(f.ecn, range)

    -- Info column: "PCN START threshold 10 ECT(0)".
    local kind
    if is_start and is_ack then
      tree:add_proto_expert_info(e.start_and_ack, string.format(
        "START and ACK both set (TOS 0x%02x): not a PCN signal", tos))
      kind = "START+ACK"
    elseif is_start and ctx.to_port then
      kind = "START"
    elseif is_ack and ctx.from_port then
      kind = "ACK"
    else
      kind = "no signal"
    end
    ctx.pinfo.cols.info:set(string.format("PCN %s threshold %d %s", kind, threshold,
                                          ECN_NAMES[ecn]))
    tree:append_text(string.format(", %s, Threshold %d, %s", kind, threshold, ECN_NAMES[ecn]))
  end

  swemu.udp_protocol {
    name = "pcn",
    proto_name = "swemu_pcn",
    description = "swemu PCN (signal in the IPv4 TOS byte)",
    default_port = 9700,
    header_len = 0,    -- no header of its own
    from_port = true,  -- the PS answers from the port
    fields = f,
    experts = e,
    dissect = dissect,
  }
end

------------------------------------------------------------------------------------------------
-- Part 4: DLCP (pipeline/wire/dlcp.h; docs/wire.md, "DLCP")
------------------------------------------------------------------------------------------------

-- A 16-byte header after UDP, in data packets and control signals alike. A data packet (version
-- 1, type 1) also carries its priority tag in the DSCP (16 + tag: the switch's default base) and
-- its importance in ECN (ECT or CE), shown over the IPv4 TOS byte as dlcp.tag and dlcp.important.
do
  local HEADER_LEN = 16
  local VERSION = 1
  local DATA, START = 1, 2
  local DSCP_BASE, TAGS = 16, 7  -- tag t rides as DSCP 16 + t, t = 0..6
  local TYPE_NAMES = {
    [1] = "data", [2] = "start", [3] = "finish", [4] = "stop", [5] = "retransmit",
    [6] = "confirm", [7] = "rate", [8] = "ack",
  }

  local f = {
    version = ProtoField.uint8("dlcp.version", "Version", base.DEC, nil, 0xF0),
    type = ProtoField.uint8("dlcp.type", "Type", base.DEC, TYPE_NAMES, 0x0F),
    pull = ProtoField.bool("dlcp.pull", "Pull", 8, nil, 0x01,
                           "the pull stage (a stricter loss bound)"),
    length = ProtoField.uint16("dlcp.length", "Payload length", base.DEC),
    tensor = ProtoField.uint32("dlcp.tensor", "Tensor id", base.DEC),
    seq = ProtoField.uint32("dlcp.seq", "Sequence number", base.DEC, nil, nil,
                            "data: the packet's number in its flow; control: the signal's"),
    offset = ProtoField.uint32("dlcp.offset", "Offset", base.DEC, nil, nil,
                               "data: byte offset in the tensor; start: the tensor's size"),
    tag = ProtoField.uint8("dlcp.tag", "Priority tag", base.DEC, nil, nil,
                           "a data packet's DSCP - 16, when 16..22"),
    important = ProtoField.bool("dlcp.important", "Important", 8, nil, 0x03,
                                "a data packet's ECN is ECT or CE (kept and marked above the "
                                .. "queue's threshold, not dropped)"),
  }

  local e = {
    bad_version = ProtoExpert.new("dlcp.expert.bad_version", "unsupported DLCP version",
                                  expert.group.MALFORMED, expert.severity.WARN),
    bad_type = ProtoExpert.new("dlcp.expert.bad_type", "unknown DLCP type",
                               expert.group.MALFORMED, expert.severity.WARN),
    trailing = ProtoExpert.new("dlcp.expert.trailing", "bytes after the payload",
                               expert.group.PROTOCOL, expert.severity.NOTE),
  }

  -- A data packet's tag and importance over the TOS byte; returns the tag (nil: the DSCP is no
  -- tag's), whether it is important and the DSCP.
  local function add_priority(tree)
    local tos, range = swemu.ipv4_tos()
    if tos == nil then return nil, false, nil end
    local dscp = math.floor(tos / 4)
    local tag = nil
    if dscp >= DSCP_BASE and dscp < DSCP_BASE + TAGS then
      tag = dscp - DSCP_BASE
      tree:add(f.tag, range, tag):append_text(string.format(" (DSCP %d)", dscp))
    end
    tree:add(f.important, range)
    return tag, tos % 4 ~= 0, dscp
  end

  local function dissect(ctx)
    local c, tree, info = ctx.cursor, ctx.tree, ctx.pinfo.cols.info

    local version_type = c:field({ f.version, f.type }, 1)
    local flags = c:field(f.pull, 1)
    local length = c:field(f.length, 2)
    local tensor = c:field(f.tensor, 4)
    local seq = c:field(f.seq, 4)
    local offset = c:field(f.offset, 4)

    local version = version_type and math.floor(version_type / 16)
    local ptype = version_type and version_type % 16
    local is_data = version == VERSION and ptype == DATA
    local tag, important, dscp
    if is_data then tag, important, dscp = add_priority(tree) end
    if ctx.header_cut() then return end

    -- Checks in swemu-analyze's order; only the first problem is reported.
    local type_name = TYPE_NAMES[ptype]
    local payload_short, payload_snapped = false, false
    local wire_bytes = c:reported_remaining()
    local known = swemu.known_version_type(ctx, e, version, ptype, VERSION, TYPE_NAMES)
    if known and wire_bytes < length then
      payload_short = true
      ctx.truncated(string.format("truncated: DLCP payload length %d, %d bytes present",
                                  length, wire_bytes))
    elseif known and c:remaining() < length then
      payload_snapped = true
      ctx.snapped(string.format("snapped: the capture kept %d of the %d payload bytes",
                                c:remaining(), length))
    end
    local kept = math.min(length, c:remaining())
    if kept == length and kept > 0 then
      tree:add(c.tvb:range(c.offset, kept), string.format("Payload (%d bytes)", length))
    elseif kept > 0 then
      tree:add(c.tvb:range(c.offset, kept), string.format("Payload (%d of %d bytes)", kept,
                                                          length))
    end
    if known and wire_bytes > length then
      tree:add_proto_expert_info(e.trailing, string.format("%d bytes after the %d-byte payload",
                                                           wire_bytes - length, length))
    end

    -- Info column: "DLCP data tensor 7 seq 3 offset 2800 len 1400 tag 2 important [pull]".
    local text = "DLCP"
    if version ~= VERSION then text = text .. " v" .. version end
    text = string.format("%s %s tensor %d seq %d", text, type_name or ("type " .. ptype),
                         tensor, seq)
    if ptype == START then
      text = string.format("%s size %d", text, offset)
    else
      text = string.format("%s offset %d", text, offset)
    end
    text = string.format("%s len %d", text, length)
    if is_data and tag ~= nil then
      text = string.format("%s tag %d", text, tag)
    elseif is_data and dscp ~= nil then
      text = string.format("%s dscp %d", text, dscp)
    end
    if is_data then text = text .. (important and " important" or " unimportant") end
    if swemu.has_bit(flags, 0x01) then text = text .. " [pull]" end
    if payload_short then text = text .. " [truncated]" end
    if payload_snapped then text = text .. " [snapped]" end
    info:set(text)

    tree:append_text(string.format(", %s, Tensor %d, Seq %d", type_name or ("Type " .. ptype),
                                   tensor, seq))
  end

  swemu.udp_protocol {
    name = "dlcp",
    proto_name = "swemu_dlcp",
    description = "swemu DLCP (gradient-aware loss tolerance)",
    default_port = 9800,
    header_len = HEADER_LEN,
    fields = f,
    experts = e,
    dissect = dissect,
  }
end

------------------------------------------------------------------------------------------------
-- Part 5: GOAT (pipeline/wire/goat.h; docs/wire.md, "GOAT")
------------------------------------------------------------------------------------------------

-- A 28-byte header after UDP, then num_elements big-endian int32 elements: a worker's gradient
-- fragment, a switch's aggregate of several, or the PS's result. Problems are reported in
-- swemu-analyze's order (header cut, version, type, elements past the datagram, count), the
-- first one only.
do
  local HEADER_LEN = 28
  local VERSION = 1
  local GRADIENT, RESULT = 0, 1
  local TYPE_NAMES = { [GRADIENT] = "gradient", [RESULT] = "result" }
  local NODE_PS, NODE_ANY = 0, 0xFFFF
  local NODE_NAMES = { [NODE_PS] = "PS", [NODE_ANY] = "any (ATP-style)" }

  local FLAGS = {
    { 0x01, "resend" }, { 0x02, "overflow" }, { 0x04, "aggregate" }, { 0x08, "excluded" },
  }
  local FLAG_HELP = {
    resend = "retransmitted by its worker",
    overflow = "a switch's sum left int32: the values are invalid",
    aggregate = "written by a switch (complete, or flushed by a retransmission)",
    excluded = "result: this worker's gradient was late and is not in the sum",
  }

  local f = {
    version = ProtoField.uint8("goat.version", "Version", base.DEC, nil, 0xF0),
    type = ProtoField.uint8("goat.type", "Type", base.DEC, TYPE_NAMES, 0x0F),
    flags = ProtoField.uint8("goat.flags", "Flags", base.HEX),
    flags_reserved = ProtoField.uint8("goat.flags.reserved", "Reserved", base.HEX, nil, 0xF0),
    job_id = ProtoField.uint16("goat.job_id", "Job id", base.DEC),
    node_id = ProtoField.uint16("goat.node_id", "Node id", base.DEC, NODE_NAMES,
                                nil, "the aggregation node the plan chose (0: the PS; 65535: "
                                .. "the first switch with a free slot)"),
    submodel = ProtoField.uint16("goat.submodel", "Sub-model", base.DEC),
    fragment = ProtoField.uint32("goat.fragment", "Fragment", base.DEC, nil, nil,
                                 "index within the sub-model"),
    round = ProtoField.uint32("goat.round", "Round", base.DEC, nil, nil, "training iteration"),
    num_elements = ProtoField.uint16("goat.num_elements", "Number of elements", base.DEC),
    count = ProtoField.uint16("goat.count", "Count", base.DEC, nil, nil,
                              "workers whose gradients are in the values"),
    bitmap = ProtoField.uint64("goat.bitmap", "Worker bitmap", base.HEX),
    element = ProtoField.int32("goat.element", "Element", base.DEC),
  }
  local flag_fields = {}
  for _, flag in ipairs(FLAGS) do
    local mask, name = flag[1], flag[2]
    local pf = ProtoField.bool("goat.flags." .. name, name:sub(1, 1):upper() .. name:sub(2), 8,
                               nil, mask, FLAG_HELP[name])
    f["flag_" .. name] = pf
    flag_fields[#flag_fields + 1] = pf
  end
  flag_fields[#flag_fields + 1] = f.flags_reserved

  local e = {
    bad_version = ProtoExpert.new("goat.expert.bad_version", "unsupported GOAT version",
                                  expert.group.MALFORMED, expert.severity.WARN),
    bad_type = ProtoExpert.new("goat.expert.bad_type", "unknown GOAT type",
                               expert.group.MALFORMED, expert.severity.WARN),
    bad_count = ProtoExpert.new("goat.expert.bad_count", "count is not the bitmap's popcount",
                                expert.group.MALFORMED, expert.severity.WARN),
    trailing = ProtoExpert.new("goat.expert.trailing", "bytes after the elements",
                               expert.group.PROTOCOL, expert.severity.NOTE),
  }

  -- Bits set in a UInt64.
  local function popcount(value)
    local n = 0
    for _, word in ipairs({ value:higher(), value:lower() }) do
      while word > 0 do
        n = n + word % 2
        word = math.floor(word / 2)
      end
    end
    return n
  end

  local function hex(value)
    if value:higher() == 0 then return string.format("0x%x", value:lower()) end
    return string.format("0x%x%08x", value:higher(), value:lower())
  end

  local function node_text(node)
    return NODE_NAMES[node] and ("to " .. NODE_NAMES[node]) or ("to node " .. node)
  end

  local function dissect(ctx)
    local c, tree, info = ctx.cursor, ctx.tree, ctx.pinfo.cols.info

    local version_type = c:field({ f.version, f.type }, 1)
    local flags, flags_item = c:field(f.flags, 1)
    if flags ~= nil then  -- each flag bit under the Flags item
      for _, pf in ipairs(flag_fields) do flags_item:add(pf, c.tvb:range(1, 1)) end
    end
    local job = c:field(f.job_id, 2)
    local node = c:field(f.node_id, 2)
    local submodel = c:field(f.submodel, 2)
    local fragment = c:field(f.fragment, 4)
    local round = c:field(f.round, 4)
    local n = c:field(f.num_elements, 2)
    local count = c:field(f.count, 2)
    local bitmap = c:field(f.bitmap, 8)
    if ctx.header_cut() then return end

    local version = math.floor(version_type / 16)
    local ptype = version_type % 16
    local type_name = TYPE_NAMES[ptype]
    local elements_short, elements_snapped = false, false
    if swemu.known_version_type(ctx, e, version, ptype, VERSION, TYPE_NAMES) then
      elements_short, elements_snapped = swemu.elements(ctx, n, f.element, "int32", e.trailing)
      if not elements_short and count ~= popcount(bitmap) then
        tree:add_proto_expert_info(e.bad_count, string.format(
          "count %d is not popcount(bitmap) %d", count, popcount(bitmap)))
      end
    end

    -- Info column: "GOAT gradient job 1 to node 2 submodel 3 fragment 4 round 5 count 1
    -- bitmap 0x1 [resend]".
    local text = "GOAT"
    if version ~= VERSION then text = text .. " v" .. version end
    text = string.format("%s %s job %d %s submodel %d fragment %d round %d count %d bitmap %s",
                         text, type_name or ("type " .. ptype), job, node_text(node), submodel,
                         fragment, round, count, hex(bitmap))
    local names = swemu.flag_names(flags, FLAGS)
    if #names > 0 then text = text .. " [" .. table.concat(names, ",") .. "]" end
    if elements_short then text = text .. " [truncated]" end
    if elements_snapped then text = text .. " [snapped]" end
    info:set(text)

    tree:append_text(string.format(", %s, Job %d, Node %s, Submodel %d, Fragment %d, Round %d",
                                   type_name and (type_name:sub(1, 1):upper() .. type_name:sub(2))
                                   or ("Type " .. ptype), job, NODE_NAMES[node] or node,
                                   submodel, fragment, round))
  end

  swemu.udp_protocol {
    name = "goat",
    proto_name = "swemu_goat",
    description = "swemu GOAT (collaborative in-network aggregation)",
    default_port = 9100,
    header_len = HEADER_LEN,
    fields = f,
    experts = e,
    dissect = dissect,
  }
end

------------------------------------------------------------------------------------------------
-- Part 6: PLink (pipeline/wire/plink.h; docs/wire.md, "PLink")
------------------------------------------------------------------------------------------------

-- A 24-byte header after UDP: ProbeEmbed's echo probes (a request, and the reply that copies it
-- with sender and receiver swapped), AggEngine's chunks, whose payload (big-endian float32
-- values) follows the header, and chunk acks (a chunk packet's header fields sent back, sender
-- and receiver swapped, no payload). In chunks and acks, flags bits 1-0 are the schedule step.
-- Problems are reported in swemu-analyze's order (header cut, version, type, a chunk's payload
-- past the chunk's size), the first one only. A probe's nonzero offset and bytes after a probe's
-- header are notes, not malformed: the prober ignores them; so are bytes after a chunk ack's.
do
  local HEADER_LEN = 24
  local VERSION = 1
  local REQUEST, REPLY, CHUNK, ACK = 0, 1, 2, 3
  local TYPE_NAMES = {
    [REQUEST] = "probe request", [REPLY] = "probe reply", [CHUNK] = "chunk", [ACK] = "chunk ack",
  }
  local STEP_MASK = 0x03  -- flags bits 1-0 of a chunk or a chunk ack
  local STEP_NAMES = {
    [0] = "member to local master",
    [1] = "local master to global master",
    [2] = "total, global master to local masters",
    [3] = "total, local master to members",
  }

  local f = {
    version = ProtoField.uint8("plink.version", "Version", base.DEC, nil, 0xF0),
    type = ProtoField.uint8("plink.type", "Type", base.DEC, TYPE_NAMES, 0x0F),
    flags = ProtoField.uint8("plink.flags", "Flags", base.HEX, nil, nil,
                             "chunk, chunk ack: bits 1-0 the schedule step, other bits 0; "
                             .. "probe: 0"),
    step = ProtoField.uint8("plink.step", "Step", base.DEC, STEP_NAMES, STEP_MASK,
                            "chunk, chunk ack: the schedule step (flags bits 1-0)"),
    sender = ProtoField.uint16("plink.sender", "Sender", base.DEC, nil, nil, "node id"),
    receiver = ProtoField.uint16("plink.receiver", "Receiver", base.DEC, nil, nil, "node id"),
    epoch = ProtoField.uint16("plink.epoch", "Epoch", base.DEC, nil, nil,
                              "probe: the probing round; chunk, chunk ack: the plan epoch"),
    seq = ProtoField.uint32("plink.seq", "Sequence number", base.DEC, nil, nil,
                            "probe: the requester's sequence number; chunk, chunk ack: the "
                            .. "chunk id"),
    offset = ProtoField.uint32("plink.offset", "Offset", base.DEC, nil, nil,
                               "chunk, chunk ack: the (acknowledged) payload's byte offset "
                               .. "within the chunk; probe: 0"),
    stamp = ProtoField.uint64("plink.stamp", "Stamp", base.DEC, nil, nil,
                              "probe: the requester's send time (ns), echoed in the reply; "
                              .. "chunk, chunk ack: the chunk's size in bytes"),
    payload = ProtoField.bytes("plink.payload", "Payload"),
  }

  local e = {
    bad_version = ProtoExpert.new("plink.expert.bad_version", "unsupported PLink version",
                                  expert.group.MALFORMED, expert.severity.WARN),
    bad_type = ProtoExpert.new("plink.expert.bad_type", "unknown PLink type",
                               expert.group.MALFORMED, expert.severity.WARN),
    chunk_overrun = ProtoExpert.new("plink.expert.chunk_overrun",
                                    "chunk payload past the chunk's size",
                                    expert.group.MALFORMED, expert.severity.WARN),
    probe_offset = ProtoExpert.new("plink.expert.probe_offset", "probe with a nonzero offset",
                                   expert.group.PROTOCOL, expert.severity.NOTE),
    trailing = ProtoExpert.new("plink.expert.trailing",
                               "bytes after a probe's or a chunk ack's header",
                               expert.group.PROTOCOL, expert.severity.NOTE),
  }

  local function dissect(ctx)
    local c, tree, info = ctx.cursor, ctx.tree, ctx.pinfo.cols.info

    local version_type = c:field({ f.version, f.type }, 1)
    local flags, flags_item = c:field(f.flags, 1)
    local sender = c:field(f.sender, 2)
    local receiver = c:field(f.receiver, 2)
    local epoch = c:field(f.epoch, 2)
    local seq = c:field(f.seq, 4)
    local offset = c:field(f.offset, 4)
    local stamp, stamp_item = c:field(f.stamp, 8)
    if ctx.header_cut() then return end

    local version = math.floor(version_type / 16)
    local ptype = version_type % 16
    local type_name = TYPE_NAMES[ptype]
    local wire_bytes = c:reported_remaining()  -- payload bytes in the datagram
    local kept = math.min(wire_bytes, c:remaining())
    local overrun, snapped = false, false
    local step = nil  -- a chunk's or a chunk ack's
    if swemu.known_version_type(ctx, e, version, ptype, VERSION, TYPE_NAMES) then
      if ptype == CHUNK or ptype == ACK then
        step = flags % (STEP_MASK + 1)
        flags_item:add(f.step, c.tvb:range(1, 1))
      end
      if ptype == ACK then
        stamp_item:append_text(" (the chunk's size)")
        if wire_bytes > 0 then
          tree:add_proto_expert_info(e.trailing, string.format(
            "%d bytes after the chunk ack header (ignored)", wire_bytes))
        end
      elseif ptype == CHUNK then
        stamp_item:append_text(" (the chunk's size)")
        if stamp < UInt64.new(offset + wire_bytes) then
          overrun = true
          tree:add_proto_expert_info(e.chunk_overrun, string.format(
            "chunk payload ends at byte %d, past the chunk's size %s", offset + wire_bytes,
            tostring(stamp)))
        end
      else
        stamp_item:append_text(" (the requester's send time, ns)")
        if offset ~= 0 then
          tree:add_proto_expert_info(e.probe_offset, string.format(
            "probe offset %d (ignored; 0 expected)", offset))
        end
        if wire_bytes > 0 then
          tree:add_proto_expert_info(e.trailing, string.format(
            "%d bytes after the probe header (ignored)", wire_bytes))
        end
      end
      if kept > 0 then tree:add(f.payload, c.tvb:range(c.offset, kept)) end
      if kept < wire_bytes then
        snapped = true
        ctx.snapped(string.format("snapped: the capture kept %d of the %d payload bytes", kept,
                                  wire_bytes))
      end
    end

    -- Info column: "PLink probe request 1 -> 2 epoch 3 seq 4 stamp 5000", "PLink chunk 1 -> 2
    -- epoch 1 id 7 offset 1400 len 1400 size 5600 step 0", "PLink chunk ack 2 -> 1 epoch 1 id 7
    -- offset 1400 size 5600 step 0".
    local text = "PLink"
    if version ~= VERSION then text = text .. " v" .. version end
    text = string.format("%s %s %d -> %d epoch %d", text, type_name or ("type " .. ptype), sender,
                         receiver, epoch)
    if ptype == CHUNK then
      text = string.format("%s id %d offset %d len %d size %s", text, seq, offset, wire_bytes,
                           tostring(stamp))
    elseif ptype == ACK then
      text = string.format("%s id %d offset %d size %s", text, seq, offset, tostring(stamp))
    else
      text = string.format("%s seq %d", text, seq)
      if offset ~= 0 then text = string.format("%s offset %d", text, offset) end
      text = string.format("%s stamp %s", text, tostring(stamp))
    end
    if step ~= nil then text = string.format("%s step %d", text, step) end
    -- Flags beyond a chunk's or an ack's step (any in a probe).
    if flags - (step or 0) ~= 0 then text = string.format("%s [flags 0x%02x]", text, flags) end
    if overrun then text = text .. " [overrun]" end
    if snapped then text = text .. " [snapped]" end
    info:set(text)

    tree:append_text(string.format(", %s, %d -> %d, Epoch %d, %s %d",
                                   type_name and (type_name:sub(1, 1):upper() .. type_name:sub(2))
                                   or ("Type " .. ptype), sender, receiver, epoch,
                                   (ptype == CHUNK or ptype == ACK) and "Chunk id" or "Seq", seq))
    if step ~= nil then tree:append_text(string.format(", Step %d", step)) end
  end

  swemu.udp_protocol {
    name = "plink",
    proto_name = "swemu_plink",
    description = "swemu PLink (ProbeEmbed's probes, AggEngine's chunks and chunk acks)",
    column = "PLink",
    default_port = 9200,
    header_len = HEADER_LEN,
    fields = f,
    experts = e,
    dissect = dissect,
  }
end
