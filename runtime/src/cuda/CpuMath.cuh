//===- CpuMath.cuh - float functions computed as the CPU's libm does ------===//
//
// glibc's expf evaluates in double and rounds once (within 0.502 ulp of the
// exact result), so exp in double rounded to float agrees with it except
// within a hair of a rounding midpoint, where CUDA's own expf may be off by
// up to 2 ulp. The softmax, loss and gradient kernels use this one, so
// their f32 results follow the CPU's to the last bit or so.
//
// Only nvcc includes this file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_CPUMATH_CUH
#define MPTRT_SRC_CUDA_CPUMATH_CUH

namespace mptrt {
namespace rt {
namespace cuda {

/// expf(x) as glibc computes it: in double, rounded once.
__device__ inline float expAsCpu(float x) {
  return static_cast<float>(exp(static_cast<double>(x)));
}

/// erff and tanhf rounded once from double: the correctly rounded result
/// but for a hair around a midpoint. glibc's (Debian bookworm, 2.36) erff
/// and tanhf are the fdlibm float codes, within about 1 ulp and usually
/// correctly rounded, so these agree with the CPU wherever glibc rounds
/// correctly; CUDA's erff / tanhf (within 2 ulp) would differ more often.
/// unary_grad uses them: gelu's derivative cancels near x = -0.75, where a
/// 1-ulp difference in erf is a large relative difference in the result.
__device__ inline float erfRounded(float x) {
  return static_cast<float>(erf(static_cast<double>(x)));
}
__device__ inline float tanhRounded(float x) {
  return static_cast<float>(tanh(static_cast<double>(x)));
}

/// The libm of the unary functions (kernels/elementwise/UnaryMath.h) in
/// the forward kernels: CUDA's own (expf, erff, tanhf, logf: within 2 ulp).
struct DeviceLibm {
  __device__ static float exp(float x) { return expf(x); }
  __device__ static float expm1(float x) { return expm1f(x); }
  __device__ static float log(float x) { return logf(x); }
  __device__ static float log1p(float x) { return log1pf(x); }
  __device__ static float erf(float x) { return erff(x); }
  __device__ static float tanh(float x) { return tanhf(x); }
  __device__ static float sqrt(float x) { return sqrtf(x); }
  __device__ static float sin(float x) { return sinf(x); }
  __device__ static float cos(float x) { return cosf(x); }
  __device__ static float pow(float x, float y) { return powf(x, y); }
};

/// The libm of the unary gradients: exp, erf and tanh as glibc's (above).
/// The others are rounded once from double too.
struct CpuLikeLibm {
  __device__ static float exp(float x) { return expAsCpu(x); }
  __device__ static float expm1(float x) { return static_cast<float>(::expm1(double(x))); }
  __device__ static float log(float x) { return logf(x); }
  __device__ static float log1p(float x) { return static_cast<float>(::log1p(double(x))); }
  __device__ static float erf(float x) { return erfRounded(x); }
  __device__ static float tanh(float x) { return tanhRounded(x); }
  __device__ static float sqrt(float x) { return sqrtf(x); }
  __device__ static float sin(float x) { return static_cast<float>(::sin(double(x))); }
  __device__ static float cos(float x) { return static_cast<float>(::cos(double(x))); }
};

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_CPUMATH_CUH
