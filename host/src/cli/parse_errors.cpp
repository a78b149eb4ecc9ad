#include "cli/parse_errors.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/output.hpp"

namespace px::cli {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "parallex agent list": the command the parse reached.
std::string command_path(const CLI::App& at) {
  std::string path;
  for (const CLI::App* a = &at; a; a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// The deepest sub-command the parser entered.
const CLI::App* reached(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    const auto subs = at->get_subcommands();
    if (subs.empty()) return at;
    at = subs.front();
  }
}

// Walks argv the way the parser does, to find the first word that is not a
// command where one was needed. `at` ends at the command that needed it.
std::string first_unknown_command(const CLI::App& app, const std::vector<std::string>& args,
                                  const CLI::App*& at) {
  at = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return "";
    if (word.size() > 1 && word[0] == '-') {
      // An option that takes a value, given as a separate word, skips it.
      const std::string name = word.substr(0, word.find('='));
      if (word.find('=') != std::string::npos) continue;
      for (const CLI::App* a = at; a; a = a->get_parent()) {
        const CLI::Option* opt = a->get_option_no_throw(name);
        if (opt) {
          if (opt->get_type_size_max() > 0 && opt->get_items_expected_max() > 0) ++i;
          break;
        }
      }
      continue;
    }
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : visible_subcommands(*at))
      if (s->check_name(word)) sub = s;
    if (sub) {
      at = sub;
      continue;
    }
    // A word that is no sub-command: an error only where a sub-command was due.
    if (!visible_subcommands(*at).empty() && at->get_require_subcommand_min() > 0) return word;
    return "";
  }
  return "";
}

std::string names_of(const std::vector<const CLI::App*>& subs) {
  std::string names;
  for (const CLI::App* s : subs) names += (names.empty() ? "" : ", ") + s->get_name();
  return names;
}

// Bad usage exits 2, but a command that runs something keeps the exit
// statuses below 125 for its command's own: its usage errors are Parallex's
// failure to start the run, 125 (README, "Run options and exit status").
int usage_status(const CLI::App& at, const std::vector<std::string>& words) {
  const std::string path = command_path(at);
  if (path == "parallex run" || path == "parallex agent run") return 125;
  if (path == "parallex harness" || path == "parallex agent") {
    for (const auto& w : words) {
      if (w == "--") break;
      if (w == "-w" || w.rfind("--workspace", 0) == 0) return 125;
    }
  }
  return 2;
}

}  // namespace

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); }))
    out.push_back(s);
  return out;
}

int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, const char* const* argv) {
  // --help and --version: CLI11 prints them; they are no error.
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error) == 0 ? 0 : 2;
  // The words as typed: CLI11 has consumed them by now.
  const std::vector<std::string> words(argv + 1, argv + argc);
  const CLI::App* needing = nullptr;
  const std::string unknown = first_unknown_command(app, words, needing);
  if (!unknown.empty() && needing) {
    const auto subs = visible_subcommands(*needing);
    const CLI::App* closest = nullptr;
    std::size_t best = 3;  // a suggestion only for a near miss
    for (const CLI::App* s : subs) {
      const std::size_t d = edit_distance(unknown, s->get_name());
      if (d < best || (s->get_name().rfind(unknown, 0) == 0 && !closest)) {
        best = std::min(best, d);
        closest = s;
      }
    }
    const std::string path = command_path(*needing);
    say("'" + unknown + "' is not a command of `" + path + "`" +
        (closest ? " (did you mean '" + closest->get_name() + "'?)" : std::string()) +
        ". Its commands: " + names_of(subs) + ". See `" + path + " --help`.");
    return 2;
  }
  const CLI::App* at = reached(app);
  const std::string path = command_path(*at);
  std::string message = error.what();
  if (dynamic_cast<const CLI::RequiredError*>(&error) && message.find("subcommand") != std::string::npos) {
    // `parallex --bogus`: the option is the mistake, not the missing command.
    for (const auto& w : words) {
      const std::string name = w.substr(0, w.find('='));
      if (name.size() > 1 && name[0] == '-' && name != "--" && !at->get_option_no_throw(name)) {
        say(name + " is not an option of `" + path + "`. See `" + path + " --help`.");
        return 2;
      }
      if (name.empty() || name[0] != '-') break;
    }
    say("`" + path + "` needs a command: " + names_of(visible_subcommands(*at)) + ". See `" + path +
        " --help`.");
    return 2;
  }
  const std::string where = at == &app ? "" : path.substr(std::string("parallex ").size()) + ": ";
  say(where + message + ". See `" + path + " --help`.");
  return usage_status(*at, words);
}

}  // namespace px::cli
