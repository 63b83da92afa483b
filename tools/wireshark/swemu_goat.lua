-- swemu's Wireshark dissector: GOAT (pipeline/wire/goat.h; docs/wire.md, "GOAT").
-- Loaded by swemu.lua beside it, which passes its framework (part 1 of swemu.lua) and
-- registers the spec this file returns; loaded alone (as a plugin of its own), it does nothing.
--
-- GOAT: protocol "swemu_goat", fields goat.* of its header and goat.element on datagrams to UDP
-- port 9100; -o swemu_goat.udp_port:N moves it.

local swemu = ...
if type(swemu) ~= "table" then return end

-- A 28-byte header after UDP, then num_elements big-endian int32 elements: a worker's gradient
-- fragment, a switch's aggregate of several, or the PS's result. Problems are reported in
-- swemu-analyze's order (header cut, version, type, elements past the datagram, count), the
-- first one only.

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

return {
  order = 40,  -- its place among the protocols (as swemu-analyze's)
  name = "goat",
  proto_name = "swemu_goat",
  description = "swemu GOAT (collaborative in-network aggregation)",
  default_port = 9100,
  header_len = HEADER_LEN,
  fields = f,
  experts = e,
  dissect = dissect,
}
