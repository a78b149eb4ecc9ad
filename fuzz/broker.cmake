# libFuzzer targets for the broker: the request-rule parser and matcher
# (fuzz_broker_request_rules) and the credential substitution in request heads,
# the body scanner and the response replacer (fuzz_broker_header_substitution).
#   fuzz_broker_request_rules -max_total_time=60 <build>/fuzz/corpus/broker_request_rules
#   fuzz_broker_header_substitution -max_total_time=60 -max_len=8192 <build>/fuzz/corpus/broker_header_substitution
parallex_add_fuzzer(broker_request_rules
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/broker_request_rules.cpp
  LINKS px_broker)
parallex_add_fuzzer(broker_header_substitution
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/broker_header_substitution.cpp
  LINKS px_broker)
