-- swemu's Wireshark dissector: PCN (pipeline/wire/pcn.h; docs/wire.md, "PCN").
-- Loaded by swemu.lua beside it, which passes its framework (part 1 of swemu.lua) and
-- registers the spec this file returns; loaded alone (as a plugin of its own), it does nothing.
--
-- PCN: protocol "swemu_pcn", fields pcn.start, pcn.ack, pcn.threshold (packets), pcn.ecn, read
-- from the IPv4 TOS byte of datagrams to or from UDP port 9700 only (elsewhere the same bits are
-- ordinary DSCP); -o swemu_pcn.udp_port:N moves it.

local swemu = ...
if type(swemu) ~= "table" then return end
local has_bit = swemu.has_bit

-- PCN has no header: the worker's START and the PS's ACK are bits of the IPv4 TOS byte. They are
-- read only on datagrams to or from the PCN port (the same bits elsewhere are ordinary DSCP: EF,
-- 0xB8, would read as a START), and shown over the TOS byte. A START is a datagram to the port
-- with bit 7 set, an ACK one from the port with bit 6 set (as swemu-analyze counts them); the
-- fields name the bits whatever the direction.

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

return {
  order = 20,  -- its place among the protocols (as swemu-analyze's)
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
