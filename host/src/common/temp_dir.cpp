#include "common/temp_dir.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/remove_tree.hpp"
#include "common/unique_fd.hpp"

namespace px {

namespace fs = std::filesystem;

Result<TempDir> TempDir::make(const fs::path& base, const std::string& prefix) {
  std::string templ = (base / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(templ.data())) return Error::io("create a temporary folder in " + base.string(), errno);
  TempDir made;
  made.path_ = templ;
  return made;
}

Result<TempDir> TempDir::make(const std::string& prefix) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  return make(base, prefix);
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    TempDir old(std::move(*this));
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  UniqueFd parent(::open(path_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (parent) (void)remove_tree_at(parent.get(), path_.filename().string());
}

fs::path TempDir::release() {
  return std::exchange(path_, {});
}

}  // namespace px
