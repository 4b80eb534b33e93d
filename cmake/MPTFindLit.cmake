# Finds lit, LLVM's test runner, for the lit suite (test/).
#
# LLVM_EXTERNAL_LIT (the variable LLVM's add_lit_testsuite reads) may be
# passed in: -DLLVM_EXTERNAL_LIT=/path/to/lit. Otherwise lit is looked for
# beside LLVM's tools (Debian ships it there as `lit`; LLVMConfig's own
# llvm-lit does not exist in Debian's packages), then on PATH. When none is
# found, MPT_LIT_FOUND is OFF and the lit tests are skipped with a message.
if(LLVM_EXTERNAL_LIT AND EXISTS "${LLVM_EXTERNAL_LIT}")
  set(MPT_LIT_FOUND ON)
else()
  find_program(MPT_LIT_EXECUTABLE NAMES lit llvm-lit lit.py
               HINTS "${LLVM_TOOLS_BINARY_DIR}"
               DOC "lit, LLVM's test runner")
  if(MPT_LIT_EXECUTABLE)
    set(LLVM_EXTERNAL_LIT "${MPT_LIT_EXECUTABLE}" CACHE FILEPATH
        "lit, LLVM's test runner (found beside LLVM's tools or on PATH)" FORCE)
    set(MPT_LIT_FOUND ON)
  else()
    set(MPT_LIT_FOUND OFF)
  endif()
endif()

# FileCheck, not and count run inside the lit tests.
find_program(MPT_FILECHECK_EXECUTABLE FileCheck HINTS "${LLVM_TOOLS_BINARY_DIR}"
             DOC "LLVM's FileCheck, for the lit tests")
if(MPT_LIT_FOUND AND NOT MPT_FILECHECK_EXECUTABLE)
  message(STATUS "MPT: FileCheck not found beside LLVM's tools or on PATH; "
                 "the lit tests are skipped (install llvm-22-tools)")
  set(MPT_LIT_FOUND OFF)
elseif(MPT_LIT_FOUND)
  message(STATUS "MPT: lit: ${LLVM_EXTERNAL_LIT}")
else()
  message(STATUS "MPT: lit not found; the lit tests are skipped (install "
                 "llvm-22-tools, or pass -DLLVM_EXTERNAL_LIT=/path/to/lit)")
endif()
