#include "cli/cli_tree.hpp"

#include "cli/parse_errors.hpp"

namespace px::cli {

namespace {

OptionDoc describe_option(const CLI::Option& o) {
  OptionDoc d;
  d.description = o.get_description();
  d.positional = !o.nonpositional();
  d.required = o.get_required();
  if (d.positional) {
    d.names.push_back(o.get_name(true, false));
  } else {
    for (const auto& s : o.get_snames()) d.names.push_back("-" + s);
    for (const auto& l : o.get_lnames()) d.names.push_back("--" + l);
  }
  const bool flag = o.get_type_size_max() == 0 || o.get_items_expected_max() == 0;
  d.repeatable =
      o.get_items_expected_max() > 1 || o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
  if (!flag) {
    // "TEXT:{on,off}": the value's kind, then what each validator says of it.
    const std::string type = o.get_type_name();
    d.value = type.substr(0, type.find(':'));
    if (d.value.empty()) d.value = "VALUE";
    if (const auto open = type.find(":{"); open != std::string::npos) {
      const auto close = type.find('}', open);
      std::string list =
          type.substr(open + 2, close == std::string::npos ? std::string::npos : close - open - 2);
      std::size_t start = 0;
      while (start <= list.size()) {
        const auto comma = list.find(',', start);
        const std::string item =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) d.choices.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
  }
  return d;
}

CommandDoc describe(CLI::App& app, std::vector<std::string> path) {
  CommandDoc doc;
  doc.path = path;
  doc.summary = app.get_description();
  // The top's description starts with the program's name, which man's NAME line already says.
  if (const std::string prefix = "parallex: "; doc.summary.rfind(prefix, 0) == 0)
    doc.summary.erase(0, prefix.size());
  for (const CLI::Option* o : app.get_options()) {
    // Options of an empty group are internal (the probes `check --sealed` runs itself with).
    if (o->get_group().empty()) continue;
    OptionDoc d = describe_option(*o);
    // The command after `--` (run, agent run, ...): one positional taking the rest.
    if (d.positional && o->get_items_expected_max() > 1 && o->get_name(true, false) == "command")
      doc.takes_command = true;
    doc.options.push_back(std::move(d));
  }
  for (const CLI::App* s : visible_subcommands(app)) {
    std::vector<std::string> sub_path = path;
    sub_path.push_back(s->get_name());
    doc.subcommands.push_back(describe(*const_cast<CLI::App*>(s), sub_path));
  }
  return doc;
}

}  // namespace

std::string CommandDoc::words() const {
  std::string w = "parallex";
  for (const auto& p : path) w += " " + p;
  return w;
}

std::string CommandDoc::page() const {
  std::string w = "parallex";
  for (const auto& p : path) w += "-" + p;
  return w;
}

CommandDoc describe_cli(CLI::App& root) {
  return describe(root, {});
}

CLI::App& root_of(CLI::App& app) {
  CLI::App* at = &app;
  while (at->get_parent()) at = at->get_parent();
  return *at;
}

}  // namespace px::cli
