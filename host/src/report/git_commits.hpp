#pragma once
// The commits a run made in the folder it ran in (libgit2, read-only): those
// reachable from the refs at the run's end (the refs now when the record has
// none) and not from the refs at its start.
#include <filesystem>
#include <optional>

#include "report/model.hpp"

namespace px::report {

struct CommitQuery {
  std::filesystem::path run_folder;
  Json refs_start;  // {refname: oid} from the run record; null when it has none
  std::string head_start;
  Json refs_end;  // {refname: oid}; null: use the refs now
  // The agent's allowed_signers file; when absent, signatures are "signed, unverified".
  std::optional<std::filesystem::path> allowed_signers;
  // Used only without refs_start: commits whose committer time lies in the window.
  std::int64_t since_ms = 0, until_ms = 0;
  // A lost run's window (its end only the last trace it left): a commit
  // counts only when its whole second lies in the window, since a committer
  // time is to the second and a commit made just before the start, in the
  // same second, must not be the run's.
  bool whole_seconds = false;
  std::size_t limit = 500;
};

// An array of {id, short_id, author{name,email,time}, committer{...}, summary, message,
// signature{status, format, signer, detail}, files[{path, status, from?}]}, oldest first.
// status of the signature: "verified", "signed, unverified", "unsigned", "bad".
Json commits_made(const CommitQuery& query, Source& source);

}  // namespace px::report
