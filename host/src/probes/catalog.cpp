#include "probes/catalog.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace px::probes {

std::string errno_token(int e) {
  const char* name = ::strerrorname_np(e);
  return name ? name : "E" + std::to_string(e);
}

Answer by_errno(long rc) {
  return {rc >= 0 ? "OPEN" : errno_token(errno), ""};
}

const Probe* find(std::string_view name) {
  for (const auto family : {file_probes(), network_probes(), process_probes(), syscall_probes()})
    for (const Probe& p : family)
      if (p.name == name) return &p;
  return nullptr;
}

bool run(std::string_view name, const Args& args, Answer& answer) {
  const Probe* p = find(name);
  if (!p || args.size() < p->min_args) return false;
  answer = p->run(args);
  return true;
}

std::string result_line(const Answer& answer) {
  return "RESULT " + answer.token + (answer.detail.empty() ? "" : " " + answer.detail);
}

std::string usage() {
  std::string out;
  for (const auto family : {file_probes(), network_probes(), process_probes(), syscall_probes()})
    for (const Probe& p : family)
      out += (out.empty() ? "  " : "\n  ") + std::string(p.name) + (p.usage.empty() ? "" : " ") +
             std::string(p.usage);
  return out;
}

int main_line(int argc, char** argv) {
  Answer answer;
  if (argc < 2 || !run(argv[1], Args(argv + 2, argv + argc), answer)) {
    std::fprintf(stderr, "usage: %s NAME ARG...; the probes:\n%s\n", argc > 0 ? argv[0] : "px-probe",
                 usage().c_str());
    return 2;
  }
  std::printf("%s\n", result_line(answer).c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace px::probes
