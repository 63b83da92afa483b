#include "pipeline/tables/lpm_table.h"

#include <algorithm>

namespace swemu {
namespace {

constexpr uint32_t PrefixMask(unsigned len) { return len == 0 ? 0 : ~uint32_t{0} << (32 - len); }

}  // namespace

LpmTable::LpmTable(TableSpec spec)
    : MatchTable(std::move(spec)),
      shift_(32 - key_bits()),
      prefetch_((uint64_t{1} << 16) * sizeof(uint32_t) + uint64_t{size()} * sizeof(Record) >=
                kPrefetchFootprintBytes) {
  records_.reserve(size());  // address space only; never moves, so lookups need no care
}

void LpmTable::DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
  if (!prefetch_) {
    for (uint32_t i = 0; i < n; ++i) out[i] = DoLookup(keys[i]);
    return;
  }
  constexpr uint32_t kChunk = 32;
  uint32_t key[kChunk];
  uint32_t word[kChunk];
  for (uint32_t base = 0; base < n; base += kChunk) {
    const uint32_t m = std::min(kChunk, n - base);
    for (uint32_t i = 0; i < m; ++i) {
      key[i] = Aligned(keys[base + i]);
      word[i] = trie_.Level1(key[i]);
      if (LpmTrie::IsChunk(word[i])) __builtin_prefetch(trie_.Child(word[i], key[i] >> 8));
    }
    for (uint32_t i = 0; i < m; ++i) {
      if (!LpmTrie::IsChunk(word[i])) continue;
      word[i] = *trie_.Child(word[i], key[i] >> 8);
      if (LpmTrie::IsChunk(word[i])) __builtin_prefetch(trie_.Child(word[i], key[i]));
    }
    for (uint32_t i = 0; i < m; ++i) {
      if (LpmTrie::IsChunk(word[i])) word[i] = *trie_.Child(word[i], key[i]);
      if (word[i] != 0) __builtin_prefetch(&records_[word[i] - 1]);
    }
    for (uint32_t i = 0; i < m; ++i) out[base + i] = Result(word[i]);
  }
}

uint64_t LpmTable::SramBytes() const {
  return uint64_t{size()} * (ActionDataBytes() + kEntryOverheadBytes);
}

uint64_t LpmTable::HostBytes() const {
  uint64_t maps = 0;
  for (const auto& map : by_length_) maps += HashMapBytes(map);
  return sizeof(*this) + HandleHostBytes() + trie_.HostBytes() + CapacityBytes(records_) +
         CapacityBytes(prefixes_) + maps;
}

bool LpmTable::Contains(const TableEntry& entry) const {
  return by_length_[entry.prefix_len].count(Aligned(entry.key)) != 0;
}

void LpmTable::Insert(EntryHandle handle, const TableEntry& entry) {
  if (handle >= records_.size()) {
    records_.resize(handle + 1);
    prefixes_.resize(handle + 1);
  }
  const uint32_t value = Aligned(entry.key);
  const unsigned len = entry.prefix_len;
  records_[handle] = Record{entry.action, 0};
  prefixes_[handle] = Prefix{value, entry.prefix_len};
  by_length_[len].emplace(value, handle);
  // Take over every leaf whose current prefix is shorter (less specific) than this one.
  trie_.Repaint(value, len, [&](uint32_t leaf) {
    return leaf == 0 || prefixes_[leaf - 1].len < len ? handle + 1 : leaf;
  });
}

void LpmTable::Erase(EntryHandle handle) {
  const Prefix p = prefixes_[handle];
  by_length_[p.len].erase(p.value);
  uint32_t cover = 0;  // the next-longest prefix covering p, as a leaf value
  for (unsigned len = p.len; len-- > 0;) {
    auto it = by_length_[len].find(p.value & PrefixMask(len));
    if (it != by_length_[len].end()) {
      cover = it->second + 1;
      break;
    }
  }
  trie_.Repaint(p.value, p.len, [&](uint32_t leaf) { return leaf == handle + 1 ? cover : leaf; });
  trie_.Collapse(p.value, p.len);
}

void LpmTable::SetAction(EntryHandle handle, const ActionCall& action) {
  records_[handle].action = action;
}

TableEntry LpmTable::Read(EntryHandle handle) const {
  TableEntry entry;
  const Prefix& p = prefixes_[handle];
  entry.key.w[0] = p.value >> shift_;
  entry.prefix_len = p.len;
  entry.mask = LowBitsMask(key_bits()) & ~LowBitsMask(key_bits() - p.len);
  entry.action = records_[handle].action;
  return entry;
}

void LpmTable::ClearEntries() {
  trie_.Clear();
  records_.clear();
  prefixes_.clear();
  for (auto& map : by_length_) map.clear();
}

void LpmTable::ResetEntryHits() {
  for (Record& r : records_) r.hits = 0;
}

}  // namespace swemu
