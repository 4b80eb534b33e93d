//===- Accumulate.h - how float reductions accumulate ------------*- C++ -*-===//
//
// The accumulation rule of every backend (docs/runtime.md, "Accumulation"):
//
//   CPU  A float reduction widens each term to double, adds the terms in an
//        order fixed by the shapes alone (never by the thread count), and
//        rounds the total once into the result's type, or keeps it in
//        double where it feeds more arithmetic. sumAsDouble and dotAsDouble
//        are the plain cases.
//   GPU  Float32 tree (pairwise) reductions, or better. pairwiseSumF32 is
//        the reference: its error is at most
//          ceil(log2 n) * u * sum |x_i|   (u = 2^-24, to first order),
//        and a GPU reduction states a bound no worse than that (a warp
//        shuffle tree over per-thread strided partial sums of length k
//        has (k - 1 + ceil(log2(n / k))) * u).
//
// GEMMs (matmul, gemm, conv and the per-image products of the conv
// gradients) are exempt: they accumulate in blocked float32 inside the BLAS,
// as PyTorch's do.
//
// No dependencies; the compiler side and the tests may include it too.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_ACCUMULATE_H
#define MPTRT_ACCUMULATE_H

#include <cstdint>

namespace mptrt {
namespace numerics {

/// sum x[i] for i = 0 .. n-1, in double, in index order.
inline double sumAsDouble(const float *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += x[i];
  return s;
}

/// sum a[i] * b[i] for i = 0 .. n-1, in double, in index order. The
/// product of two floats is exact in double, so only the additions round.
inline double dotAsDouble(const float *a, const float *b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

/// ceil(log2 n) for n >= 1: the depth of pairwiseSumF32's tree.
inline int pairwiseDepth(int64_t n) {
  int d = 0;
  while ((int64_t{1} << d) < n)
    ++d;
  return d;
}

/// sum term(i) for i in [begin, end) in float32, halving the range until
/// one term is left: the reference float32 tree reduction of the GPU rule.
template <typename Term> float pairwiseSumF32(int64_t begin, int64_t end, const Term &term) {
  if (end - begin == 1)
    return static_cast<float>(term(begin));
  if (end <= begin)
    return 0.0f;
  const int64_t mid = begin + (end - begin) / 2;
  return pairwiseSumF32(begin, mid, term) + pairwiseSumF32(mid, end, term);
}

} // namespace numerics
} // namespace mptrt

#endif // MPTRT_ACCUMULATE_H
