-- Wireshark/tshark dissector for swemu's program headers (docs/wire.md, pipeline/wire/).
--
--   tshark -X lua_script:tools/wireshark/swemu.lua -r FILE -T fields -e atp.seq
--   wireshark -X lua_script:tools/wireshark/swemu.lua FILE
--   (or copy this file and the swemu_*.lua files beside it into ~/.local/lib/wireshark/plugins/)
--
-- Each protocol is a file of its own beside this one, swemu_<name>.lua (swemu_atp.lua,
-- swemu_pcn.lua, swemu_dlcp.lua, swemu_goat.lua, swemu_plink.lua: their protocol names, fields,
-- ports and preferences are in their headers). This file is the framework they share (part 1:
-- a protocol on a UDP-port preference, a cursor that reads fixed big-endian fields and reports
-- truncation, flag helpers) and the loader that finds them (part 2): each returns the spec of
-- swemu.udp_protocol{...} with an `order`, and they are registered by that order. A new header
-- is one more such file; nothing here names it.
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
--   spec.order         its place among the protocols (part 2 registers them by it), as
--                      swemu-analyze's ProtocolEntry::order
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
  -- A port is given up only while this protocol still holds it: when several ports move at once
  -- (one protocol onto another's old port), the order Wireshark calls prefs_changed in must not
  -- decide which protocol ends up there.
  local function holds(port)
    local current = udp_table:get_dissector(port)
    return current ~= nil and tostring(current) == proto.name
  end
  local function register_port()
    local port = proto.prefs.udp_port
    if registered_port == port then return end
    if registered_port ~= nil and registered_port ~= 0 and holds(registered_port) then
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
-- Part 2: the protocols, one file each (swemu_<name>.lua beside this file)
------------------------------------------------------------------------------------------------

-- The folder of this script, as Wireshark loaded it (-X lua_script:PATH, or a plugins folder).
local function script_dir()
  local source = debug.getinfo(1, "S").source
  return source:match("^@(.*)[/\\]") or "."
end

-- Every swemu_<name>.lua beside this file, run with the framework; their specs registered by
-- `order` (then name), so the protocols come in the same order whatever the folder's listing.
local function load_protocols()
  local dir = script_dir()
  local names = {}
  for file in Dir.open(dir, ".lua") do
    if file:match("^swemu_[%w_]+%.lua$") then names[#names + 1] = file end
  end
  table.sort(names)
  local specs = {}
  for _, file in ipairs(names) do
    local chunk = assert(loadfile(dir .. "/" .. file))
    local spec = chunk(swemu)
    if type(spec) ~= "table" or type(spec.order) ~= "number" then
      error(dir .. "/" .. file .. ": returns no protocol spec with an order")
    end
    specs[#specs + 1] = spec
  end
  table.sort(specs, function(a, b)
    if a.order ~= b.order then return a.order < b.order end
    return a.name < b.name
  end)
  for _, spec in ipairs(specs) do swemu.udp_protocol(spec) end
end

load_protocols()
