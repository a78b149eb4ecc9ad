#include "common/line_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace parallex::transcripts {

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool LineReader::open(const std::string& path, std::string& error) {
  if (fd_ >= 0) ::close(fd_);
  path_ = path;
  pos_ = end_ = 0;
  eof_ = skipping_ = false;
  bytes_read_ = 0;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    error = "Cannot open " + path + ": " + std::strerror(errno) + ". Check that it exists and is readable.";
    return false;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  // Small files get a small buffer: sessions are many files, most of them short.
  struct stat st {};
  std::size_t want = kChunk;
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
    want = std::clamp<std::size_t>(static_cast<std::size_t>(st.st_size) + 1, 64 * 1024, kChunk);
  // A reader that read a file before keeps its buffer when it is large enough.
  if (cap_ < want) {
    cap_ = want;
    buf_ = std::make_unique_for_overwrite<char[]>(cap_ + kPadding);
  }
  return true;
}

bool LineReader::fill(std::string& error) {
  if (pos_ > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == cap_) {
    if (cap_ >= kMaxLine) {
      // Drop what we have: the caller learns the line was oversized.
      skipping_ = true;
      end_ = 0;
    } else {
      // Whatever size the buffer started at, a line is oversized past exactly kMaxLine.
      std::size_t ncap = std::min(cap_ * 2, kMaxLine);
      auto nbuf = std::make_unique_for_overwrite<char[]>(ncap + kPadding);
      std::memcpy(nbuf.get(), buf_.get(), end_);
      buf_ = std::move(nbuf);
      cap_ = ncap;
    }
  }
  while (true) {
    ssize_t n = ::read(fd_, buf_.get() + end_, cap_ - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = "Cannot read " + path_ + ": " + std::strerror(errno) + ".";
      return false;
    }
    if (n == 0) eof_ = true;
    end_ += static_cast<std::size_t>(n);
    // Read past the last line by the parser, never used: defined all the same.
    std::memset(buf_.get() + end_, 0, kPadding);
    bytes_read_ += static_cast<std::uint64_t>(n);
    return true;
  }
}

LineReader::Status LineReader::next(std::string_view& line, std::string& error) {
  if (fd_ < 0) return Status::end;
  std::size_t scan_from = pos_;
  while (true) {
    const void* nl = std::memchr(buf_.get() + scan_from, '\n', end_ - scan_from);
    if (nl) {
      const char* start = buf_.get() + pos_;
      const char* stop = static_cast<const char*>(nl);
      pos_ = static_cast<std::size_t>(stop - buf_.get()) + 1;
      if (skipping_) {
        skipping_ = false;
        line = {};
        return Status::oversized;
      }
      if (stop > start && stop[-1] == '\r') --stop;
      line = std::string_view(start, static_cast<std::size_t>(stop - start));
      return Status::line;
    }
    if (eof_) {
      if (pos_ >= end_ && !skipping_) return Status::end;
      const char* start = buf_.get() + pos_;
      std::size_t len = end_ - pos_;
      pos_ = end_;
      if (skipping_) {
        skipping_ = false;
        line = {};
        return Status::oversized;
      }
      line = std::string_view(start, len);
      return Status::line;
    }
    std::size_t pending = end_ - pos_;
    if (!fill(error)) return Status::error;
    scan_from = skipping_ ? 0 : pending;
    if (skipping_) pos_ = 0;
  }
}

}  // namespace parallex::transcripts
