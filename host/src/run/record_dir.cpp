#include "run/record_dir.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "common/shown.hpp"

namespace px::run {

namespace {

// Ids collide only among runs started in the same second; this many draws in
// a row finding a folder there means something else fills the folder.
constexpr int kDraws = 64;

}  // namespace

Result<ClaimedRecord> claim_record_dir(const fs::path& runs_dir,
                                       const std::function<std::string()>& next_id) {
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) return Error::io("create the folder of run records " + shown(runs_dir.string()), ec.value());
  for (int draw = 0; draw < kDraws; ++draw) {
    ClaimedRecord claimed{next_id(), {}};
    claimed.dir = runs_dir / claimed.id;
    if (::mkdir(claimed.dir.c_str(), 0700) == 0) {
      // The umask may have taken bits the owner needs; never more than 0700.
      ::chmod(claimed.dir.c_str(), 0700);
      return claimed;
    }
    if (errno != EEXIST)
      return Error::io("create the run's record folder " + shown(claimed.dir.string()), errno);
  }
  return Error::conflict(
      "no free run id was found in " + shown(runs_dir.string()) + " after " + std::to_string(kDraws) +
      " tries: every id drawn names a folder there already; look at what fills that folder");
}

}  // namespace px::run
