//===- OutOfMemory.h - running out of memory as a message ---------*- C++
//-*-===//
//
// LLVM turns a failed allocation into "LLVM ERROR: out of memory" and an
// abort (SIGABRT). The compiler's front ends turn it instead into a message
// and exit status 1, after removing the outputs being written (the files
// registered with llvm::sys::RemoveFileOnSignal: OutputFile's temporaries).
// Sizes taken from the input are checked before they are allocated
// (mptrt::allocatableBytes); this catches what those checks cannot, such
// as two large copies that each fit. Issue 29; docs/security.md.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DRIVER_OUTOFMEMORY_H
#define MPT_DRIVER_OUTOFMEMORY_H

#include <new>

namespace mpt::driver {

/// For a tool's whole run; call once, after llvm::InitLLVM.
void exitCleanlyOnOutOfMemory(const char *tool);

/// For the duration of one compile in a process that is not the compiler's
/// own (the C API, Python): the handlers are installed, then the previous
/// ones restored.
class ScopedOutOfMemoryExit {
public:
  explicit ScopedOutOfMemoryExit(const char *who);
  ~ScopedOutOfMemoryExit();
  ScopedOutOfMemoryExit(const ScopedOutOfMemoryExit &) = delete;
  ScopedOutOfMemoryExit &operator=(const ScopedOutOfMemoryExit &) = delete;

private:
  std::new_handler previous;
};

} // namespace mpt::driver

#endif // MPT_DRIVER_OUTOFMEMORY_H
