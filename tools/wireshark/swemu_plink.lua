-- swemu's Wireshark dissector: PLink (pipeline/wire/plink.h; docs/wire.md, "PLink").
-- Loaded by swemu.lua beside it, which passes its framework (part 1 of swemu.lua) and
-- registers the spec this file returns; loaded alone (as a plugin of its own), it does nothing.
--
-- PLink: protocol "swemu_plink", fields plink.* of its header (plink.step: a chunk's or chunk
-- ack's schedule step) and a chunk's payload as plink.payload on datagrams to UDP port 9200;
-- -o swemu_plink.udp_port:N moves it.

local swemu = ...
if type(swemu) ~= "table" then return end

-- A 24-byte header after UDP: ProbeEmbed's echo probes (a request, and the reply that copies it
-- with sender and receiver swapped), AggEngine's chunks, whose payload (big-endian float32
-- values) follows the header, and chunk acks (a chunk packet's header fields sent back, sender
-- and receiver swapped, no payload). In chunks and acks, flags bits 1-0 are the schedule step.
-- Problems are reported in swemu-analyze's order (header cut, version, type, a chunk's payload
-- past the chunk's size), the first one only. A probe's nonzero offset and bytes after a probe's
-- header are notes, not malformed: the prober ignores them; so are bytes after a chunk ack's.

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

return {
  order = 50,  -- its place among the protocols (as swemu-analyze's)
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
