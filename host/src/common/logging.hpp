#pragma once
// spdlog set-up. Every log line goes through the redactor before it is written,
// so a secret that reaches a message by mistake still never reaches a log.
#include <spdlog/spdlog.h>

#include <string>

namespace px {

// level: trace, debug, info, warn, error, off. Logs go to stderr.
void init_logging(const std::string& level);

}  // namespace px
