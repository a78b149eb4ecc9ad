#pragma once
// Reads a JSONL file line by line in large chunks, without a copy per line. A line
// longer than the chunk grows the buffer (up to kMaxLine); longer ones are skipped
// and reported as oversized so the caller can count them as malformed. Every line is
// followed by kPadding readable bytes, so a SIMD JSON parser can read past its end.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace parallex::transcripts {

class LineReader {
 public:
  // Small enough to stay in a core's L2 cache while it is read, split and scanned (a 4 MiB
  // chunk was evicted before the scanner reached its end).
  static constexpr std::size_t kChunk = std::size_t{256} << 10;
  // No transcript line comes near (the longest real ones, whole files read or written, are a
  // few MiB); parsing one costs up to ~13 times its size when it is all punctuation.
  static constexpr std::size_t kMaxLine = std::size_t{64} << 20;
  static constexpr std::size_t kPadding = 64;

  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // False (with a user-facing message in `error`) when the file cannot be opened. A reader
  // can open one file after another: its buffer is reused.
  bool open(const std::string& path, std::string& error);

  enum class Status { line, oversized, end, error };
  // The next line without its '\n' (and a trailing '\r'); valid until the next call.
  Status next(std::string_view& line, std::string& error);

  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  bool fill(std::string& error);  // false on read error

  int fd_ = -1;
  std::string path_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0, pos_ = 0, end_ = 0;
  bool eof_ = false;
  bool skipping_ = false;  // inside an oversized line
  std::uint64_t bytes_read_ = 0;
};

}  // namespace parallex::transcripts
