// `parallex snapshot take|list|rewind|prune`: the snapshot store by hand. The
// `agent snapshot/snapshots/rewind` commands wrap the same library calls with
// the agent's home, store and busy check filled in.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "common/redact.hpp"
#include "snapshot/manifest.hpp"
#include "snapshot/snapshot.hpp"

namespace px::cli {
namespace {

namespace snap = px::snapshot;

std::string human(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string local_time(std::int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  struct tm tm {};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Drawn on stdout only when it is a terminal and the operation has run for a
// second; silent otherwise so scripts and logs see only the result.
class ProgressBar {
 public:
  ProgressBar() : tty_(::isatty(STDOUT_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() { clear(); }

  snap::ProgressFn fn() {
    if (!tty_) return {};
    return [this](const snap::Progress& p) { update(p); };
  }

  void clear() {
    if (!drawn_) return;
    std::fputs("\r\033[K", stdout);
    std::fflush(stdout);
    drawn_ = false;
  }

 private:
  void update(const snap::Progress& p) {
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    double rate = static_cast<double>(p.bytes_done) / secs;
    int pct =
        p.bytes_total
            ? static_cast<int>(100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total))
            : 0;
    pct = std::min(pct, 100);
    std::string bar(static_cast<std::size_t>(pct / 5), '#');
    bar.resize(20, '.');
    std::printf("\r\033[K%-9s [%s] %3d%%  %llu/%llu files  %s/%s  %s/s", p.phase, bar.c_str(), pct,
                static_cast<unsigned long long>(p.files_done), static_cast<unsigned long long>(p.files_total),
                human(p.bytes_done).c_str(), human(p.bytes_total).c_str(),
                human(static_cast<std::uint64_t>(rate)).c_str());
    std::fflush(stdout);
    drawn_ = true;
  }

  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_{};
};

int report(const Error& e) {
  std::fprintf(stderr, "parallex: %s\n", redact(e.message).c_str());
  switch (e.kind) {
    case ErrorKind::invalid_input:
      return 2;
    case ErrorKind::conflict:
      return 3;
    case ErrorKind::not_found:
      return 4;
    default:
      return 1;
  }
}

nlohmann::json info_json(const snap::SnapshotInfo& i) {
  return {{"id", i.id},
          {"time", local_time(i.time_ns)},
          {"time_ns", i.time_ns},
          {"kind", i.kind},
          {"label", i.label},
          {"files", i.files},
          {"entries", i.entries},
          {"bytes", i.bytes},
          {"new_bytes", i.new_bytes},
          {"incomplete", i.incomplete},
          {"warnings", i.warnings}};
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", redact(w).c_str());
}

struct Options {
  std::string source, store, label, to;
  std::vector<std::string> excludes;
  bool json = false, dry_run = false;
  std::size_t keep = 0;
};

int do_take(const Options& o) {
  if (auto st = snap::check_store_location(o.source, o.store); !st) return report(st.error());
  auto store = snap::Store::open(o.store);
  if (!store) return report(store.error());
  ProgressBar bar;
  snap::TakeOptions t;
  t.source = o.source;
  t.excludes = o.excludes;
  t.label = o.label;
  t.progress = bar.fn();
  auto r = store.value().take(t);
  bar.clear();
  if (!r) return report(r.error());
  const auto& i = r.value();
  if (o.json) {
    std::printf("%s\n", info_json(i).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("Snapshot %s: %llu files, %s, %s new%s\n", i.id.c_str(),
                static_cast<unsigned long long>(i.files), human(i.bytes).c_str(), human(i.new_bytes).c_str(),
                i.incomplete ? " (incomplete, see warnings)" : "");
  }
  print_warnings(i.warnings);
  return 0;
}

int do_list(const Options& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report(store.error());
  auto list = store.value().list();
  if (!list) return report(list.error());
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& i : list.value()) arr.push_back(info_json(i));
    std::printf("%s\n", arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (list.value().empty()) {
    std::printf("No snapshots in %s.\n", o.store.c_str());
    return 0;
  }
  std::printf("%-23s  %-19s  %-10s  %7s  %10s  %10s  %s\n", "ID", "TIME", "KIND", "FILES", "BYTES", "NEW",
              "RUN");
  for (const auto& i : list.value()) {
    std::printf("%-23s  %-19s  %-10s  %7llu  %10s  %10s  %s%s\n", i.id.c_str(), local_time(i.time_ns).c_str(),
                i.kind.c_str(), static_cast<unsigned long long>(i.files), human(i.bytes).c_str(),
                human(i.new_bytes).c_str(), snap::display_name(i.label).c_str(),
                i.incomplete ? " (incomplete)" : "");
  }
  return 0;
}

int do_rewind(const Options& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report(store.error());
  ProgressBar bar;
  snap::RewindOptions r;
  r.source = o.source;
  if (!o.to.empty()) r.to = o.to;
  r.dry_run = o.dry_run;
  r.excludes = o.excludes;
  r.progress = bar.fn();
  auto res = store.value().rewind(r);
  bar.clear();
  if (!res) return report(res.error());
  const auto& v = res.value();
  std::size_t n = 0;
  for (const auto& c : v.changes) {
    if (o.dry_run || c.kind == snap::Change::Kind::keep) {
      std::printf("  %-10s %s%s%s\n", snap::to_string(c.kind), snap::display_name(c.path).c_str(),
                  c.note.empty() ? "" : "  (", c.note.empty() ? "" : (c.note + ")").c_str());
    }
    n += c.kind != snap::Change::Kind::keep;
  }
  if (o.dry_run) {
    std::printf("Dry run: rewinding %s to %s would make %zu changes.\n", o.source.c_str(),
                v.target_id.c_str(), n);
  } else if (v.undo_id.empty()) {
    std::printf("%s already matches snapshot %s; nothing changed.\n", o.source.c_str(), v.target_id.c_str());
  } else {
    std::printf("Rewound %s to %s: %llu files written, %llu entries removed.\n", o.source.c_str(),
                v.target_id.c_str(), static_cast<unsigned long long>(v.files_written),
                static_cast<unsigned long long>(v.entries_removed));
    std::printf(
        "The state before the rewind is snapshot %s; undo with:\n  parallex snapshot rewind --source %s "
        "--store %s --to %s\n",
        v.undo_id.c_str(), o.source.c_str(), o.store.c_str(), v.undo_id.c_str());
  }
  print_warnings(v.warnings);
  return 0;
}

int do_prune(const Options& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report(store.error());
  auto r = store.value().prune(o.keep);
  if (!r) return report(r.error());
  std::printf("Removed %zu snapshots and %llu objects (%s freed).\n", r.value().removed_ids.size(),
              static_cast<unsigned long long>(r.value().objects_removed),
              human(r.value().bytes_freed).c_str());
  return 0;
}

Action setup(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<Options>();
  app.require_subcommand(1);
  auto* take = app.add_subcommand("take", "Snapshot a folder into a store");
  take->add_option("--source", o->source, "Folder to snapshot")->required();
  take->add_option("--store", o->store, "Snapshot store folder (outside the source)")->required();
  take->add_option("--exclude", o->excludes, "Relative path never read nor stored (repeatable)");
  take->add_option("--label", o->label, "Free text kept with the snapshot, e.g. the run id");
  take->add_flag("--json", o->json, "Print the snapshot as JSON");
  auto* list = app.add_subcommand("list", "List the snapshots in a store");
  list->add_option("--store", o->store, "Snapshot store folder")->required();
  list->add_flag("--json", o->json, "Print JSON");
  auto* rewind = app.add_subcommand("rewind", "Put a folder back as it was in a snapshot");
  rewind->add_option("--source", o->source, "Folder to rewind")->required();
  rewind->add_option("--store", o->store, "Snapshot store folder")->required();
  rewind->add_option("--to", o->to,
                     "Snapshot id or unique prefix (default: newest that is not a pre-rewind one)");
  rewind->add_option("--exclude", o->excludes, "Relative path left untouched (repeatable)");
  rewind->add_flag("--dry-run", o->dry_run, "Only list what would change");
  auto* prune = app.add_subcommand("prune", "Keep the newest N snapshots and free unused space");
  prune->add_option("--store", o->store, "Snapshot store folder")->required();
  prune->add_option("--keep", o->keep, "How many snapshots to keep")
      ->required()
      ->check(CLI::NonNegativeNumber);
  return [o, take, list, rewind, prune]() -> int {
    if (take->parsed()) return do_take(*o);
    if (list->parsed()) return do_list(*o);
    if (rewind->parsed()) return do_rewind(*o);
    if (prune->parsed()) return do_prune(*o);
    return 2;
  };
}

}  // namespace

PARALLEX_COMMAND("snapshot", "Take, list, rewind and prune snapshots of a folder", 60, setup);

}  // namespace px::cli
