// Output shared by the snapshot commands (see snapshot_output.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "cli/snapshot_output.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "snapshot/manifest.hpp"
#include "snapshot/snapshot_json.hpp"

namespace px::cli::snapshot_output {

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

ProgressBar::ProgressBar() : tty_(::isatty(STDOUT_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
ProgressBar::~ProgressBar() {
  clear();
}

snap::ProgressFn ProgressBar::fn() {
  if (!tty_) return {};
  return [this](const snap::Progress& p) { update(p); };
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stdout);
  std::fflush(stdout);
  drawn_ = false;
}

void ProgressBar::update(const snap::Progress& p) {
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

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", redact(w).c_str());
}

void print_taken(const snap::SnapshotInfo& i, bool json) {
  if (json) {
    std::printf("%s\n", to_json_text(snap::info_json(i), 2).c_str());
  } else {
    std::printf("Snapshot %s: %llu files, %s of content; the store grew by %s on disk%s\n", i.id.c_str(),
                static_cast<unsigned long long>(i.files), human(i.bytes).c_str(), human(i.new_bytes).c_str(),
                i.incomplete ? " (incomplete, see warnings)" : "");
  }
  print_warnings(i.warnings);
}

void print_list(const std::vector<snap::SnapshotInfo>& list, bool json, const std::string& empty_note) {
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& i : list) arr.push_back(snap::info_json(i));
    std::printf("%s\n", to_json_text(arr, 2).c_str());
    return;
  }
  if (list.empty()) {
    std::printf("%s\n", empty_note.c_str());
    return;
  }
  // CONTENT: what the files hold; DISK ADDED: what this snapshot added to the store.
  std::printf("%-23s  %-19s  %-10s  %7s  %10s  %10s  %s\n", "ID", "TIME", "KIND", "FILES", "CONTENT",
              "DISK ADDED", "RUN");
  for (const auto& i : list) {
    std::printf("%-23s  %-19s  %-10s  %7llu  %10s  %10s  %s%s\n", i.id.c_str(),
                snap::local_time(i.time_ns).c_str(), i.kind.c_str(), static_cast<unsigned long long>(i.files),
                human(i.bytes).c_str(), human(i.new_bytes).c_str(), snap::display_name(i.label).c_str(),
                i.incomplete ? " (incomplete)" : "");
  }
}

void print_rewind(const snap::RewindResult& v, bool dry_run, const std::string& what,
                  const std::string& undo_hint, bool json) {
  if (json) {
    std::printf("%s\n", to_json_text(snap::rewind_json(v, dry_run, undo_hint), 2).c_str());
    print_warnings(v.warnings);
    return;
  }
  std::size_t n = 0;
  for (const auto& c : v.changes) {
    if (dry_run || c.kind == snap::Change::Kind::keep) {
      std::printf("  %-10s %s%s%s\n", snap::to_string(c.kind), snap::display_name(c.path).c_str(),
                  c.note.empty() ? "" : "  (", c.note.empty() ? "" : (c.note + ")").c_str());
    }
    n += c.kind != snap::Change::Kind::keep;
  }
  if (dry_run) {
    std::printf("Dry run: rewinding %s to %s would make %zu changes.\n", what.c_str(), v.target_id.c_str(),
                n);
  } else if (v.undo_id.empty()) {
    std::printf("%s already matches snapshot %s; nothing changed.\n", what.c_str(), v.target_id.c_str());
  } else {
    std::printf("Rewound %s to %s: %llu files written, %llu entries removed.\n", what.c_str(),
                v.target_id.c_str(), static_cast<unsigned long long>(v.files_written),
                static_cast<unsigned long long>(v.entries_removed));
    std::printf("The state before the rewind is snapshot %s; undo with:\n  %s%s\n", v.undo_id.c_str(),
                undo_hint.c_str(), v.undo_id.c_str());
  }
  print_warnings(v.warnings);
}

void print_prune(const snap::PruneResult& r, bool json) {
  if (json) {
    const nlohmann::json out{
        {"removed", r.removed_ids}, {"objects_removed", r.objects_removed}, {"bytes_freed", r.bytes_freed}};
    std::printf("%s\n", to_json_text(out, 2).c_str());
    return;
  }
  std::printf("Removed %zu snapshots and %llu objects (%s freed on disk).\n", r.removed_ids.size(),
              static_cast<unsigned long long>(r.objects_removed), human(r.bytes_freed).c_str());
}

std::string rewind_preview(const snap::RewindResult& v, std::size_t max_paths) {
  std::size_t counts[6] = {};
  std::vector<const snap::Change*> shown;
  for (const auto& c : v.changes) {
    ++counts[static_cast<int>(c.kind)];
    if (c.kind != snap::Change::Kind::keep && c.kind != snap::Change::Kind::create &&
        shown.size() < max_paths)
      shown.push_back(&c);
  }
  using K = snap::Change::Kind;
  std::string out;
  auto count = [&](K kind, const char* words) {
    if (const std::size_t n = counts[static_cast<int>(kind)]; n > 0)
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + words;
  };
  count(K::update, "replaced");
  count(K::remove, "removed");
  count(K::move_aside, "moved aside");
  count(K::create, "brought back");
  count(K::metadata, "with permissions or times reset");
  count(K::keep, "kept");
  out = (out.empty() ? "nothing to change" : out) + "\n";
  for (const auto* c : shown)
    out += "  " + std::string(snap::to_string(c->kind)) + "  " + redact(snap::display_name(c->path)) + "\n";
  std::size_t replaced = counts[static_cast<int>(K::update)] + counts[static_cast<int>(K::remove)] +
                         counts[static_cast<int>(K::move_aside)] + counts[static_cast<int>(K::metadata)];
  if (replaced > shown.size()) out += "  ... and " + std::to_string(replaced - shown.size()) + " more\n";
  return out;
}

}  // namespace px::cli::snapshot_output
