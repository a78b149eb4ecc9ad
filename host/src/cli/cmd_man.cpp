// `parallex man --dir DIR` (hidden; the build runs it): writes a man page for
// `parallex` and for every command under it (parallex-agent-run.1, ...),
// generated from the command line's own definitions (cli_tree.hpp).
#include <cerrno>
#include <fstream>
#include <memory>

#include "cli/cli_tree.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/version_info.hpp"

namespace px::cli {
namespace {

// Text for roff: backslashes doubled, a line never starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

// An option's name in roff: its dashes are minus signs (what a terminal shows and a reader types).
std::string dashes(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

std::string option_heading(const OptionDoc& o) {
  if (o.positional) return "\\fI" + roff(o.names.front()) + "\\fR" + (o.repeatable ? "..." : "");
  std::string h;
  for (const auto& n : o.names) h += (h.empty() ? "" : ", ") + ("\\fB" + dashes(n) + "\\fR");
  if (!o.value.empty()) h += " \\fI" + roff(o.value) + "\\fR";
  return h;
}

std::string synopsis(const CommandDoc& c) {
  std::string s = ".B " + c.words() + "\n";
  bool has_options = false;
  for (const auto& o : c.options)
    if (!o.positional) has_options = true;
  if (has_options) s += "[\\fIOPTIONS\\fR]\n";
  if (!c.subcommands.empty()) s += "\\fICOMMAND\\fR ...\n";
  for (const auto& o : c.options) {
    if (!o.positional || o.names.front() == "command") continue;
    const std::string name = "\\fI" + roff(o.names.front()) + "\\fR" + (o.repeatable ? "..." : "");
    s += o.required ? name + "\n" : "[" + name + "]\n";
  }
  if (c.takes_command) s += "\\fB\\-\\-\\fR \\fICOMMAND\\fR [\\fIARGS\\fR...]\n";
  return s;
}

const char* kTopDescription = R"(.SH DESCRIPTION
Parallex runs AI coding agents (Claude Code, Codex CLI, opencode, or any command) inside a sandbox it builds itself: user, mount, network and pid namespaces, Landlock, seccomp and a per-run HTTP proxy, with every way out of the sandbox decided by you. Each agent can have an identity of its own (a home, a signing key, a GitHub token), its home is snapshotted before every run, and a report says what it did.
.PP
Start with \fBparallex check\fR (what this machine lets the seal enforce) and \fBparallex demo\fR (a sealed run that tries the ways out). Every command takes \fB\-\-help\fR.
)";

// What the top page says beyond the commands: where things live, what the
// environment changes, what the exit status means (docs/packaging.md, README).
const char* kTopPageExtra = R"(.SH ENVIRONMENT
.TP
.B PARALLEX_HOME
One folder for everything Parallex keeps (agents, snapshots, run records, user profiles); overrides the XDG folders below. Meant for tests and throw-away set-ups.
.TP
.B XDG_DATA_HOME
Agents and their snapshots: \fI$XDG_DATA_HOME/parallex\fR (default \fI~/.local/share/parallex\fR), and user plugins in its \fIplugins\fR folder.
.TP
.B XDG_STATE_HOME
Run records and logs: \fI$XDG_STATE_HOME/parallex\fR (default \fI~/.local/state/parallex\fR). Records an older Parallex wrote under the data folder are still read.
.TP
.B XDG_CONFIG_HOME
User profiles: \fI$XDG_CONFIG_HOME/parallex/profiles/NAME.yaml\fR (default \fI~/.config/parallex/profiles\fR), found by \fB\-\-profile\fR \fINAME\fR.
.TP
.B XDG_RUNTIME_DIR
Live runs' control sockets and private temporary folders: \fI$XDG_RUNTIME_DIR/parallex\fR (default \fI/tmp/parallex\-UID\fR).
.TP
.B PARALLEX_PLUGIN_PATH
Folders (separated by \fB:\fR) searched for harness plugins before the installed ones.
.TP
.B NO_COLOR
When set and not empty, output has no colour. Output that is not a terminal never has.
.SH FILES
.TP
.I /usr/lib/<multiarch>/parallex/plugins
The harness plugins shipped with Parallex (claude\-code, codex, opencode, generic).
.TP
.I /usr/share/parallex/profiles
The built-in profiles (default, offline, developer), as the executable embeds them: a start for your own.
.TP
.I /etc/apparmor.d/parallex
Where the package puts its AppArmor profile on systems that restrict unprivileged user namespaces (Ubuntu 23.10 and later): it lets \fI/usr/bin/parallex\fR create user namespaces and confines nothing else.
.SH EXIT STATUS
A run exits with its command's status (128+N when it died of signal N, 127 when it could not be found, 125 when the seal could not be set up). Otherwise: 0 success, 1 failure, 2 a usage error, 3 not found, 4 unsupported here (a guarantee of the seal is missing), 5 a conflict.
)";

Status write_page(const std::filesystem::path& dir, const CommandDoc& c, const CommandDoc* parent) {
  std::string page;
  std::string title = c.page();
  for (auto& ch : title) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  page += ".TH " + title + " 1 \"\" \"parallex " PARALLEX_VERSION "\" \"Parallex Manual\"\n";
  // Command names and paths are words to type: never hyphenated, never stretched.
  page += ".nh\n.ad l\n";
  page += ".SH NAME\n" + dashes(c.page()) + " \\- " + roff(c.summary.empty() ? "parallex" : c.summary) + "\n";
  page += ".SH SYNOPSIS\n" + synopsis(c);
  if (parent)
    page +=
        ".SH DESCRIPTION\n" + roff(c.summary) + (c.summary.empty() || c.summary.back() == '.' ? "\n" : ".\n");
  else
    page += kTopDescription;
  if (c.takes_command)
    page += ".PP\nEverything after \\fB\\-\\-\\fR is the command and its arguments, passed as they are.\n";
  if (!c.subcommands.empty()) {
    page += ".SH COMMANDS\n";
    for (const auto& s : c.subcommands)
      page += ".TP\n\\fB" + roff(s.words()) + "\\fR\n" + roff(s.summary) + "; see \\fB" + dashes(s.page()) +
              "\\fR(1).\n";
  }
  auto describe_options = [&](bool positional) {
    for (const auto& o : c.options) {
      if (o.positional != positional) continue;
      page += ".TP\n" + option_heading(o) + "\n" +
              roff(o.description.empty() ? "(no description)" : o.description);
      if (!o.choices.empty()) {
        std::string list;
        for (const auto& ch : o.choices) list += (list.empty() ? "" : ", ") + ch;
        page += " (one of: " + roff(list) + ")";
      }
      if (o.repeatable && !o.positional) page += " (may be given more than once)";
      page += "\n";
    }
  };
  bool has_arguments = false;
  for (const auto& o : c.options) has_arguments |= o.positional;
  if (has_arguments) {
    page += ".SH ARGUMENTS\n";
    describe_options(true);
  }
  page += ".SH OPTIONS\n";
  describe_options(false);
  if (parent)
    page +=
        ".PP\nThe global options of \\fBparallex\\fR(1) (\\fB\\-v\\fR, \\fB\\-\\-log\\-level\\fR) are "
        "accepted "
        "here too.\n";
  else
    page += kTopPageExtra;
  page += ".SH SEE ALSO\n";
  if (parent) {
    page += "\\fB" + dashes(parent->page()) + "\\fR(1)";
    if (parent->path.size() > 0) page += ", \\fBparallex\\fR(1)";
    page += "\n";
  } else {
    page += "The project's README.md and docs/ folder.\n";
  }
  const auto file = dir / (c.page() + ".1");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << page;
  if (!out) return Error::io("write " + file.string(), errno);
  for (const auto& s : c.subcommands) PX_TRY(write_page(dir, s, &c));
  return ok();
}

Action setup_man(CLI::App& app, GlobalOptions&) {
  auto dir = std::make_shared<std::string>();
  app.add_option("--dir", *dir, "Folder to write the pages to")->required();
  return [dir, &app]() -> int {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) return report_error(Error::io("create " + *dir, ec.value()));
    const CommandDoc tree = describe_cli(root_of(app));
    if (auto s = write_page(*dir, tree, nullptr); !s) return report_error(s.error());
    return 0;
  };
}

}  // namespace

PARALLEX_HIDDEN_COMMAND("man", "Write the man pages (run by the build)", setup_man);

}  // namespace px::cli
