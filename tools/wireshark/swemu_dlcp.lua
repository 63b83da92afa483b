-- swemu's Wireshark dissector: DLCP (pipeline/wire/dlcp.h; docs/wire.md, "DLCP").
-- Loaded by swemu.lua beside it, which passes its framework (part 1 of swemu.lua) and
-- registers the spec this file returns; loaded alone (as a plugin of its own), it does nothing.
--
-- DLCP: protocol "swemu_dlcp", fields dlcp.* of its header on datagrams to UDP port 9800, and in
-- data packets dlcp.tag and dlcp.important from the IPv4 DSCP and ECN; -o swemu_dlcp.udp_port:N
-- moves it.

local swemu = ...
if type(swemu) ~= "table" then return end

-- A 16-byte header after UDP, in data packets and control signals alike. A data packet (version
-- 1, type 1) also carries its priority tag in the DSCP (16 + tag: the switch's default base) and
-- its importance in ECN (ECT or CE), shown over the IPv4 TOS byte as dlcp.tag and dlcp.important.

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

return {
  order = 30,  -- its place among the protocols (as swemu-analyze's)
  name = "dlcp",
  proto_name = "swemu_dlcp",
  description = "swemu DLCP (gradient-aware loss tolerance)",
  default_port = 9800,
  header_len = HEADER_LEN,
  fields = f,
  experts = e,
  dissect = dissect,
}
