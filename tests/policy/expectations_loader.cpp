#include "expectations_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <set>

#include "policy/profile.hpp"
#include "test_paths.hpp"

namespace px::expectations {

namespace {

struct Reader {
  std::string file;
  std::optional<Error> error;

  int line(const YAML::Node& n) const { return n.Mark().line + 1; }

  void fail(const YAML::Node& n, const std::string& key, const std::string& what) {
    if (!error) error = Error::invalid(file + ":" + std::to_string(line(n)) + ": " + key + ": " + what);
  }

  bool keys(const YAML::Node& map, const std::string& where, const std::set<std::string>& allowed) {
    if (!map.IsMap()) {
      fail(map, where, "expected a mapping");
      return false;
    }
    for (const auto& kv : map) {
      const std::string k = kv.first.Scalar();
      if (!allowed.count(k)) {
        fail(kv.first, where.empty() ? k : where + "." + k, "unknown key");
        return false;
      }
    }
    return true;
  }

  std::optional<std::string> scalar(const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar()) {
      fail(n, key, "expected a single value");
      return std::nullopt;
    }
    return n.Scalar();
  }

  std::optional<bool> boolean(const YAML::Node& n, const std::string& key) {
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
      fail(n, key, "expected true or false");
      return std::nullopt;
    }
    return v;
  }

  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) {
    std::vector<std::string> out;
    if (!n || n.IsNull()) return out;
    if (!n.IsSequence()) {
      fail(n, key, "expected a list");
      return out;
    }
    for (const auto& item : n)
      if (auto s = scalar(item, key)) out.push_back(*s);
    return out;
  }
};

void read_setup(Reader& r, const YAML::Node& s, Setup& out) {
  if (!r.keys(s, "setup", {"profiles", "agent", "grants", "network", "files"})) return;
  out.profiles = r.strings(s["profiles"], "setup.profiles");
  if (auto a = s["agent"]) out.agent = r.boolean(a, "setup.agent").value_or(false);
  if (auto g = s["grants"]; g && !g.IsNull()) {
    if (!g.IsSequence()) return r.fail(g, "setup.grants", "expected a list");
    for (const auto& item : g) {
      if (!r.keys(item, "setup.grants", {"path", "access"})) return;
      Grant grant;
      if (!item["path"]) return r.fail(item, "setup.grants", "a grant needs 'path'");
      grant.path = r.scalar(item["path"], "setup.grants.path").value_or("");
      if (auto acc = item["access"]) {
        const auto v = r.scalar(acc, "setup.grants.access");
        if (v == "ro")
          grant.access = policy::Access::read;
        else if (v == "rw")
          grant.access = policy::Access::write;
        else if (v)
          return r.fail(acc, "setup.grants.access", "'" + *v + "' is not ro or rw");
      }
      out.grants.push_back(grant);
    }
  }
  if (auto n = s["network"]) {
    if (!r.keys(n, "setup.network", {"online", "offline", "allow", "local_servers"})) return;
    if (auto v = n["online"]) out.online = r.boolean(v, "setup.network.online").value_or(false);
    if (auto v = n["offline"]) out.offline = r.boolean(v, "setup.network.offline").value_or(false);
    out.allow = r.strings(n["allow"], "setup.network.allow");
    if (auto v = n["local_servers"]) out.local_servers = r.boolean(v, "setup.network.local_servers");
  }
  out.files = r.strings(s["files"], "setup.files");
}

void read_rows(Reader& r, const YAML::Node& rows, std::vector<Row>& out) {
  if (!rows.IsSequence()) return r.fail(rows, "rows", "expected a list");
  for (const auto& item : rows) {
    if (!r.keys(item, "rows", {"op", "path", "host", "port", "expect"})) return;
    Row row;
    row.line = r.line(item);
    if (!item["op"] || !item["expect"]) return r.fail(item, "rows", "a row needs 'op' and 'expect'");
    const auto op = r.scalar(item["op"], "rows.op");
    if (op == "read")
      row.op = Op::read;
    else if (op == "write")
      row.op = Op::write;
    else if (op == "create_git")
      row.op = Op::create_git;
    else if (op == "connect")
      row.op = Op::connect;
    else if (op)
      return r.fail(item["op"], "rows.op", "'" + *op + "' is not read, write, create_git or connect");
    const auto expect = r.scalar(item["expect"], "rows.expect");
    if (expect == "allowed")
      row.allowed = true;
    else if (expect == "denied")
      row.allowed = false;
    else if (expect)
      return r.fail(item["expect"], "rows.expect", "'" + *expect + "' is not allowed or denied");
    if (row.op == Op::connect) {
      if (!item["host"] || item["path"])
        return r.fail(item, "rows", "a connect row needs 'host' and no 'path'");
      row.host = r.scalar(item["host"], "rows.host").value_or("");
      if (auto p = item["port"]) {
        const auto v = r.scalar(p, "rows.port").value_or("");
        int port = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
        if (ec != std::errc() || end != v.data() + v.size() || port < 1 || port > 65535)
          return r.fail(p, "rows.port", "'" + v + "' is not a port between 1 and 65535");
        row.port = static_cast<std::uint16_t>(port);
      }
    } else {
      if (!item["path"] || item["host"] || item["port"])
        return r.fail(item, "rows",
                      "a " + std::string(to_string(row.op)) + " row needs 'path' and no host or port");
      row.path = r.scalar(item["path"], "rows.path").value_or("");
    }
    out.push_back(row);
  }
}

Status write_file(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return Error::io("create " + p.parent_path().string(), ec.value());
  std::ofstream out(p);
  out << "parallex expectation matrix: " << p.filename().string() << "\n";
  if (!out) return Error::io("write " + p.string(), errno);
  return px::ok();
}

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::read:
      return "read";
    case Op::write:
      return "write";
    case Op::create_git:
      return "create_git";
    case Op::connect:
      return "connect";
  }
  return "?";
}

std::string Row::describe(const fs::path& file) const {
  std::string what = op == Op::connect ? host + ":" + std::to_string(port) : path;
  return std::string(to_string(op)) + " " + what + " -> " + (allowed ? "allowed" : "denied") + " (" +
         file.filename().string() + ":" + std::to_string(line) + ")";
}

Result<Expectations> load(const fs::path& file) {
  Expectations e;
  e.file = file;
  Reader r{file.string(), std::nullopt};
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    return Error::not_found("cannot read the expectation file " + file.string());
  } catch (const YAML::Exception& ex) {
    return Error::invalid(file.string() + ":" + std::to_string(ex.mark.line + 1) +
                          ": malformed YAML: " + ex.msg);
  }
  try {
    if (!r.keys(root, "", {"description", "setup", "rows"})) return *r.error;
    if (auto d = root["description"]) e.description = r.scalar(d, "description").value_or("");
    if (auto s = root["setup"]) read_setup(r, s, e.setup);
    if (!root["rows"])
      r.fail(root, "rows", "the file has no rows");
    else
      read_rows(r, root["rows"], e.rows);
  } catch (const YAML::Exception& ex) {
    return Error::invalid(file.string() + ":" + std::to_string(ex.mark.line + 1) + ": " + ex.msg);
  }
  if (r.error) return *r.error;
  return e;
}

fs::path expectations_dir() {
  return fs::path(PARALLEX_EXPECTATIONS_DIR);
}

std::vector<fs::path> expectation_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".yaml") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string>& layout_files() {
  static const std::vector<std::string> files{
      "{run_folder}/src/main.c",
      "{run_folder}/.git/HEAD",
      "{run_folder}/.git/config",
      "{run_folder}/.git/hooks/pre-commit.sample",
      "{run_folder}/.git/objects/ab/cdef",
      "{run_folder}/.gitmodules",
      "{run_folder}/.vscode/tasks.json",
      "{home}/.ssh/id_ed25519",
      "{home}/.aws/credentials",
      "{home}/.bash_history",
      "{home}/.gitconfig",
      "{home}/.config/gh/config.yml",
      "{home}/.config/gh/hosts.yml",
      "{home}/Documents/notes.txt",
      "{agent_home}/.ssh/id_ed25519",
      "{agent_home}/.bashrc",
      "{agent_home}/.gitconfig",
      "{agent_home}/notes.txt",
      "{temp}/scratch.txt",
      "{outside}/data/input.csv",
      "{outside}/rw/out.txt",
      "{outside}/other/secret.txt",
  };
  return files;
}

Result<Layout> Layout::create(const fs::path& base) {
  fs::path dir = base;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = t && *t ? fs::path(t) : fs::path("/tmp");
  }
  std::string tmpl = (dir / "px-matrix-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return Error::io("mkdtemp " + tmpl, errno);
  Layout l;
  // Resolved, so that the paths the policy holds are the ones the kernel sees.
  l.root = fs::canonical(tmpl);
  l.home = l.root / "home";
  l.run_folder = l.home / "src/project";
  l.agent_home = l.root / "agents/reviewer/home";
  l.temp = l.root / "run-tmp";
  l.outside = l.root / "outside";
  for (const auto& d : {l.home, l.run_folder, l.agent_home, l.temp, l.outside}) fs::create_directories(d);
  for (const auto& f : layout_files()) {
    PX_TRY_ASSIGN(auto path, l.substitute(f));
    PX_TRY(write_file(path));
  }
  return l;
}

Layout::Layout(Layout&& o) noexcept
    : root(std::move(o.root)),
      home(std::move(o.home)),
      agent_home(std::move(o.agent_home)),
      run_folder(std::move(o.run_folder)),
      temp(std::move(o.temp)),
      outside(std::move(o.outside)),
      owned_(o.owned_) {
  o.owned_ = false;
}

Layout::~Layout() {
  if (!owned_ || root.empty()) return;
  std::error_code ec;
  fs::remove_all(root, ec);
}

Result<std::string> Layout::substitute(const std::string& text) const {
  const std::pair<const char*, const fs::path*> names[] = {{"{run_folder}", &run_folder},
                                                           {"{home}", &home},
                                                           {"{agent_home}", &agent_home},
                                                           {"{temp}", &temp},
                                                           {"{outside}", &outside}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    bool matched = false;
    for (const auto& [name, path] : names) {
      if (text.compare(i, std::char_traits<char>::length(name), name) == 0) {
        out += path->string();
        i += std::char_traits<char>::length(name);
        matched = true;
        break;
      }
    }
    if (!matched)
      return Error::invalid("'" + text +
                            "' holds an unknown placeholder; use {run_folder}, {home}, {agent_home}, "
                            "{temp} or {outside}");
  }
  return out;
}

Status Layout::materialize(const Expectations& e) const {
  for (const auto& f : e.setup.files) {
    PX_TRY_ASSIGN(auto path, substitute(f));
    PX_TRY(write_file(path));
  }
  return px::ok();
}

Result<std::vector<Row>> Layout::resolve(const std::vector<Row>& rows) const {
  std::vector<Row> out;
  for (Row row : rows) {
    if (row.op != Op::connect) {
      PX_TRY_ASSIGN(row.path, substitute(row.path));
    }
    out.push_back(std::move(row));
  }
  return out;
}

Result<policy::ComposeInputs> compose_inputs(const Expectations& e, const Layout& layout,
                                             policy::Platform platform) {
  policy::ComposeInputs in;
  in.platform = platform;
  in.user_home = layout.home;
  in.run_folder = layout.run_folder;
  in.temp_dir = layout.temp;
  PX_TRY_ASSIGN(auto def, policy::load_profile("default"));
  in.profiles.push_back(std::move(def));
  for (const auto& name : e.setup.profiles) {
    PX_TRY_ASSIGN(auto p, policy::load_profile(name));
    in.profiles.push_back(std::move(p));
  }
  if (e.setup.agent) {
    in.agent = policy::AgentInputs{};
    in.agent->name = "reviewer";
    in.agent->home = layout.agent_home;
  }
  for (const auto& g : e.setup.grants) {
    PX_TRY_ASSIGN(auto path, layout.substitute(g.path));
    in.grants.push_back({path, g.access, "--grant"});
  }
  in.network.online = e.setup.online;
  in.network.offline = e.setup.offline;
  in.network.allow = e.setup.allow;
  in.network.local_servers = e.setup.local_servers;
  return in;
}

}  // namespace px::expectations
