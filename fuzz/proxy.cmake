# libFuzzer target for the proxy's request parser, host rule and chunked tracker:
# fuzz_proxy_request_parser. px_proxy is instrumented by the top-level
# PARALLEX_FUZZ flags. Run (CI: a bounded time):
#   fuzz_proxy_request_parser -max_total_time=60 -max_len=4096 <build>/fuzz/corpus/proxy
parallex_add_fuzzer(proxy_request_parser
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_request_parser.cpp
  LINKS px_proxy
  CORPUS proxy)
# The run's DNS, the socket channel's messages and host rules: fuzz_proxy_dns.
#   fuzz_proxy_dns -max_total_time=60 -max_len=512 <build>/fuzz/corpus/proxy_dns
parallex_add_fuzzer(proxy_dns
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/proxy_dns.cpp
  LINKS px_proxy
  CORPUS proxy_dns)
