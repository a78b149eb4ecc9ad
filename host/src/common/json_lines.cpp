#include "common/json_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace px {

Result<JsonLinesWriter> JsonLinesWriter::open(const std::filesystem::path& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error::io("open " + what + " " + path.string(), errno);
  JsonLinesWriter writer;
  writer.fd_.reset(fd);
  return writer;
}

void JsonLinesWriter::append(const nlohmann::ordered_json& line) const {
  if (!fd_) return;
  const std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), text.data(), text.size());
}

Result<JsonLinesCount> read_json_lines(const std::filesystem::path& path,
                                       const std::function<bool(const nlohmann::json&)>& each) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error::not_found(path.string() + " does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::io("read " + path.string(), errno);
  JsonLinesCount count;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++count.lines;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !each(j)) ++count.bad;
  }
  return count;
}

}  // namespace px
