#include "common/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>

#include "common/redact.hpp"

namespace px {
namespace {

class RedactingStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    const std::string line = redact(std::string_view(formatted.data(), formatted.size()));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

void init_logging(const std::string& level) {
  auto sink = std::make_shared<RedactingStderrSink>();
  auto logger = std::make_shared<spdlog::logger>("parallex", sink);
  logger->set_pattern("parallex: %^%l%$: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace px
