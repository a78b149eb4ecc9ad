# libFuzzer target for `parallex ui`'s request parsing, checks and routing:
# fuzz_ui_request. Run (CI: a bounded time):
#   fuzz_ui_request -max_total_time=60 -max_len=4096 <build>/fuzz/corpus/ui_request
parallex_add_fuzzer(ui_request
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ui_request.cpp
  LINKS px_ui_http Boost::headers
  CORPUS ui_request)
