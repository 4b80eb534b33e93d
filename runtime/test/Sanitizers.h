//===- Sanitizers.h - what a test build was instrumented with -----*- C++ -*-===//
//
// Tests that cap the address space (RLIMIT_AS) skip under AddressSanitizer,
// which reserves terabytes of shadow memory and aborts ("Failed to mmap")
// when a later mapping is refused (docs/testing.md, "Sanitizers").
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_SANITIZERS_H
#define MPTRT_TEST_SANITIZERS_H

namespace mptrt::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

} // namespace mptrt::test

#endif // MPTRT_TEST_SANITIZERS_H
