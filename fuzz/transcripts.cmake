# libFuzzer targets for the transcript parsers: fuzz_transcripts_{claude_code,codex,opencode}.
# Include after plugins/ when PARALLEX_FUZZ is ON (clang only). The parser libraries are
# instrumented too, otherwise libFuzzer gets no coverage from the code it is meant to explore.
# Run: fuzz_transcripts_codex -max_total_time=60 <build>/fuzz/corpus/transcripts_codex
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(WARNING "PARALLEX_FUZZ needs clang (CC=clang CXX=clang++); transcript fuzz targets skipped.")
  return()
endif()

set(_px_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
foreach(lib px_transcripts_common px_transcripts_claude_code px_transcripts_codex px_transcripts_opencode)
  target_compile_options(${lib} PRIVATE ${_px_fuzz_flags})
endforeach()

foreach(h claude_code codex opencode)
  parallex_add_fuzzer(transcripts_${h}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/transcripts_${h}.cpp
    LINKS px_transcripts_${h})
  target_include_directories(fuzz_transcripts_${h} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
endforeach()
