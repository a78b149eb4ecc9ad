#include "report/session_text.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace px::report {
namespace {

namespace od = simdjson::ondemand;

// A string as nlohmann's dump writes it (ensure_ascii off): its two-character
// escapes, the other control characters as \u00xx, every other byte as it is.
// The text was checked to be UTF-8 and masking replaces whole characters with
// ASCII, so what is copied is UTF-8 still.
void append_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t run = 0;  // the start of the bytes not yet copied, none of them escaped
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s, run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        char escaped[7];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      }
    }
  }
  out.append(s, run);
  out += '"';
}

class Writer {
 public:
  // `keys`: kMaxJsonDepth lists (fixed: a reference into it is held across the members' own
  // objects), one per depth, for the keys of the object being read there.
  using Keys = std::vector<std::vector<std::string_view>>;
  Writer(std::string& out, Keys& keys, int indent) : out_(out), keys_(keys), base_(indent) {}

  // Reads the document's one object and writes it; the reason when it cannot.
  Status document(od::document& doc) {
    od::object top;
    if (const auto e = doc.get_object().get(top)) return fail(e);
    PX_TRY(object(top, 1, base_));
    // Past the object's end there is no location to be had, unless something follows it.
    if (!doc.current_location().error()) return Error::invalid("it holds more than one JSON value");
    return ok();
  }

 private:
  static Error fail(simdjson::error_code e) {
    if (e == simdjson::INCORRECT_TYPE) return Error::invalid("it is not a JSON object");
    return Error::invalid(std::string("it is not valid JSON: ") + simdjson::error_message(e));
  }

  void newline(int indent) {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(indent), ' ');
  }

  Status object(od::object& o, int depth, int indent) {
    if (depth > kMaxJsonDepth) return Error::invalid("it nests deeper than " + std::to_string(kMaxJsonDepth));
    // The keys met, sorted at the end to find a repeat: a DOM keeps one of the
    // two values, and which one a reader of the printed text keeps is anyone's guess.
    auto& keys = keys_[static_cast<std::size_t>(depth) - 1];
    keys.clear();
    out_ += '{';
    for (auto member : o) {
      od::field field;
      std::string_view key;
      if (const auto e = std::move(member).get(field)) return fail(e);
      if (const auto e = field.unescaped_key().get(key)) return fail(e);
      out_ += keys.empty() ? "" : ",";
      newline(indent + 2);
      append_string(out_, key);
      out_ += ": ";
      keys.push_back(key);
      PX_TRY(value(field.value(), depth, indent + 2));
    }
    if (!keys.empty()) newline(indent);
    out_ += '}';
    std::sort(keys.begin(), keys.end());
    if (const auto twice = std::adjacent_find(keys.begin(), keys.end()); twice != keys.end())
      return Error::invalid("an object in it has the key \"" + std::string(*twice) + "\" twice");
    return ok();
  }

  Status array(od::array& a, int depth, int indent) {
    if (depth > kMaxJsonDepth) return Error::invalid("it nests deeper than " + std::to_string(kMaxJsonDepth));
    out_ += '[';
    bool any = false;
    for (auto element : a) {
      od::value v;
      if (const auto e = std::move(element).get(v)) return fail(e);
      out_ += any ? "," : "";
      newline(indent + 2);
      any = true;
      PX_TRY(value(v, depth, indent + 2));
    }
    if (any) newline(indent);
    out_ += ']';
    return ok();
  }

  // `depth`: that of the object or array holding `v`.
  Status value(od::value v, int depth, int indent) {
    od::json_type type;
    if (const auto e = v.type().get(type)) return fail(e);
    switch (type) {
      case od::json_type::object: {
        od::object o;
        if (const auto e = v.get_object().get(o)) return fail(e);
        return object(o, depth + 1, indent);
      }
      case od::json_type::array: {
        od::array a;
        if (const auto e = v.get_array().get(a)) return fail(e);
        return array(a, depth + 1, indent);
      }
      case od::json_type::string: {
        std::string_view s;
        if (const auto e = v.get_string().get(s)) return fail(e);
        append_string(out_, redact(s));
        return ok();
      }
      case od::json_type::number: {
        // The token's text once it is checked to be a number: the plugin's own
        // digits, which are JSON's (a token that only starts like a number fails).
        std::string_view token = v.raw_json_token();
        od::number n;
        if (const auto e = v.get_number().get(n)) return fail(e);
        while (!token.empty() &&
               (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r'))
          token.remove_suffix(1);
        out_ += token;
        return ok();
      }
      case od::json_type::boolean: {
        bool b = false;
        if (const auto e = v.get_bool().get(b)) return fail(e);
        out_ += b ? "true" : "false";
        return ok();
      }
      case od::json_type::null: {
        bool null = false;
        if (const auto e = v.is_null().get(null)) return fail(e);
        if (!null) return fail(simdjson::N_ATOM_ERROR);
        out_ += "null";
        return ok();
      }
    }
    return fail(simdjson::INCORRECT_TYPE);
  }

  std::string& out_;
  Keys& keys_;  // views into the parser's strings
  int base_;
};

}  // namespace

struct SessionMasker::State {
  od::parser parser;
  std::string padded;  // the text, then the padding On-Demand reads past its end
  std::string out;
  Writer::Keys keys = Writer::Keys(kMaxJsonDepth);
};

SessionMasker::SessionMasker() : state_(std::make_unique<State>()) {}
SessionMasker::~SessionMasker() = default;

Result<std::string_view> SessionMasker::masked(std::string_view text, int indent) {
  State& s = *state_;
  s.padded.assign(text);
  s.padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (const auto e = s.parser.iterate(s.padded.data(), text.size(), s.padded.size()).get(doc))
    return Error::invalid(std::string("it is not valid JSON: ") + simdjson::error_message(e));
  s.out.clear();
  Writer writer(s.out, s.keys, indent);
  PX_TRY(writer.document(doc));
  return std::string_view(s.out);
}

}  // namespace px::report
