#include "proxy/synthetic_names.hpp"

#include <algorithm>

namespace px::proxy {

SyntheticNames::SyntheticNames(SyntheticRanges ranges, std::size_t capacity) : ranges_(std::move(ranges)) {
  // Index 0 (the range's own address) and the last one are never handed out.
  const std::size_t in_range = (std::size_t{1} << (32 - std::min(ranges_.v4_bits, 31u))) - 2;
  capacity_ = std::min(capacity, in_range);
}

const SyntheticNames::Entry* SyntheticNames::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

const SyntheticNames::Entry* SyntheticNames::allocate(std::string_view name) {
  if (const Entry* e = find(name)) return e;
  if (entries_.size() >= capacity_) return nullptr;
  const auto index = static_cast<std::uint32_t>(entries_.size() + 1);
  Entry e;
  e.name = std::string(name);
  e.v4 = boost::asio::ip::address_v4(ranges_.v4_base.to_uint() + index);
  if (ranges_.v6_prefix) {
    auto bytes = ranges_.v6_prefix->to_bytes();
    for (int i = 0; i < 4; ++i) bytes[15 - i] = static_cast<unsigned char>(index >> (8 * i));
    e.v6 = boost::asio::ip::address_v6(bytes);
  }
  entries_.push_back(std::move(e));
  by_name_.emplace(entries_.back().name, entries_.size() - 1);
  return &entries_.back();
}

std::optional<std::uint32_t> SyntheticNames::index_of(const boost::asio::ip::address& address) const {
  if (address.is_v4()) {
    const std::uint32_t a = address.to_v4().to_uint();
    const std::uint32_t mask = ~std::uint32_t{0} << (32 - ranges_.v4_bits);
    if ((a & mask) != (ranges_.v4_base.to_uint() & mask)) return std::nullopt;
    return a - ranges_.v4_base.to_uint();
  }
  if (!ranges_.v6_prefix) return std::nullopt;
  const auto a = address.to_v6().to_bytes();
  const auto p = ranges_.v6_prefix->to_bytes();
  if (!std::equal(a.begin(), a.begin() + 8, p.begin())) return std::nullopt;
  // Only the last 32 bits carry an index; anything else in the /64 is no name's.
  if (!std::all_of(a.begin() + 8, a.begin() + 12, [](unsigned char b) { return b == 0; }))
    return std::nullopt;
  return std::uint32_t{a[12]} << 24 | std::uint32_t{a[13]} << 16 | std::uint32_t{a[14]} << 8 | a[15];
}

const SyntheticNames::Entry* SyntheticNames::by_address(const boost::asio::ip::address& address) const {
  const auto index = index_of(address);
  if (!index || *index == 0 || *index > entries_.size()) return nullptr;
  return &entries_[*index - 1];
}

bool SyntheticNames::in_ranges(const boost::asio::ip::address& address) const {
  if (address.is_v4()) return index_of(address).has_value();
  if (!ranges_.v6_prefix) return false;
  const auto a = address.to_v6().to_bytes();
  const auto p = ranges_.v6_prefix->to_bytes();
  return std::equal(a.begin(), a.begin() + 8, p.begin());
}

}  // namespace px::proxy
