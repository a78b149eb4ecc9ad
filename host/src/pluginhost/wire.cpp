#include "pluginhost/wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace px::pluginhost::wire {

namespace {

// Decoding: a field of the wrong type throws nlohmann's type_error, caught
// once per answer (as()).
template <class T>
T field(const Json& j, const char* key) {
  return j.at(key).get<T>();
}

template <class T, class F>
Result<T> as(const Json& j, F&& read) {
  try {
    return read(j);
  } catch (const Json::exception& e) {
    return Error::plugin(std::string("its answer was malformed (") + e.what() + ")");
  }
}

}  // namespace

std::string encode(const Json& value) {
  std::string out;
  Json::to_cbor(value, out);
  return out;
}

Result<Json> decode(std::string_view bytes) {
  Json j = Json::from_cbor(bytes.begin(), bytes.end(), /*strict=*/true, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error::plugin("its answer was not readable (not CBOR)");
  return j;
}

Json to_json(const CommandLine& c) {
  return {{"argv", c.argv}, {"path", c.resolved_path}, {"real", c.resolved_real}};
}

Result<CommandLine> command_line(const Json& j) {
  return as<CommandLine>(j, [](const Json& v) {
    return CommandLine{field<std::vector<std::string>>(v, "argv"), field<std::string>(v, "path"),
                       field<std::string>(v, "real")};
  });
}

Json to_json(const std::optional<Detection>& d) {
  if (!d) return nullptr;
  return {{"confidence", d->confidence}, {"reason", d->reason}};
}

Result<std::optional<Detection>> detection(const Json& j) {
  return as<std::optional<Detection>>(j, [](const Json& v) -> std::optional<Detection> {
    if (v.is_null()) return std::nullopt;
    return Detection{field<int>(v, "confidence"), field<std::string>(v, "reason")};
  });
}

Json to_json(const policy::HarnessContribution& c) {
  Json paths = Json::array(), env = Json::array(), dirs = Json::array(), nested = Json::array(),
       hosts = Json::array(), credentials = Json::array();
  for (const auto& p : c.paths)
    paths.push_back({{"path", p.path}, {"kind", static_cast<int>(p.kind)}, {"reason", p.reason}});
  for (const auto& e : c.env)
    env.push_back(
        {{"action", static_cast<int>(e.action)}, {"name", e.name}, {"value", e.value}, {"reason", e.reason}});
  for (const auto& d : c.config_dirs)
    dirs.push_back({{"variable", d.variable}, {"path", d.path}, {"reason", d.reason}});
  for (const auto& n : c.nested)
    nested.push_back(
        {{"kind", static_cast<int>(n.kind)}, {"name", n.name}, {"value", n.value}, {"reason", n.reason}});
  for (const auto& h : c.suggested_hosts) hosts.push_back({{"host", h.host}, {"reason", h.reason}});
  for (const auto& k : c.credentials)
    credentials.push_back({{"variable", k.variable},
                           {"hosts", k.hosts},
                           {"base_url_variable", k.base_url_variable},
                           {"shape", k.shape},
                           {"reason", k.reason}});
  return {{"plugin", c.plugin},  {"harness", c.harness}, {"paths", paths}, {"env", env},
          {"config_dirs", dirs}, {"nested", nested},     {"hosts", hosts}, {"credentials", credentials}};
}

Result<policy::HarnessContribution> contribution(const Json& j) {
  return as<policy::HarnessContribution>(j, [](const Json& v) {
    using C = policy::HarnessContribution;
    C c;
    c.plugin = field<std::string>(v, "plugin");
    c.harness = field<std::string>(v, "harness");
    for (const auto& p : v.at("paths")) {
      const int kind = field<int>(p, "kind");
      if (kind < 0 || kind > static_cast<int>(C::Path::Kind::executable_dir))
        throw Json::other_error::create(501, "a path of an unknown kind", &p);
      c.paths.push_back(
          {field<std::string>(p, "path"), static_cast<C::Path::Kind>(kind), field<std::string>(p, "reason")});
    }
    for (const auto& e : v.at("env")) {
      const int action = field<int>(e, "action");
      if (action < 0 || action > static_cast<int>(C::Env::Action::set))
        throw Json::other_error::create(501, "an environment rule of an unknown kind", &e);
      c.env.push_back({static_cast<C::Env::Action>(action), field<std::string>(e, "name"),
                       field<std::string>(e, "value"), field<std::string>(e, "reason")});
    }
    for (const auto& d : v.at("config_dirs"))
      c.config_dirs.push_back({field<std::string>(d, "variable"), field<std::string>(d, "path"),
                               field<std::string>(d, "reason")});
    for (const auto& n : v.at("nested"))
      c.nested.push_back({field<int>(n, "kind") == static_cast<int>(policy::NestedSandboxSwitch::Kind::arg)
                              ? policy::NestedSandboxSwitch::Kind::arg
                              : policy::NestedSandboxSwitch::Kind::env,
                          field<std::string>(n, "name"), field<std::string>(n, "value"),
                          field<std::string>(n, "reason")});
    for (const auto& h : v.at("hosts"))
      c.suggested_hosts.push_back({field<std::string>(h, "host"), field<std::string>(h, "reason")});
    for (const auto& k : v.at("credentials"))
      c.credentials.push_back({field<std::string>(k, "variable"), field<std::vector<std::string>>(k, "hosts"),
                               field<std::string>(k, "base_url_variable"), field<std::string>(k, "shape"),
                               field<std::string>(k, "reason")});
    return c;
  });
}

Json to_json(const std::vector<SignInStep>& steps) {
  Json out = Json::array();
  for (const auto& s : steps)
    out.push_back(
        {{"copy", s.kind == SignInStep::Kind::copy_file}, {"from", s.from}, {"to", s.to}, {"text", s.text}});
  return out;
}

Result<std::vector<SignInStep>> sign_in_steps(const Json& j) {
  return as<std::vector<SignInStep>>(j, [](const Json& v) {
    std::vector<SignInStep> out;
    for (const auto& s : v)
      out.push_back({field<bool>(s, "copy") ? SignInStep::Kind::copy_file : SignInStep::Kind::instruction,
                     field<std::string>(s, "from"), field<std::string>(s, "to"),
                     field<std::string>(s, "text")});
    return out;
  });
}

Json to_json(TranscriptSessions&& t) {
  Json warnings = Json::array();
  for (const auto& [path, message] : t.warnings) warnings.push_back({path, message});
  Json out = {{"warnings", std::move(warnings)}};
  // Sessions sent as parts (the plugins' process does) are added as "parts" by
  // the host's reader; here, the same field.
  if (!t.sessions.empty()) {
    Json& parts = out["parts"] = Json::array();
    for (auto& s : t.sessions) parts.push_back(std::move(s));
  }
  return out;
}

Result<TranscriptSessions> transcript_sessions(Json&& j) {
  return as<TranscriptSessions>(j, [&j](const Json&) {
    TranscriptSessions t;
    if (j.contains("parts"))
      for (auto& s : j.at("parts")) t.sessions.push_back(std::move(s.get_ref<std::string&>()));
    for (const auto& w : j.at("warnings"))
      t.warnings.emplace_back(w.at(0).get<std::string>(), w.at(1).get<std::string>());
    return t;
  });
}

Json to_json(const std::vector<std::string>& strings) {
  return strings;
}

Result<std::vector<std::string>> strings(const Json& j) {
  return as<std::vector<std::string>>(j, [](const Json& v) { return v.get<std::vector<std::string>>(); });
}

Json to_json(const policy::ProjectFiles& f) {
  Json files = Json::array();
  for (const auto& x : f.files) files.push_back({x.path, x.reason});
  return {{"plugin", f.plugin}, {"harness", f.harness}, {"files", files}};
}

Result<policy::ProjectFiles> project_files(const Json& j) {
  return as<policy::ProjectFiles>(j, [](const Json& v) {
    policy::ProjectFiles f;
    f.plugin = field<std::string>(v, "plugin");
    f.harness = field<std::string>(v, "harness");
    for (const auto& x : v.at("files"))
      f.files.push_back({x.at(0).get<std::string>(), x.at(1).get<std::string>()});
    return f;
  });
}

Json to_json(const policy::DeclaredHomeFiles& f) {
  Json files = Json::array();
  for (const auto& x : f.files) {
    Json keys = Json::array();
    for (const auto& k : x.keys) keys.push_back({k.pattern, static_cast<int>(k.kind), k.reason});
    files.push_back({{"path", x.path},
                     {"directory", x.directory},
                     {"kind", static_cast<int>(x.kind)},
                     {"format", static_cast<int>(x.format)},
                     {"keys", keys},
                     {"reason", x.reason}});
  }
  return {{"plugin", f.plugin}, {"harness", f.harness}, {"files", files}};
}

Result<policy::DeclaredHomeFiles> home_files(const Json& j) {
  return as<policy::DeclaredHomeFiles>(j, [](const Json& v) {
    // Anything but data and scratch reads as settings: held back, never written.
    const auto kind = [](int k) {
      return k == static_cast<int>(policy::HomeKind::data)      ? policy::HomeKind::data
             : k == static_cast<int>(policy::HomeKind::scratch) ? policy::HomeKind::scratch
                                                                : policy::HomeKind::settings;
    };
    const auto format = [](int f) {
      return f == static_cast<int>(policy::HomeFormat::json)   ? policy::HomeFormat::json
             : f == static_cast<int>(policy::HomeFormat::toml) ? policy::HomeFormat::toml
                                                               : policy::HomeFormat::whole;
    };
    policy::DeclaredHomeFiles f;
    f.plugin = field<std::string>(v, "plugin");
    f.harness = field<std::string>(v, "harness");
    for (const auto& x : v.at("files")) {
      policy::DeclaredHomeFiles::File file;
      file.path = field<std::string>(x, "path");
      file.directory = field<bool>(x, "directory");
      file.kind = kind(field<int>(x, "kind"));
      file.format = format(field<int>(x, "format"));
      file.reason = field<std::string>(x, "reason");
      for (const auto& k : x.at("keys"))
        file.keys.push_back(
            {k.at(0).get<std::string>(), kind(k.at(1).get<int>()), k.at(2).get<std::string>()});
      f.files.push_back(std::move(file));
    }
    return f;
  });
}

Json to_json(const PluginInfo& i) {
  return {{"name", i.name},
          {"version", i.version},
          {"description", i.description},
          {"harness", i.harness},
          {"abi_major", i.abi_major},
          {"abi_minor", i.abi_minor},
          {"transcripts", i.has_transcripts},
          {"sign_in", i.has_sign_in}};
}

Result<PluginInfo> plugin_info(const Json& j) {
  return as<PluginInfo>(j, [](const Json& v) {
    return PluginInfo{field<std::string>(v, "name"),        field<std::string>(v, "version"),
                      field<std::string>(v, "description"), field<std::string>(v, "harness"),
                      field<int>(v, "abi_major"),           field<int>(v, "abi_minor"),
                      field<bool>(v, "transcripts"),        field<bool>(v, "sign_in")};
  });
}

namespace {

// The frame's length, then `prefix` and `bytes` (its content).
bool write_frame_of(int fd, std::string_view prefix, std::string_view bytes) {
  if (bytes.size() > kMaxFrame - prefix.size()) return false;
  const std::uint32_t n = static_cast<std::uint32_t>(prefix.size() + bytes.size());
  unsigned char head[4] = {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                           static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
  auto all = [fd](const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      // MSG_NOSIGNAL: a gone peer is an answer (false), not a SIGPIPE.
      const ssize_t w = ::send(fd, p, size, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      size -= static_cast<std::size_t>(w);
    }
    return true;
  };
  return all(head, sizeof head) && all(prefix.data(), prefix.size()) && all(bytes.data(), bytes.size());
}

}  // namespace

bool write_frame(int fd, std::string_view bytes) {
  return write_frame_of(fd, {}, bytes);
}

bool write_part(int fd, std::string_view text) {
  return write_frame_of(fd, std::string_view(&kPart, 1), text);
}

bool is_part(const std::string& frame) {
  return !frame.empty() && frame.front() == kPart;
}

std::string part_text(std::string&& frame) {
  frame.erase(0, 1);
  return std::move(frame);
}

std::string_view part_view(const std::string& frame) {
  return std::string_view(frame).substr(1);
}

Read read_frame(int fd, std::string& out, std::chrono::steady_clock::time_point deadline) {
  // Reads exactly `size` bytes, waiting for each part until the deadline.
  auto all = [&](char* p, std::size_t size) -> Read {
    while (size > 0) {
      if (deadline != std::chrono::steady_clock::time_point::max()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Read::timeout;
        pollfd pfd{fd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count() + 1, 60'000)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return Read::closed;
        if (ready == 0) continue;  // the loop checks the deadline
      }
      const ssize_t r = ::read(fd, p, size);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return Read::closed;
      p += r;
      size -= static_cast<std::size_t>(r);
    }
    return Read::frame;
  };
  char head[4];
  if (const Read r = all(head, sizeof head); r != Read::frame) return r;
  const auto byte = [&](int i) { return std::uint32_t{static_cast<unsigned char>(head[i])}; };
  const std::uint32_t n = (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3);
  if (n > kMaxFrame) return Read::closed;
  out.assign(n, '\0');
  return all(out.data(), n);
}

}  // namespace px::pluginhost::wire
