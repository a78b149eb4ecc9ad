# libFuzzer target for the host's reading of a plugin's session text
# (report/session_text.hpp): fuzz_session_text. Run (CI: a bounded time):
#   fuzz_session_text -max_total_time=60 -max_len=4096 <build>/fuzz/corpus/session_text
parallex_add_fuzzer(session_text
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/session_text.cpp
  LINKS px_session_text nlohmann_json::nlohmann_json
  CORPUS session_text)
