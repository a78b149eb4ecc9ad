#pragma once
// The run's synthetic addresses: the run's DNS answers a name the rule allows
// with an address of its own from ranges that are local inside the run's
// network namespace only (198.18.0.0/15, reserved for benchmarking and never
// routed, and a random unique-local /64), so that a program connecting to the
// name lands on a listening socket of the proxy, which recovers the name from
// the address. The same name keeps its addresses for the whole run; the table
// only grows (up to its capacity). Used on the proxy's io thread only.
#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace px::proxy {

struct SyntheticRanges {
  boost::asio::ip::address_v4 v4_base = boost::asio::ip::make_address_v4("198.18.0.0");
  unsigned v4_bits = 15;
  std::optional<boost::asio::ip::address_v6> v6_prefix;  // a /64; none when the run has no IPv6
};

class SyntheticNames {
 public:
  struct Entry {
    std::string name;
    boost::asio::ip::address_v4 v4;
    std::optional<boost::asio::ip::address_v6> v6;
  };

  // At most `capacity` names (and never more than the IPv4 range holds).
  SyntheticNames(SyntheticRanges ranges, std::size_t capacity);

  const SyntheticRanges& ranges() const { return ranges_; }
  const Entry* find(std::string_view name) const;
  // The entry for `name`, made on first use; nullptr when the table is full.
  // Entries stay where they are for the table's life.
  const Entry* allocate(std::string_view name);
  // The name behind a synthetic address; nullptr for any other address.
  const Entry* by_address(const boost::asio::ip::address& address) const;
  // Whether `address` lies in the synthetic ranges (allocated or not).
  bool in_ranges(const boost::asio::ip::address& address) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::optional<std::uint32_t> index_of(const boost::asio::ip::address& address) const;
  SyntheticRanges ranges_;
  std::size_t capacity_;
  std::deque<Entry> entries_;  // entries_[i] holds index i + 1; a deque: entries never move
  std::map<std::string, std::size_t, std::less<>> by_name_;
};

}  // namespace px::proxy
