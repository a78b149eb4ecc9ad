#pragma once
// A fresh private folder (0700, mkdtemp's random name) removed with all it
// holds when the owner goes: the one way Parallex makes a scratch folder.
#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace px {

class TempDir {
 public:
  // `base`/`prefix`XXXXXX. Errors name the folder it could not be made in.
  static Result<TempDir> make(const std::filesystem::path& base, const std::string& prefix);
  // Under the system's temp folder ($TMPDIR, else /tmp).
  static Result<TempDir> make(const std::string& prefix);

  TempDir() = default;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Removes it through descriptors (common/remove_tree.hpp): a link inside,
  // or the folder swapped for one meanwhile, is never followed.
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }
  // Keeps the folder: the caller owns it from now on (moved into place, or
  // removed by someone else).
  std::filesystem::path release();

 private:
  std::filesystem::path path_;
};

}  // namespace px
