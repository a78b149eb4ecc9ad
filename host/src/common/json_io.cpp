#include "common/json_io.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace px {
namespace {

using Ordered = nlohmann::ordered_json;

// Builds the value from nlohmann's parse events. An object's members wait in a
// vector of movable pairs until its end, then go into its ordered map at once,
// its room reserved: nothing is copied. Arrays hold movable values and are
// filled in place. Nesting is a vector of frames, not recursion (the depth was
// checked before, all the same).
class OrderedBuilder final : public nlohmann::json_sax<Ordered> {
 public:
  Ordered take() { return std::move(root_); }

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t&) override { return false; }  // JSON text holds none

  bool start_object(std::size_t) override {
    frames_.push_back(Frame{true, {}, {}, {}});
    return true;
  }
  bool key(string_t& k) override {
    frames_.back().key = std::move(k);
    return true;
  }
  bool end_object() override {
    Frame done = std::move(frames_.back());
    frames_.pop_back();
    Ordered object(Ordered::value_t::object);
    auto& members = object.get_ref<Ordered::object_t&>();
    members.reserve(done.members.size());  // no reallocation: the index's views stay valid
    // A key given twice keeps its first place and its last value, as
    // ordered_json::parse does. That parse finds each key by a search of the
    // members before it: 40,000 keys took 3 s, a plugin's session of a million
    // would hang the command. Past a few members an index finds them.
    if (done.members.size() <= kLinearMembers) {
      for (auto& [k, v] : done.members) members[std::move(k)] = std::move(v);
    } else {
      std::unordered_map<std::string_view, std::size_t> index;
      index.reserve(done.members.size());
      for (auto& [k, v] : done.members) {
        if (auto it = index.find(k); it != index.end()) {
          (members.begin() + static_cast<std::ptrdiff_t>(it->second))->second = std::move(v);
          continue;
        }
        members.emplace_back(std::move(k), std::move(v));
        index.emplace(members.back().first, members.size() - 1);
      }
    }
    return add(std::move(object));
  }
  bool start_array(std::size_t) override {
    frames_.push_back(Frame{false, {}, Ordered::array(), {}});
    return true;
  }
  bool end_array() override {
    Ordered array = std::move(frames_.back().array);
    frames_.pop_back();
    return add(std::move(array));
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  static constexpr std::size_t kLinearMembers = 16;

  struct Frame {
    bool object;
    std::vector<std::pair<std::string, Ordered>> members;  // an object's, in order
    Ordered array;                                         // an array's
    std::string key;                                       // the member being read
  };

  bool add(Ordered v) {
    if (frames_.empty()) {
      root_ = std::move(v);
    } else if (Frame& f = frames_.back(); f.object) {
      f.members.emplace_back(std::move(f.key), std::move(v));
    } else {
      f.array.get_ref<Ordered::array_t&>().push_back(std::move(v));
    }
    return true;
  }

  std::vector<Frame> frames_;
  Ordered root_;
};

}  // namespace

nlohmann::ordered_json parse_ordered_json(std::string_view text, JsonComments comments) {
  OrderedBuilder builder;
  // strict: nothing but white space after the value.
  if (!Ordered::sax_parse(text, &builder, nlohmann::detail::input_format_t::json, /*strict=*/true,
                          /*ignore_comments=*/comments == JsonComments::ignored))
    return Ordered(Ordered::value_t::discarded);
  return builder.take();
}

bool json_nests_deeper_than(std::string_view text, int max_depth, JsonComments comments) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    // A comment is skipped whole, as the parser skips it: otherwise a quote in
    // one would hide the brackets after it from this count, not from the parser.
    if (comments == JsonComments::ignored && c == '/' && i + 1 < text.size()) {
      if (text[i + 1] == '/') {
        const std::size_t end = text.find('\n', i);
        i = end == std::string_view::npos ? text.size() : end;
        continue;
      }
      if (text[i + 1] == '*') {
        const std::size_t end = text.find("*/", i + 2);
        i = end == std::string_view::npos ? text.size() : end + 1;
        continue;
      }
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace px
