//===- KernelCases.h - one realistic kernel of every kind ---------*- C++ -*-===//
//
// A table of one-kernel test cases, at least one per kernel kind of the CPU
// backend, with realistic shapes (the activations of a small CNN or
// transformer block) and the non-f32 dtypes where a kernel widens: random
// operands, the result types and the attributes. Used by the tests that
// must cover every kind: NoAllocationTest (a second run allocates nothing)
// and CudaParityTest (the CUDA backend against the CPU backend).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_KERNELCASES_H
#define MPTRT_TEST_KERNELCASES_H

#include "KernelTestUtil.h"

#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace test {

using T = std::vector<int64_t>; // a shape

inline Attribute aInt(const char *n, int64_t v) { return Attribute::makeInt(n, v); }
inline Attribute aFloat(const char *n, double v) { return Attribute::makeFloat(n, v); }
inline Attribute aInts(const char *n, std::vector<int64_t> v) { return Attribute::makeInts(n, v); }
inline Attribute aString(const char *n, const char *v) { return Attribute::makeString(n, v); }

/// One kernel: its operands (random values; integer operands in [lo, hi],
/// e.g. labels and indices), result types and attributes.
struct Case {
  std::string kind;
  std::vector<HostTensor> operands;
  std::vector<HostTensor> results;
  std::vector<Attribute> attrs;
};

struct Operand {
  DType dtype;
  T shape;
  double lo = -2.0, hi = 2.0;
};

/// A case with random operands (one generator for the whole process, so
/// the table is the same on every run).
Case make(std::string kind, std::vector<Operand> operands, std::vector<std::pair<DType, T>> results,
          std::vector<Attribute> attrs = {});

inline constexpr DType F32 = DType::F32, BF16 = DType::BF16, F16 = DType::F16, I64 = DType::I64,
                       I1 = DType::I1, F8 = DType::F8E4M3FN, F8E5 = DType::F8E5M2;

/// Every kind of the CPU backend, with a representative shape each.
std::vector<Case> allCases();

/// "matmul(bf16, bf16)".
std::string describeCase(const Case &c);

/// `c` as a one-kernel plan (inputs in0.., outputs out0..) whose entry
/// point is `entry`.
std::vector<uint8_t> planOf(const Case &c, const std::string &entry);

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_KERNELCASES_H
