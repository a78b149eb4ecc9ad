#pragma once
// The seal's probes: each tries one way out (or one piece of ordinary work)
// for real and answers one token: OPEN when it worked, EMPTY when a file
// opened but held nothing, otherwise the errno name of the refusal (or a
// probe's own word: EAI, NO_IA32, NNP1). One catalog for every place that
// attacks a real seal from inside: `parallex check --sealed` and the demo
// (parallex itself, in probe mode) and the escape suite (tests/escape's
// `px-probe`, the same code in a small executable).
//
// Plain code on purpose: no other library of the project, no logging, no
// allocation that outlives a probe, so it runs in any process (a fork child,
// an executable built without sanitizers) and what it opens is only what the
// probe itself tries.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace px::probes {

using Args = std::vector<std::string>;

struct Answer {
  std::string token;   // OPEN, EMPTY, an errno name, or the probe's own word
  std::string detail;  // more for the reader, after the token (the fork bomb's count)
};

struct Probe {
  std::string_view name;
  std::string_view usage;  // the arguments, as `px-probe NAME USAGE`
  std::size_t min_args;
  Answer (*run)(const Args& args);
};

// The errno name of `e` ("EACCES"); "E<number>" for one the C library cannot name.
std::string errno_token(int e);
// The answer to a call that set errno on failure: OPEN when `rc` says it worked.
Answer by_errno(long rc);

// Every probe, by family (files.cpp, network.cpp, processes.cpp, syscalls.cpp).
std::span<const Probe> file_probes();
std::span<const Probe> network_probes();
std::span<const Probe> process_probes();
std::span<const Probe> syscall_probes();

// The probe called `name`, or null.
const Probe* find(std::string_view name);

// Runs the probe `name`; false (and `answer` untouched) for an unknown name
// or too few arguments.
bool run(std::string_view name, const Args& args, Answer& answer);

// Every probe with its arguments, a line each ("  read PATH"), for a usage message.
std::string usage();

// The line a probe prints: "RESULT <token>[ <detail>]".
std::string result_line(const Answer& answer);

// A program's whole job: `argv[0]` NAME ARG...; prints the result line and
// exits 0, or says how to call it and exits 2.
int main_line(int argc, char** argv);

}  // namespace px::probes
