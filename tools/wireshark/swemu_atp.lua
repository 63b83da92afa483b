-- swemu's Wireshark dissector: ATP (pipeline/wire/atp.h; docs/wire.md, "ATP").
-- Loaded by swemu.lua beside it, which passes its framework (part 1 of swemu.lua) and
-- registers the spec this file returns; loaded alone (as a plugin of its own), it does nothing.
--
-- ATP: protocol "swemu_atp" (Wireshark's AppleTalk ATP owns "atp"), fields atp.*, on datagrams
-- to UDP port 9000; -o swemu_atp.udp_port:N moves it. Fields are listed in docs/wire.md.

local swemu = ...
if type(swemu) ~= "table" then return end
local has_bit = swemu.has_bit

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

return {
  order = 10,  -- its place among the protocols (as swemu-analyze's)
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
