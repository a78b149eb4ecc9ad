#include "mcp/browser.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agents/store.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "common/spawn.hpp"
#include "common/temp_dir.hpp"
#include "common/unique_fd.hpp"

extern char** environ;

namespace px::mcp {
namespace {

using Json = nlohmann::json;

// The agents' red, as Chromium stores an SkColor (ARGB in a signed int32).
constexpr std::int32_t kAgentRed = static_cast<std::int32_t>(0xFFD32F2F - 0x100000000LL);
constexpr std::size_t kMaxDom = 1 << 20;

bool no_new_privs() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("NoNewPrivs:", 0) == 0) return line.find('1') != std::string::npos;
  return false;
}

// The browser's own files, which Chromium writes (and which, when the profile lived in the agent's
// home, its runs could write): read as input from outside (a regular file, no link followed, its
// size and nesting bounded: printing a value nested 300,000 deep overflows the stack). Anything
// else starts afresh.
Json read_json(const fs::path& file) {
  auto text = read_regular_file(file, {.max_bytes = 16u << 20, .follow_links = false});
  if (!text) return Json::object();
  Json j = parse_json_input(text.value());
  return j.is_object() ? j : Json::object();
}

Status write_json(const fs::path& file, const Json& j) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_json_text(j, 2) << "\n";
    if (!out) return Error::io("write " + tmp.string(), errno);
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) return Error::io("write " + file.string(), ec.value());
  return ok();
}

// The browser's environment: the caller's, with its home and XDG dirs in
// `home` (the throwaway profile's folder, or the agent's home). Chromium
// writes outside its --user-data-dir too (Crash Reports in
// $XDG_CONFIG_HOME/chromium, caches, ~/.pki): none of it may land in the
// user's home. The display keeps working: XAUTHORITY is set to the user's
// file when the caller relied on the default.
std::vector<std::string> browser_environment(const fs::path& home) {
  std::vector<std::string> env;
  bool has_xauthority = false;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "HOME" || name == "XDG_CONFIG_HOME" || name == "XDG_CACHE_HOME" || name == "XDG_DATA_HOME")
      continue;
    has_xauthority = has_xauthority || name == "XAUTHORITY";
    env.push_back(entry);
  }
  std::error_code ec;
  const fs::path xauthority = user_home() / ".Xauthority";
  if (!has_xauthority && fs::exists(xauthority, ec)) env.push_back("XAUTHORITY=" + xauthority.string());
  env.push_back("HOME=" + home.string());
  env.push_back("XDG_CONFIG_HOME=" + (home / ".config").string());
  env.push_back("XDG_CACHE_HOME=" + (home / ".cache").string());
  env.push_back("XDG_DATA_HOME=" + (home / ".local/share").string());
  return env;
}

std::string tail_of(const fs::path& file, std::size_t n) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > n) s = s.substr(s.size() - n);
  return s;
}

Result<fs::path> make_temp_dir(const std::string& prefix) {
  // Kept: the browser's profile outlives this call (removed when it quits).
  PX_TRY_ASSIGN(auto dir, TempDir::make(prefix));
  return dir.release();
}

std::size_t count_entries(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

// Runs a headless Chromium that dumps the page's DOM (cut at kMaxDom), then
// makes sure no process of its group is left (they would keep writing to the
// profile). What it said on stderr is kept in `log`.
Status run_headless(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::seconds timeout, const fs::path& log, BrowserRun& out) {
  PX_TRY_ASSIGN(Captured got,
                spawn_capture({.argv = argv, .env = env, .own_process_group = true},
                              {.timeout = timeout, .max_bytes = kMaxDom, .end_group_after = true}));
  (void)agents::write_file_atomic(log, got.err, 0600);  // for the user; the run does not need it
  out.pid = got.pid;
  out.exit_status = got.exit_status;
  out.dom = std::move(got.out);
  if (got.timed_out)
    return Error::io("Chromium did not finish loading " + out.url + " within " +
                         std::to_string(timeout.count()) + " s and was stopped",
                     ETIMEDOUT);
  if (out.exit_status != 0 && out.dom.empty())
    return Error::io("Chromium exited with status " + std::to_string(out.exit_status) + " without a page (" +
                         tail_of(log, 600) + ")",
                     EIO);
  out.title = title_of(out.dom);
  return ok();
}

// Windowed: a detached keeper process starts the browser, waits for it and
// then runs `cleanup_dir` removal, so the server never blocks on a window.
Result<long> start_windowed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            const fs::path& cleanup_dir) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::io("create a pipe for the browser", errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t first = ::fork();
  if (first < 0) return Error::io("fork", errno);
  if (first == 0) {
    ::setsid();
    const pid_t keeper = ::fork();
    if (keeper != 0) ::_exit(keeper < 0 ? 1 : 0);
    auto pid = spawn_process({.argv = argv, .env = env, .own_process_group = true});
    const long child = pid ? static_cast<long>(pid.value()) : -1L;
    (void)!::write(write_end.get(), &child, sizeof child);
    write_end.reset();
    if (!pid) ::_exit(1);
    int status = 0;
    while (::waitpid(pid.value(), &status, 0) < 0 && errno == EINTR) {
    }
    ::kill(-pid.value(), SIGKILL);
    if (!cleanup_dir.empty()) {
      std::error_code ec;
      fs::remove_all(cleanup_dir, ec);
    }
    ::_exit(0);
  }
  write_end.reset();
  int status = 0;
  while (::waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  long child = -1;
  if (::read(read_end.get(), &child, sizeof child) != static_cast<ssize_t>(sizeof child) || child <= 0)
    return Error::io("start Chromium (" + argv[0] + ")", EIO);
  return child;
}

bool has_display() {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w);
}

Error no_display() {
  return Error::unsupported(
      "There is no display to open a browser window on (neither DISPLAY nor WAYLAND_DISPLAY is set). Run it "
      "from "
      "a desktop session, or set PARALLEX_BROWSER_HEADLESS=1 to load the page headless and get its content.");
}

}  // namespace

std::optional<fs::path> find_chromium() {
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  if (const char* forced = std::getenv("PARALLEX_CHROMIUM"); forced && *forced)
    return find_executable(forced, path);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"})
    if (auto found = find_executable(name, path)) return found;
  return std::nullopt;
}

Error chromium_missing() {
  return Error::not_found(
      "No Chromium is installed (looked for chromium, chromium-browser and google-chrome on PATH). Install "
      "it "
      "with `apt-get install chromium` (Debian, Ubuntu: `apt-get install chromium-browser`), or point "
      "PARALLEX_CHROMIUM at a Chromium binary.");
}

bool headless_requested() {
  const char* h = std::getenv("PARALLEX_BROWSER_HEADLESS");
  return h && std::string(h) == "1";
}

std::vector<std::string> base_browser_flags(bool headless) {
  std::vector<std::string> flags{"--no-first-run", "--no-default-browser-check",
                                 "--disable-background-networking", "--disable-component-update",
                                 "--disable-sync", "--disable-default-apps",
                                 // Chromium resets its sign-in preference from this switch at every start.
                                 "--allow-browser-signin=false", "--password-store=basic"};
  // Chromium's own sandbox needs setuid or user namespaces: not as root, and
  // not under no_new_privs (a sealed run), where the seal is the boundary.
  if (::geteuid() == 0 || no_new_privs()) flags.push_back("--no-sandbox");
  if (headless) {
    flags.push_back("--headless");
    flags.push_back("--disable-gpu");
  }
  return flags;
}

fs::path agent_browser_dir(const fs::path& agent_root) {
  return agent_root / "browser";
}

fs::path agent_browser_profile_dir(const fs::path& agent_root) {
  return agent_browser_dir(agent_root) / "chromium";
}

Result<AgentBrowserProfile> create_agent_browser_profile(const fs::path& agent_root,
                                                         const std::string& agent_name) {
  AgentBrowserProfile p;
  p.user_data_dir = agent_browser_profile_dir(agent_root);
  p.window_name = agent_name + " (agent)";
  const fs::path profile = p.user_data_dir / "Default";
  std::error_code ec;
  fs::create_directories(profile, ec);
  if (ec) return Error::io("create the agent's browser profile " + profile.string(), ec.value());
  fs::permissions(p.user_data_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  fs::permissions(agent_browser_dir(agent_root), fs::perms::owner_all, fs::perm_options::replace, ec);

  Json prefs = read_json(profile / "Preferences");
  // A red browser frame: the "Customize Chrome" colour, and the older
  // autogenerated theme that earlier Chromium versions read.
  prefs["extensions"]["theme"]["id"] = "user_color_theme_id";
  prefs["extensions"]["theme"]["system_theme"] = 0;
  prefs["browser"]["theme"]["user_color"] = kAgentRed;
  prefs["browser"]["theme"]["color_variant"] = 1;
  prefs["browser"]["theme"]["color_scheme"] = 0;
  prefs["autogenerated"]["theme"]["color"] = kAgentRed;
  prefs["browser"]["has_seen_welcome_page"] = true;
  prefs["browser"]["check_default_browser"] = false;
  // Signed in to nothing, and no way to sign it in to the user's account.
  prefs["signin"]["allowed"] = false;
  prefs["sync"]["requested"] = false;
  prefs["credentials_enable_service"] = false;
  prefs["profile"]["name"] = agent_name + " (agent)";
  prefs["profile"]["avatar_index"] = 26;
  prefs["profile"]["using_default_name"] = false;
  PX_TRY(write_json(profile / "Preferences", prefs));

  Json local = read_json(p.user_data_dir / "Local State");
  local["profile"]["info_cache"]["Default"]["name"] = agent_name + " (agent)";
  local["profile"]["info_cache"]["Default"]["is_using_default_name"] = false;
  local["profile"]["info_cache"]["Default"]["profile_highlight_color"] = kAgentRed;
  local["browser"]["enabled_labs_experiments"] = Json::array();
  PX_TRY(write_json(p.user_data_dir / "Local State", local));

  PX_TRY(write_json(p.user_data_dir / "parallex-agent.json",
                    Json{{"agent", agent_name}, {"theme_color", "#D32F2F"}, {"window_name", p.window_name}}));
  return p;
}

std::string title_of(const std::string& dom) {
  const auto open = dom.find("<title");
  if (open == std::string::npos) return "";
  const auto start = dom.find('>', open);
  const auto end = dom.find("</title>", open);
  if (start == std::string::npos || end == std::string::npos || end < start) return "";
  return dom.substr(start + 1, end - start - 1);
}

Result<BrowserRun> open_clean_browser(const std::string& url, std::chrono::seconds timeout) {
  auto chromium = find_chromium();
  if (!chromium) return chromium_missing();
  BrowserRun out;
  out.url = url;
  out.headless = headless_requested();
  if (!out.headless && !has_display()) return no_display();
  PX_TRY_ASSIGN(out.profile_dir, make_temp_dir("parallex-browser-"));
  out.profile_was_empty = fs::is_empty(out.profile_dir);
  std::vector<std::string> argv{chromium->string()};
  for (auto& f : base_browser_flags(out.headless)) argv.push_back(std::move(f));
  argv.push_back("--user-data-dir=" + out.profile_dir.string());
  if (out.headless) {
    // The log lies beside the profile, never in it, and goes with it.
    const fs::path log = out.profile_dir.string() + ".log";
    argv.push_back("--dump-dom");
    argv.push_back(url);
    Status s = run_headless(argv, browser_environment(out.profile_dir), timeout, log, out);
    out.profile_entries_used = count_entries(out.profile_dir);
    std::error_code ec;
    fs::remove_all(out.profile_dir, ec);
    fs::remove(log, ec);
    out.profile_removed = !fs::exists(out.profile_dir);
    if (!s) return s.error();
    out.note = "Loaded headless in a throwaway profile, which is now removed.";
    return out;
  }
  argv.push_back("--new-window");
  argv.push_back(url);
  PX_TRY_ASSIGN(out.pid, start_windowed(argv, browser_environment(out.profile_dir), out.profile_dir));
  out.note = "Opened in a clean Chromium window; its throwaway profile is removed when the window closes.";
  return out;
}

Result<BrowserRun> open_agent_browser(const fs::path& agent_root, const std::string& agent_name,
                                      const std::string& url, std::chrono::seconds timeout) {
  auto chromium = find_chromium();
  if (!chromium) return chromium_missing();
  PX_TRY_ASSIGN(auto profile, create_agent_browser_profile(agent_root, agent_name));
  // Its HOME is its own folder, never the agent's home (agent_browser_dir says why).
  const fs::path home = agent_browser_dir(agent_root);
  BrowserRun out;
  out.url = url;
  out.headless = headless_requested();
  out.profile_dir = profile.user_data_dir;
  if (!out.headless && !has_display()) return no_display();
  std::vector<std::string> argv{chromium->string()};
  for (auto& f : base_browser_flags(out.headless)) argv.push_back(std::move(f));
  argv.push_back("--user-data-dir=" + profile.user_data_dir.string());
  argv.push_back("--window-name=" + profile.window_name);
  argv.push_back("--class=parallex-agent-" + agent_name);
  if (out.headless) {
    argv.push_back("--dump-dom");
    argv.push_back(url);
    PX_TRY(run_headless(argv, browser_environment(home), timeout,
                        profile.user_data_dir / "parallex-browser.log", out));
    return out;
  }
  argv.push_back(url);
  PX_TRY_ASSIGN(out.pid, start_windowed(argv, browser_environment(home), ""));
  out.note = "Opened " + agent_name + "'s own Chromium.";
  return out;
}

}  // namespace px::mcp
