// Parallex plugin SDK — recognising a harness on a command line.
//
// `detect_program` knows the ways a harness is started: the program itself
// (by name, or a link into its npm package), a JavaScript runtime running its
// script, an npm launcher (npx, bunx, pnpx, `npm exec`, `pnpm dlx`, `yarn
// dlx`), a Python launcher (`python -m`, pipx, uvx, `uv tool run`, `uv run`,
// `poetry run`), all of them behind `env VAR=value`. A plugin gives what its
// harness is called in each world (ProgramSpec) and gets a claim with a
// reason, or nothing.
//
// Header-only; part of <parallex/plugin.hpp>.
#pragma once

#include <parallex/plugin_abi.h>

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parallex::sdk {

// The command a run would start, as the host sees it.
struct Command {
  std::vector<std::string> argv;
  std::string resolved_path;  // argv[0] found on PATH, or empty
  std::string resolved_real;  // the same with symlinks resolved, or empty

  static Command from(const px_command& c) {
    Command out;
    for (size_t i = 0; i < c.argc; ++i) out.argv.emplace_back(c.argv[i] ? c.argv[i] : "");
    if (c.resolved_path) out.resolved_path = c.resolved_path;
    if (c.resolved_real) out.resolved_real = c.resolved_real;
    return out;
  }
};

struct Detection {
  int confidence = 0;  // 0..100
  std::string reason;
};

// What a harness is called, in each world it can be started from. Leave a
// list empty when the harness does not live there: an empty `packages` means
// no npm launcher form is claimed at all (`npx aider` fetches the npm package
// "aider", which is not a Python harness).
struct ProgramSpec {
  std::vector<std::string> names;            // executable names: {"claude"}
  std::vector<std::string> packages;         // npm packages: {"@anthropic-ai/claude-code"}
  std::vector<std::string> python_packages;  // PyPI distributions: {"aider-chat"}
  std::vector<std::string> python_modules;   // modules run with `python -m`: {"aider"}

  // {{"claude"}, {"@anthropic-ai/claude-code"}}: the lists left out are
  // empty (a constructor, so -Wextra has no missing initializer to report).
  ProgramSpec(std::vector<std::string> names_ = {}, std::vector<std::string> packages_ = {},
              std::vector<std::string> python_packages_ = {}, std::vector<std::string> python_modules_ = {})
      : names(std::move(names_)),
        packages(std::move(packages_)),
        python_packages(std::move(python_packages_)),
        python_modules(std::move(python_modules_)) {}
};

inline std::string_view basename_of(std::string_view path) {
  auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "@openai/codex@0.1" -> "@openai/codex"; "opencode-ai@latest" -> "opencode-ai".
inline std::string_view strip_package_version(std::string_view spec) {
  auto at = spec.find('@', spec.size() > 0 && spec[0] == '@' ? 1 : 0);
  return at == std::string_view::npos ? spec : spec.substr(0, at);
}

// "aider-chat==0.86" -> "aider-chat"; "Aider_Chat[playwright]" -> "aider-chat":
// the distribution name, without version, extras or marker, normalised as
// PyPI compares names (lower case; runs of '-', '_', '.' are one '-').
inline std::string python_package_name(std::string_view spec) {
  const auto end = spec.find_first_of("=<>!~[@; ");
  spec = spec.substr(0, end);
  std::string out;
  for (char c : spec) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

inline bool path_has_package(std::string_view path, const std::string& package) {
  std::string needle = "/" + package + "/";
  return std::string(path).find(needle) != std::string::npos;
}

// The index of the program `env` starts: past `env`, its options and its
// VAR=value assignments (`env -i A=1 claude` -> 3). 0 when argv[0] is not
// env; argv.size() when env starts nothing.
inline std::size_t skip_env(const std::vector<std::string>& argv) {
  if (argv.empty() || basename_of(argv[0]) != "env") return 0;
  std::size_t i = 1;
  while (i < argv.size()) {
    const std::string& a = argv[i];
    if (a == "--") return i + 1;
    // Options that take a separate value: -u NAME, -C DIR, -S STRING.
    if (a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" || a == "-S" || a == "--split-string") {
      i += 2;
      continue;
    }
    if (a.rfind('-', 0) != 0 && a.find('=') == std::string::npos) break;
    ++i;
  }
  return i < argv.size() ? i : argv.size();
}

// Whether `program` is a Python interpreter: python, python3, python3.12, pypy3.
inline bool is_python(std::string_view program) {
  for (std::string_view stem : {"python", "pypy"}) {
    if (program.rfind(stem, 0) != 0) continue;
    const std::string_view rest = program.substr(stem.size());
    bool version = true;
    for (char c : rest) version = version && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    if (version) return true;
  }
  return false;
}

namespace detail {

// The first operand from `from` on, skipping options; `with_value` names the
// options whose value is the next word.
inline std::optional<std::size_t> first_operand(const std::vector<std::string>& argv, std::size_t from,
                                                std::initializer_list<std::string_view> with_value) {
  for (std::size_t j = from; j < argv.size(); ++j) {
    if (argv[j] == "--") return j + 1 < argv.size() ? std::optional(j + 1) : std::nullopt;
    if (argv[j].rfind('-', 0) != 0) return j;
    for (std::string_view o : with_value)
      if (argv[j] == o) {
        ++j;
        break;
      }
  }
  return std::nullopt;
}

// The value of option `name` (`--spec X` or `--spec=X`) among argv[from..to).
inline std::optional<std::string> option_value(const std::vector<std::string>& argv, std::size_t from,
                                               std::size_t to, std::string_view name) {
  for (std::size_t j = from; j < to && j < argv.size(); ++j) {
    if (argv[j] == name && j + 1 < argv.size()) return argv[j + 1];
    if (argv[j].size() > name.size() && argv[j].rfind(name, 0) == 0 && argv[j][name.size()] == '=')
      return argv[j].substr(name.size() + 1);
  }
  return std::nullopt;
}

inline std::optional<Detection> detect_from(const std::vector<std::string>& argv, std::size_t i,
                                            const Command& command, const ProgramSpec& spec, int depth);

}  // namespace detail

// Recognises the harness on `command`, in every form above, with a reason a
// user reads. nullopt when it is not the harness.
inline std::optional<Detection> detect_program(const Command& command, const ProgramSpec& spec) {
  return detail::detect_from(command.argv, skip_env(command.argv), command, spec, 0);
}

namespace detail {

inline std::optional<Detection> detect_from(const std::vector<std::string>& argv, std::size_t i,
                                            const Command& command, const ProgramSpec& spec, int depth) {
  if (i >= argv.size() || depth > 2) return std::nullopt;
  auto name_is = [&](std::string_view n) {
    for (const auto& want : spec.names)
      if (n == want) return true;
    return false;
  };
  auto package_is = [&](std::string_view p) {
    for (const auto& want : spec.packages)
      if (strip_package_version(p) == want) return true;
    return false;
  };
  auto python_package_is = [&](std::string_view p) {
    const std::string name = python_package_name(p);
    for (const auto& want : spec.python_packages)
      if (!name.empty() && name == python_package_name(want)) return true;
    return false;
  };
  const std::string_view program = basename_of(argv[i]);

  for (const auto& package : spec.packages) {
    if (i == 0 && path_has_package(command.resolved_real, package))
      return Detection{
          95, "`" + argv[i] + "` resolves to " + command.resolved_real + ", inside npm package " + package};
  }
  if (name_is(program)) return Detection{90, "the program is `" + std::string(program) + "`"};

  // JavaScript runtimes running the harness's script.
  if (program == "node" || program == "nodejs" || program == "bun" || program == "deno") {
    std::size_t from = i + 1;
    if (program == "deno" && from < argv.size() && argv[from] == "run") ++from;
    if (program == "bun" && from < argv.size() && (argv[from] == "run" || argv[from] == "x")) ++from;
    if (auto script = first_operand(argv, from, {"-r", "--require", "-p", "--package"})) {
      const std::string& s = argv[*script];
      for (const auto& package : spec.packages)
        if (path_has_package(s, package) || package_is(s))
          return Detection{90, "`" + std::string(program) + "` runs " + s + " from npm package " + package};
      if (name_is(basename_of(s)))
        return Detection{
            80, "`" + std::string(program) + "` runs a script named `" + std::string(basename_of(s)) + "`"};
    }
    return std::nullopt;
  }

  // Python running the harness's module or a script of its package.
  if (is_python(program)) {
    for (std::size_t j = i + 1; j < argv.size(); ++j) {
      const std::string& a = argv[j];
      std::string module;
      if (a == "-m" && j + 1 < argv.size())
        module = argv[j + 1];
      else if (a.size() > 2 && a.rfind("-m", 0) == 0)
        module = a.substr(2);
      if (!module.empty()) {
        const std::string top = module.substr(0, module.find('.'));
        for (const auto& want : spec.python_modules)
          if (module == want || top == want)
            return Detection{90,
                             "`" + std::string(program) + " -m " + module + "` runs Python module " + want};
        return std::nullopt;
      }
      if (a == "-c" || a == "-") return std::nullopt;  // code given inline or on stdin
      if (a == "-X" || a == "-W" || a == "--check-hash-based-pycs") {
        ++j;
        continue;
      }
      if (a.rfind('-', 0) == 0) continue;
      // A script: inside the harness's package, or named like its program.
      for (const auto& want : spec.python_modules)
        if (a.find("/site-packages/" + want + "/") != std::string::npos ||
            a.find("/dist-packages/" + want + "/") != std::string::npos)
          return Detection{90, "`" + std::string(program) + "` runs " + a + " from Python package " + want};
      if (name_is(basename_of(a)))
        return Detection{
            80, "`" + std::string(program) + "` runs a script named `" + std::string(basename_of(a)) + "`"};
      return std::nullopt;
    }
    return std::nullopt;
  }

  // Python package runners: pipx run, uvx / uv tool run (a package from PyPI).
  std::size_t runner_from = 0;
  std::string runner;
  if (program == "pipx" && i + 1 < argv.size() && argv[i + 1] == "run") {
    runner_from = i + 2;
    runner = "pipx run";
  } else if (program == "uvx") {
    runner_from = i + 1;
    runner = "uvx";
  } else if (program == "uv" && i + 2 < argv.size() && argv[i + 1] == "tool" && argv[i + 2] == "run") {
    runner_from = i + 3;
    runner = "uv tool run";
  }
  if (!runner.empty()) {
    if (spec.python_packages.empty()) return std::nullopt;
    const auto operand = first_operand(
        argv, runner_from,
        {"--spec", "--from", "--with", "--with-requirements", "--with-editable", "--python", "-p",
         "--pip-args", "--index-url", "-i", "--extra-index-url", "--index", "--default-index"});
    const std::size_t end = operand ? *operand : argv.size();
    // `pipx run --spec aider-chat aider`, `uvx --from aider-chat aider`: the package is the option's.
    for (std::string_view opt : {"--spec", "--from"})
      if (auto from = option_value(argv, runner_from, end, opt))
        return python_package_is(*from)
                   ? std::optional(Detection{85, "`" + runner + "` runs Python package `" + *from + "`"})
                   : std::nullopt;
    if (operand && python_package_is(argv[*operand]))
      return Detection{85, "`" + runner + "` runs Python package `" + argv[*operand] + "`"};
    return std::nullopt;
  }

  // Runners of a project's own environment: the rest is a command of its own.
  if ((program == "uv" || program == "poetry" || program == "pdm" || program == "hatch") &&
      i + 1 < argv.size() && argv[i + 1] == "run") {
    const auto operand =
        first_operand(argv, i + 2, {"--with", "--python", "-p", "--package", "--env", "-e", "--group"});
    if (!operand) return std::nullopt;
    auto inner = detect_from(argv, *operand, Command{}, spec, depth + 1);
    if (!inner) return std::nullopt;
    inner->confidence = inner->confidence > 85 ? 85 : inner->confidence;
    inner->reason = "`" + std::string(program) + " run` starts a command where " + inner->reason;
    return inner;
  }

  // npm launchers: only for a harness that is an npm package.
  std::size_t from = 0;
  if (program == "npx" || program == "bunx" || program == "pnpx") {
    from = i + 1;
  } else if ((program == "npm" || program == "pnpm" || program == "yarn") && i + 1 < argv.size() &&
             (argv[i + 1] == "exec" || argv[i + 1] == "dlx" || argv[i + 1] == "x")) {
    from = i + 2;
  } else {
    return std::nullopt;
  }
  if (spec.packages.empty()) return std::nullopt;
  if (auto operand = first_operand(argv, from, {"-p", "--package", "-r", "--require"})) {
    const std::string& s = argv[*operand];
    if (package_is(s) || name_is(s))
      return Detection{85, "`" + std::string(program) + "` runs package `" + s + "`"};
  }
  return std::nullopt;
}

}  // namespace detail

}  // namespace parallex::sdk
