#pragma once
// Byte strings found in a stream that arrives in pieces: a body read 16 KiB
// at a time can split a token anywhere, so each piece is searched together
// with the end of the previous one.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace px::broker {

// Finds any of a fixed set of patterns (each tagged with an int). Copies share
// the patterns; each copy has its own position in its stream.
class StreamScanner {
 public:
  StreamScanner() = default;
  explicit StreamScanner(std::vector<std::pair<std::string, int>> patterns);
  bool empty() const { return !patterns_ || patterns_->empty(); }
  // The tag of a pattern that ends inside `data` (it may start in earlier
  // pieces), or -1.
  int feed(std::string_view data);
  // A one-shot search of a whole text: the tag, or -1.
  int find_in(std::string_view text) const;

 private:
  std::shared_ptr<const std::vector<std::pair<std::string, int>>> patterns_;
  std::size_t longest_ = 0;
  std::string carry_;  // the last longest_-1 bytes seen
};

// Replaces each `from` by its `to` of the same length, holding back only a
// tail that could be the start of one (so a stream of server-sent events is
// not delayed: their pieces end in "\n\n", which starts no token). Copies
// share the pairs; each copy has its own held tail.
class StreamReplacer {
 public:
  StreamReplacer() = default;
  explicit StreamReplacer(std::vector<std::pair<std::string, std::string>> pairs);
  bool empty() const { return !pairs_ || pairs_->empty(); }
  // Replaces in place: `data` gets what was held back before it, and gives
  // up the tail that could start a `from`; what is left may be sent now.
  void feed(std::string& data);
  // The tail held back, at the end of the stream.
  std::string finish();
  // One whole text (a header value), in place; the count replaced.
  std::size_t replace_in(std::string& text) const;

 private:
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>> pairs_;
  std::string held_;
};

// Replaces every `from` in `text` by `to` (any lengths); the count replaced.
std::size_t replace_all(std::string& text, std::string_view from, std::string_view to);

// The spellings of a token that the broker looks for: as is, hex (both
// cases), and base64 / base64url at each of the three alignments it can have
// inside a longer encoded text (the characters that depend on it alone).
// Without `dedupe`, the list always has the same length and order for tokens of
// the same length, so the forms of a secret and of its placeholder pair up.
std::vector<std::string> encoded_forms(std::string_view token, bool dedupe = true);

}  // namespace px::broker
