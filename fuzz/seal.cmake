# libFuzzer target for what the supervisor reads from the kernel audit log (text
# a sealed process partly chose: paths, comm): fuzz_seal_audit_records.
#   fuzz_seal_audit_records -max_total_time=60 <build>/fuzz/corpus/seal_audit_records
parallex_add_fuzzer(seal_audit_records
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/seal_audit_records.cpp
  LINKS px_linux)
parallex_target_defaults(fuzz_seal_audit_records)
target_compile_options(fuzz_seal_audit_records PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
add_custom_command(TARGET fuzz_seal_audit_records POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy_directory ${CMAKE_CURRENT_LIST_DIR}/corpus/seal_audit_records
          ${CMAKE_BINARY_DIR}/fuzz/corpus/seal_audit_records)
