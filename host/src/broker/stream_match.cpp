#include "broker/stream_match.hpp"

#include <algorithm>

#include "common/base64.hpp"

namespace px::broker {

StreamScanner::StreamScanner(std::vector<std::pair<std::string, int>> patterns) {
  patterns.erase(
      std::remove_if(patterns.begin(), patterns.end(), [](const auto& p) { return p.first.empty(); }),
      patterns.end());
  for (const auto& p : patterns) longest_ = std::max(longest_, p.first.size());
  patterns_ = std::make_shared<const std::vector<std::pair<std::string, int>>>(std::move(patterns));
}

int StreamScanner::find_in(std::string_view text) const {
  if (!patterns_) return -1;
  for (const auto& [pattern, tag] : *patterns_) {
    if (text.find(pattern) != std::string_view::npos) return tag;
  }
  return -1;
}

int StreamScanner::feed(std::string_view data) {
  if (empty() || data.empty()) return -1;
  // The seam: the carried tail with the start of this piece, where a pattern
  // split between pieces can be; then the piece itself.
  const std::size_t keep = longest_ - 1;
  std::string seam = carry_;
  seam.append(data.substr(0, keep));
  int tag = find_in(seam);
  if (tag < 0) tag = find_in(data);
  if (data.size() >= keep) {
    carry_.assign(data.substr(data.size() - keep));
  } else {
    carry_.append(data);
    if (carry_.size() > keep) carry_.erase(0, carry_.size() - keep);
  }
  return tag;
}

StreamReplacer::StreamReplacer(std::vector<std::pair<std::string, std::string>> pairs) {
  pairs.erase(
      std::remove_if(pairs.begin(), pairs.end(),
                     [](const auto& p) { return p.first.empty() || p.first.size() != p.second.size(); }),
      pairs.end());
  pairs_ = std::make_shared<const std::vector<std::pair<std::string, std::string>>>(std::move(pairs));
}

std::size_t StreamReplacer::replace_in(std::string& text) const {
  std::size_t n = 0;
  if (pairs_) {
    for (const auto& [from, to] : *pairs_) n += replace_all(text, from, to);
  }
  return n;
}

void StreamReplacer::feed(std::string& data) {
  if (empty()) return;
  if (!held_.empty()) {
    data.insert(0, held_);
    held_.clear();
  }
  replace_in(data);
  // Hold back the longest tail that is a proper prefix of a `from`: for each,
  // only the places in the last from.size()-1 bytes where its first byte is.
  std::size_t hold = 0;
  const std::string_view w(data);
  for (const auto& [from, to] : *pairs_) {
    std::size_t i = w.size() - std::min(from.size() - 1, w.size());
    for (; i < w.size() && w.size() - i > hold; ++i) {
      i = w.find(from[0], i);
      if (i == std::string_view::npos || w.size() - i <= hold) break;
      if (w.substr(i) == std::string_view(from).substr(0, w.size() - i)) {
        hold = w.size() - i;
        break;
      }
    }
  }
  held_.assign(data, data.size() - hold, hold);
  data.resize(data.size() - hold);
}

std::string StreamReplacer::finish() {
  return std::exchange(held_, std::string());
}

std::size_t replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return 0;
  std::size_t count = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++count;
  }
  return count;
}

std::vector<std::string> encoded_forms(std::string_view token, bool dedupe) {
  std::vector<std::string> out;
  // Forms shorter than 12 characters would match ordinary text.
  const auto add = [&](std::string s) {
    if (s.size() < 12) return;
    if (dedupe && std::find(out.begin(), out.end(), s) != out.end()) return;
    out.push_back(std::move(s));
  };
  add(std::string(token));
  static constexpr char kLower[] = "0123456789abcdef";
  static constexpr char kUpper[] = "0123456789ABCDEF";
  std::string lo, up;
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    lo += kLower[u >> 4];
    lo += kLower[u & 15];
    up += kUpper[u >> 4];
    up += kUpper[u & 15];
  }
  add(lo);
  add(up);
  // At alignment a, the token follows a bytes of a 3-byte group: the first
  // {0, 2, 3} characters mix in the bytes before it, and only whole groups
  // are free of the bytes after it.
  static constexpr std::size_t kSkip[3] = {0, 2, 3};
  for (std::size_t a = 0; a < 3; ++a) {
    std::string input(a, '\0');
    input.append(token);
    const std::string enc = base64_encode(input);
    const std::size_t full = input.size() / 3 * 4;
    if (full <= kSkip[a]) continue;
    std::string part = enc.substr(kSkip[a], full - kSkip[a]);
    std::string url = part;
    for (char& c : url) {
      if (c == '+') c = '-';
      if (c == '/') c = '_';
    }
    add(std::move(part));
    add(std::move(url));
  }
  return out;
}

}  // namespace px::broker
