#include "agents/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <random>
#include <set>
#include <system_error>

#include "agents/git_config.hpp"
#include "agents/names.hpp"
#include "agents/ssh_key.hpp"
#include "agents/token.hpp"
#include "common/clock.hpp"
#include "common/paths.hpp"
#include "common/port.hpp"
#include "common/read_file.hpp"
#include "common/unique_fd.hpp"
#include "policy/ask.hpp"
#include "policy/broker_yaml.hpp"
#include "policy/yaml_values.hpp"

namespace px::agents {

namespace {

std::string now_utc() {
  return iso_utc_seconds(std::time(nullptr));
}

Status make_dir(const fs::path& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST)
    return Error::io("create the folder " + dir.string(), errno);
  // mkdir's mode is masked by the umask; the store's modes are not a matter of taste.
  if (::chmod(dir.c_str(), mode) != 0) return Error::io("set the mode of " + dir.string(), errno);
  return ok();
}

const char* network_name(policy::NetworkMode m) {
  switch (m) {
    case policy::NetworkMode::offline:
      return "offline";
    case policy::NetworkMode::allowlist:
      return "allowlist";
    case policy::NetworkMode::online:
      return "online";
  }
  return "offline";
}

// A random suffix for the name a deleted agent's folder has while it goes.
std::string unique_suffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

}  // namespace

fs::path default_agents_root() {
  return parallex_data_dir() / "agents";
}

AgentPaths paths_of(const fs::path& agents_root, const std::string& name) {
  return {agents_root / name};
}

Status write_file_atomic(const fs::path& file, const std::string& data, unsigned mode) {
  std::string tmpl = (file.parent_path() / ("." + file.filename().string() + ".tmp-XXXXXX")).string();
  UniqueFd fd(::mkstemp(tmpl.data()));
  if (!fd) return Error::io("create a temporary file beside " + file.string(), errno);
  const fs::path tmp = tmpl;
  auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    return Error::io(what, err);
  };
  if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0)
    return fail("set the mode of " + tmp.string(), errno);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write " + file.string(), errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("write " + file.string() + " to disk", errno);
  fd.reset();
  // rename() replaces a symlink at `file` rather than writing through it.
  if (::rename(tmp.c_str(), file.c_str()) != 0) return fail("replace " + file.string(), errno);
  return ok();
}

Result<std::string> read_file(const fs::path& file) {
  return read_regular_file(file, {.max_bytes = 1 << 20, .follow_links = false});
}

std::string config_to_yaml(const AgentConfig& c) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << 1;
  e << YAML::Key << "name" << YAML::Value << c.name;
  e << YAML::Key << "email" << YAML::Value << c.email;
  e << YAML::Key << "created" << YAML::Value << c.created;
  e << YAML::Key << "repos" << YAML::Value << YAML::Flow << c.repos;
  e << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "mode" << YAML::Value << network_name(c.network);
  e << YAML::Key << "allow" << YAML::Value << YAML::Flow << c.allow;
  if (c.local_servers && !c.local_server_ports.empty())
    e << YAML::Key << "local_servers" << YAML::Value << YAML::Flow << c.local_server_ports;
  else
    e << YAML::Key << "local_servers" << YAML::Value << c.local_servers;
  if (c.ask_seconds > 0) e << YAML::Key << "ask" << YAML::Value << c.ask_seconds;
  e << YAML::EndMap;
  e << YAML::Key << "grants" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : c.grants) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "path" << YAML::Value << g.path.string() << YAML::Key
      << "access" << YAML::Value << (g.access == policy::Access::write ? "rw" : "ro") << YAML::EndMap;
  }
  e << YAML::EndSeq;
  if (c.processes)
    e << YAML::Key << "limits" << YAML::Value << YAML::BeginMap << YAML::Key << "processes" << YAML::Value
      << *c.processes << YAML::EndMap;
  if (!c.env.empty()) e << YAML::Key << "env" << YAML::Value << c.env;
  e << YAML::Key << "share_harness_config" << YAML::Value << c.share_harness_config;
  e << YAML::Key << "decoys" << YAML::Value << c.decoys;
  e << YAML::Key << "sealed" << YAML::Value << c.sealed;
  if (!c.broker_yaml.empty()) {
    const YAML::Node kept = YAML::Load(c.broker_yaml);
    for (const char* key : {"requests", "credentials"})
      if (kept[key]) e << YAML::Key << key << YAML::Value << kept[key];
  }
  e << YAML::EndMap;
  return std::string(
             "# The agent's rules. Change them with `parallex agent set`; runs can never write this "
             "file.\n") +
         e.c_str() + "\n";
}

Result<AgentConfig> load_config(const AgentPaths& paths) {
  const fs::path file = paths.config();
  auto text = read_file(file);
  if (!text) {
    return Error{text.error().kind == ErrorKind::not_found ? ErrorKind::not_found : text.error().kind,
                 "The agent's rules file " + file.string() + " cannot be read (" + text.error().message +
                     "). Parallex does not recreate it: restore it from a backup, or delete the agent with "
                     "`parallex agent delete`."};
  }
  auto corrupt = [&](const std::string& why) {
    return Error::invalid("The agent's rules file " + file.string() + " is damaged: " + why +
                          ". Fix it by hand or restore it; Parallex does not overwrite it.");
  };
  AgentConfig c;
  try {
    const YAML::Node root = YAML::Load(text.value());
    if (!root.IsMap()) return corrupt("it is not a YAML map");
    if (auto nul = policy::refuse_nul_in_yaml(root, file.string()); !nul) return corrupt(nul.error().message);
    // Strict, as README says: a misspelt rule (`grant:`, `netwrok:`) must not
    // be silently ignored, nor a key given twice (the first would win).
    static const std::set<std::string> kKeys = {"version",     "name",   "email",
                                                "created",     "repos",  "network",
                                                "grants",      "env",    "share_harness_config",
                                                "decoys",      "sealed", "requests",
                                                "credentials", "limits"};
    std::set<std::string> seen;
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      if (!kKeys.count(key))
        return corrupt("line " + std::to_string(kv.first.Mark().line + 1) + ": unknown key '" + key + "'");
      if (!seen.insert(key).second)
        return corrupt("line " + std::to_string(kv.first.Mark().line + 1) + ": '" + key + "' is given twice");
    }
    if (const YAML::Node net = root["network"]; net && net.IsMap())
      for (const auto& kv : net)
        if (const std::string key = kv.first.Scalar();
            key != "mode" && key != "allow" && key != "local_servers" && key != "ask")
          return corrupt("line " + std::to_string(kv.first.Mark().line + 1) + ": unknown key 'network." +
                         key + "' (mode, allow, local_servers and ask are known)");
    if (!root["version"] || root["version"].as<int>() != 1)
      return corrupt("'version: 1' is missing or another version");
    if (!root["name"] || !root["email"]) return corrupt("'name' or 'email' is missing");
    c.name = root["name"].as<std::string>();
    c.email = root["email"].as<std::string>();
    if (c.name != paths.root.filename().string())
      return corrupt("it names the agent '" + c.name + "' but lies in the folder of '" +
                     paths.root.filename().string() + "'");
    if (auto s = check_email(c.email); !s) return corrupt(s.error().message);
    if (root["created"]) c.created = root["created"].as<std::string>();
    if (root["repos"]) c.repos = root["repos"].as<std::vector<std::string>>();
    for (const auto& r : c.repos)
      if (auto s = check_repo(r); !s) return corrupt("the repository '" + r + "' is not OWNER/REPO");
    const YAML::Node net = root["network"];
    if (!net || !net.IsMap() || !net["mode"]) return corrupt("'network.mode' is missing");
    const std::string mode = net["mode"].as<std::string>();
    if (mode == "offline")
      c.network = policy::NetworkMode::offline;
    else if (mode == "allowlist")
      c.network = policy::NetworkMode::allowlist;
    else if (mode == "online")
      c.network = policy::NetworkMode::online;
    else
      return corrupt("'network.mode' is '" + mode + "', not offline, allowlist or online");
    if (net["allow"]) c.allow = net["allow"].as<std::vector<std::string>>();
    for (const auto& h : c.allow)
      if (auto why = policy::check_host_pattern(h); !why.empty())
        return corrupt("the host '" + h + "': " + why);
    if (const YAML::Node local = net["local_servers"]) {
      if (local.IsSequence()) {
        // `local_servers: [3000, 5432]`: on, for these ports only.
        for (const auto& port : local) {
          const auto value = parse_port(port.IsScalar() ? port.Scalar() : "");
          if (!value) return corrupt("'network.local_servers' lists a port that is not 1-65535");
          c.local_server_ports.push_back(*value);
        }
        c.local_servers = !c.local_server_ports.empty();
      } else {
        c.local_servers = local.as<bool>();
      }
    }
    if (const YAML::Node ask = net["ask"]) {
      auto seconds = policy::parse_ask(ask.IsScalar() ? ask.Scalar() : "?", "network.ask");
      if (!seconds) return corrupt(seconds.error().message);
      c.ask_seconds = static_cast<std::uint32_t>(seconds.value().count());
    }
    if (const YAML::Node env = root["env"]) {
      if (!env.IsSequence()) return corrupt("'env' is not a list of NAME or NAME=VALUE");
      for (const auto& item : env) {
        const std::string spec = item.as<std::string>();
        if (auto why = policy::check_env_name(spec.substr(0, spec.find('='))); !why.empty())
          return corrupt("'env': " + why);
        c.env.push_back(spec);
      }
    }
    if (const YAML::Node grants = root["grants"]) {
      if (!grants.IsSequence()) return corrupt("'grants' is not a list");
      for (const auto& g : grants) {
        if (!g.IsMap() || !g["path"]) return corrupt("a grant has no 'path'");
        Grant grant{g["path"].as<std::string>(), policy::Access::read};
        if (!grant.path.is_absolute())
          return corrupt("the grant '" + grant.path.string() + "' is not absolute");
        const std::string access = g["access"] ? g["access"].as<std::string>() : "ro";
        if (access == "rw")
          grant.access = policy::Access::write;
        else if (access != "ro")
          return corrupt("a grant's access is '" + access + "', not ro or rw");
        c.grants.push_back(std::move(grant));
      }
    }
    if (const YAML::Node limits = root["limits"]) {
      if (!limits.IsMap()) return corrupt("'limits' is not a map (limits: {processes: N})");
      for (const auto& kv : limits)
        if (kv.first.Scalar() != "processes")
          return corrupt("line " + std::to_string(kv.first.Mark().line + 1) + ": unknown key 'limits." +
                         kv.first.Scalar() + "' (processes is known)");
      if (const YAML::Node n = limits["processes"]) {
        const auto value = n.as<std::uint64_t>();
        if (auto why = policy::check_process_limit(value); !why.empty())
          return corrupt("'limits.processes': " + why);
        c.processes = value;
      }
    }
    if (root["share_harness_config"]) c.share_harness_config = root["share_harness_config"].as<bool>();
    if (root["sealed"]) c.sealed = root["sealed"].as<bool>();
    if (root["decoys"]) c.decoys = root["decoys"].as<bool>();
    if (root["requests"] || root["credentials"]) {
      YAML::Node kept;
      for (const char* key : {"requests", "credentials"})
        if (root[key]) kept[key] = root[key];
      c.broker_yaml = YAML::Dump(kept);
    }
  } catch (const YAML::Exception& e) {
    return corrupt(e.what());
  }
  if (!c.broker_yaml.empty()) {
    // Read from the file itself, so that a problem names its line.
    auto sections = policy::parse_broker_sections(text.value(), file.string());
    if (!sections) return sections.error();
    c.broker = std::move(sections).value();
  }
  return c;
}

Status save_config(const AgentPaths& paths, const AgentConfig& config) {
  return write_file_atomic(paths.config(), config_to_yaml(config), 0600);
}

Status check_layout(const AgentPaths& paths) {
  std::error_code ec;
  for (const fs::path& dir : {paths.home(), paths.keys(), paths.gh()}) {
    if (!fs::is_directory(fs::symlink_status(dir, ec)))
      return Error::not_found(
          "The agent's folder " + dir.string() +
          " is missing or not a folder. Parallex does not recreate it: restore it, or delete the "
          "agent with `parallex agent delete` and make it again.");
  }
  for (const fs::path& file : {paths.private_key(), paths.public_key()}) {
    if (!fs::is_regular_file(fs::symlink_status(file, ec)))
      return Error::not_found(
          "The agent's signing key " + file.string() +
          " is missing. Parallex does not make a new one silently: restore it, or delete the "
          "agent and make it again (then add the new key on GitHub).");
  }
  return ok();
}

Result<AgentPaths> create_agent(const fs::path& agents_root, const AgentConfig& config, const fs::path& exe) {
  PX_TRY(check_name(config.name));
  PX_TRY(check_email(config.email));
  // The key first: when it cannot be made, nothing of the agent is made yet.
  PX_TRY_ASSIGN(auto key, generate_ed25519(config.name + " (agent) <" + config.email + ">"));
  const fs::path data_dir = agents_root.parent_path();
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) return Error::io("create the folder " + data_dir.string(), ec.value());
  PX_TRY(make_dir(agents_root, 0700));

  const AgentPaths final = paths_of(agents_root, config.name);
  if (fs::exists(fs::symlink_status(final.root, ec)))
    return Error::conflict("An agent named '" + config.name + "' already exists (" + final.root.string() +
                           "). Choose another name, or delete it first with `parallex agent delete " +
                           config.name + "`.");

  std::string tmpl = (agents_root / (".new-" + config.name + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    return Error::io("create a temporary folder in " + agents_root.string(), errno);
  const AgentPaths tmp{fs::path(tmpl)};
  auto built = [&]() -> Status {
    PX_TRY(make_dir(tmp.root, 0700));
    for (const fs::path& d : {tmp.home(), tmp.keys(), tmp.gh(), tmp.snapshots()}) PX_TRY(make_dir(d, 0700));
    PX_TRY(make_dir(tmp.no_hooks(), 0500));
    AgentConfig c = config;
    if (c.created.empty()) c.created = now_utc();
    PX_TRY(save_config(tmp, c));
    PX_TRY(write_file_atomic(tmp.private_key(), key.private_key, 0600));
    PX_TRY(write_file_atomic(tmp.public_key(), key.public_key, 0600));
    PX_TRY(write_file_atomic(tmp.allowed_signers(), render_allowed_signers(c.email, key.public_key), 0600));
    PX_TRY_ASSIGN(auto gitconfig, render_gitconfig(final, c, exe));
    PX_TRY(write_file_atomic(tmp.gitconfig(), gitconfig, 0644));
    PX_TRY(store_placeholder(tmp.gh(), c.name));
    return ok();
  }();
  if (!built) {
    fs::remove_all(tmp.root, ec);
    return std::move(built).error();
  }
  // RENAME_NOREPLACE: of two concurrent creations, exactly one lands.
  if (::renameat2(AT_FDCWD, tmp.root.c_str(), AT_FDCWD, final.root.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    fs::remove_all(tmp.root, ec);
    if (err == EEXIST || err == ENOTEMPTY)
      return Error::conflict("An agent named '" + config.name + "' already exists (" + final.root.string() +
                             "); it was made at the same moment by another command. Nothing was changed.");
    return Error::io("move the new agent into " + final.root.string(), err);
  }
  // Its run records' folder, in the state folder (or in its own folder, for a store outside the data folder).
  fs::create_directories(final.runs(), ec);
  if (ec) return Error::io("create " + final.runs().string(), ec.value());
  ::chmod(final.runs().c_str(), 0700);
  // The state folder's agents/ lists agent names, as the data folder's does: the user's alone.
  if (!is_within(final.runs(), final.root)) ::chmod(final.runs().parent_path().parent_path().c_str(), 0700);
  return final;
}

Result<AgentPaths> find_agent(const fs::path& agents_root, const std::string& name) {
  PX_TRY(check_name(name));
  const AgentPaths p = paths_of(agents_root, name);
  std::error_code ec;
  const auto st = fs::symlink_status(p.root, ec);
  if (!fs::exists(st))
    return Error::not_found("There is no agent named '" + name + "' (looked in " + agents_root.string() +
                            "). `parallex agent list` shows the agents; `parallex agent new` makes one.");
  if (!fs::is_directory(st))
    return Error::invalid("The agent's folder " + p.root.string() + " is not a folder; move it aside.");
  return p;
}

Result<std::vector<std::string>> list_agents(const fs::path& agents_root) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(agents_root, ec)) return names;
  for (fs::directory_iterator it(agents_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (check_name(n) && it->is_directory(ec) && !it->is_symlink(ec)) names.push_back(n);
  }
  if (ec) return Error::io("list " + agents_root.string(), ec.value());
  std::sort(names.begin(), names.end());
  return names;
}

Status delete_agent(const AgentPaths& paths) {
  const fs::path aside =
      paths.root.parent_path() / (".deleting-" + paths.root.filename().string() + "-" + unique_suffix());
  if (::renameat2(AT_FDCWD, paths.root.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) != 0)
    return Error::io("move " + paths.root.string() + " aside to delete it", errno);
  // The key and token are overwritten before they are unlinked (best effort:
  // copy-on-write filesystems and SSDs may keep old blocks).
  const AgentPaths gone{aside};
  for (const fs::path& f : {gone.private_key(), gone.hosts_yml()}) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) continue;
    UniqueFd fd(::open(f.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) continue;
    const std::string zeros(static_cast<std::size_t>(size), '\0');
    if (::write(fd.get(), zeros.data(), zeros.size()) >= 0) (void)::fsync(fd.get());
  }
  // A folder made read-only (no-hooks) would stop remove_all.
  std::error_code ec;
  fs::permissions(gone.no_hooks(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(aside, ec);
  if (ec)
    return Error::io("remove " + aside.string() + " (the agent is already out of the list)", ec.value());
  // Its run records, where they live apart from its folder.
  if (const fs::path runs = paths.runs(); !is_within(runs, paths.root)) {
    fs::remove_all(runs.parent_path(), ec);
    if (ec) return Error::io("remove the agent's run records in " + runs.parent_path().string(), ec.value());
  }
  return ok();
}

}  // namespace px::agents
