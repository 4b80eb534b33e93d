//===- OutOfMemory.cpp - running out of memory as a message ---------------===//
#include "mpt/Driver/OutOfMemory.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"

#include <cstdlib>
#include <cstring>

#include <unistd.h>

using namespace mpt::driver;

namespace {

const char *outOfMemoryWho = "mpt";

void writeStderr(const char *text) {
  if (text)
    (void)!::write(2, text, std::strlen(text));
}

[[noreturn]] void onOutOfMemory(void *, const char *reason, bool) {
  // Nothing here may allocate.
  llvm::sys::RunInterruptHandlers(); // removes the unfinished outputs
  writeStderr(outOfMemoryWho);
  writeStderr(": out of memory (");
  writeStderr(reason ? reason : "an allocation failed");
  writeStderr(
      "): the input needs more memory than this process can use; no output was "
      "written\n");
  std::_Exit(1);
}

void throughLLVM() { llvm::report_bad_alloc_error("Allocation failed"); }

} // namespace

void mpt::driver::exitCleanlyOnOutOfMemory(const char *tool) {
  outOfMemoryWho = tool;
  llvm::install_bad_alloc_error_handler(onOutOfMemory);
  // operator new, too, even where LLVM's new handler was not installed.
  std::set_new_handler(throughLLVM);
}

ScopedOutOfMemoryExit::ScopedOutOfMemoryExit(const char *who) {
  outOfMemoryWho = who;
  llvm::install_bad_alloc_error_handler(onOutOfMemory);
  previous = std::set_new_handler(throughLLVM);
}

ScopedOutOfMemoryExit::~ScopedOutOfMemoryExit() {
  std::set_new_handler(previous);
  llvm::remove_bad_alloc_error_handler();
}
