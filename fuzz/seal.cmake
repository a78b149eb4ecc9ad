# libFuzzer target for what the supervisor reads from the kernel audit log (text
# a sealed process partly chose: paths, comm): fuzz_seal_audit_records.
#   fuzz_seal_audit_records -max_total_time=60 <build>/fuzz/corpus/seal_audit_records
parallex_add_fuzzer(seal_audit_records
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/seal_audit_records.cpp
  LINKS px_seal)
