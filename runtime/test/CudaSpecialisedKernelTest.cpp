//===- CudaSpecialisedKernelTest.cpp - specialised CUDA kernels = generic --===//
//
// The CUDA elementwise kernels are chosen at prepare for their operands'
// dtypes, with 32-bit indices, 16-byte accesses and fast paths for
// same-shape, scalar and row broadcasts (docs/runtime.md, "CUDA kernels
// specialised at prepare"). They must compute exactly what the generic
// kernels do (dtypes read per element, 64-bit indices, one element per
// access), which MPTRT_CUDA_GENERIC_KERNELS=1 selects at prepare. Each case
// here prepares one kernel both ways on the same device buffers and
// compares the results bit for bit, with the bytes around them (no kernel
// may write outside its result):
//
//   - every dtype a kind takes (f32, f16, bf16, both fp8, i64, i32, i1);
//   - sizes that are no multiple of any vector width (odd, prime);
//   - operands and results at an odd element offset (the one-element path);
//   - same-shape, scalar (either side), row (either side, a multiple of the
//     vector width or not) and general broadcasts;
//   - every cast, quantize and unary_grad.
//
// The operands are random, with infinities, NaNs and signed zeros among
// them; fp8 operands take every byte value.
//
// Calls the CUDA backend's prepare functions directly (cuda/CudaKernels.h),
// so it is built only with the CUDA backend, and skipped, saying why,
// where no GPU can be used.
//
//===----------------------------------------------------------------------===//
#include "TensorDesc.h"
#include "cuda/CudaContext.h"
#include "cuda/CudaKernels.h"
#include "mptrt/Numerics.h"
#include "ops/KernelView.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

using plan::Attribute;

/// One tensor of a case: its type and its offset (in elements) from an
/// aligned allocation.
struct Tensor {
  DType dtype;
  std::vector<int64_t> shape;
  int64_t offset = 0;
};

struct Case {
  std::string kind;
  PrepareFn prepare;
  std::vector<Tensor> operands;
  std::vector<Tensor> results;
  std::vector<Attribute> attrs;
  /// Operands given fixed bytes instead of random ones (scalars, indices).
  std::vector<std::pair<size_t, std::vector<uint8_t>>> fixed = {};
};

template <typename T> std::vector<uint8_t> bytesOf(std::vector<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::string describeTensor(const Tensor &t) {
  std::string s = describeType(t.dtype, t.shape);
  return t.offset ? s + "@+" + std::to_string(t.offset) : s;
}

std::string describeCase(const Case &c) {
  std::string s = c.kind + "(";
  for (size_t i = 0; i < c.operands.size(); ++i)
    s += (i ? ", " : "") + describeTensor(c.operands[i]);
  s += ") -> ";
  for (size_t i = 0; i < c.results.size(); ++i)
    s += (i ? ", " : "") + describeTensor(c.results[i]);
  for (const Attribute &a : c.attrs)
    s += " " + a.name;
  return s;
}

/// Why no GPU can be used here, or "".
std::string noGpuReason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable GPU: cudaGetDeviceCount: ") + cudaGetErrorString(e);
  }
  return count > 0 ? "" : "no usable GPU: no CUDA device";
}

/// Random element bytes of `dtype`: mostly values of either sign around
/// 1, and (floats) some infinities, NaNs, zeros and tiny or huge values.
std::vector<uint8_t> randomBytes(DType dtype, int64_t n, std::mt19937 &rng) {
  namespace num = mptrt::numerics;
  const size_t size = plan::dtypeSize(dtype);
  std::vector<uint8_t> bytes(n * size);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<uint32_t> bits;
  const float specials[] = {INFINITY, -INFINITY, NAN,      0.0f,  -0.0f,
                            1e-30f,   -3e38f,    65504.0f, 448.0f};
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *p = bytes.data() + i * size;
    const int pick = percent(rng);
    float f = normal(rng);
    if (pick < 8)
      f = specials[bits(rng) % (sizeof(specials) / sizeof(specials[0]))];
    switch (dtype) {
    case DType::F32: {
      uint32_t u = pick < 12 && pick >= 8 ? bits(rng) : num::bitsOfF32(f);
      std::memcpy(p, &u, 4);
      break;
    }
    case DType::F16: {
      const uint16_t u = num::f32ToF16(f);
      std::memcpy(p, &u, 2);
      break;
    }
    case DType::BF16: {
      const uint16_t u = num::f32ToBf16(f);
      std::memcpy(p, &u, 2);
      break;
    }
    case DType::F8E4M3FN:
    case DType::F8E5M2:
      *p = static_cast<uint8_t>(bits(rng));
      break;
    case DType::I64: {
      int64_t v = static_cast<int64_t>(f * 8);
      if (pick < 4)
        v = static_cast<int64_t>((uint64_t(bits(rng)) << 32) | bits(rng));
      std::memcpy(p, &v, 8);
      break;
    }
    case DType::I32: {
      int32_t v = static_cast<int32_t>(f * 8);
      if (pick < 4)
        v = static_cast<int32_t>(bits(rng));
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::I1:
      *p = pick < 50;
      break;
    }
  }
  return bytes;
}

/// A device buffer holding one tensor at its offset, with a guard band.
struct DeviceTensor {
  TensorDesc desc;
  int64_t offsetBytes = 0;
  uint64_t allocation = 0;
  uint8_t *base = nullptr;
  void *data() const { return base + offsetBytes; }
};

constexpr uint64_t kGuardBytes = 64;

class CudaSpecialised : public ::testing::Test {
protected:
  void SetUp() override {
    const std::string why = noGpuReason();
    if (!why.empty())
      GTEST_SKIP() << why;
    int device = 0;
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&context.smCount, cudaDevAttrMultiProcessorCount, device),
              cudaSuccess);
    context.deviceOrdinal = device;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&context.errorWord), sizeof(DeviceErrorRecord)),
              cudaSuccess);
    ASSERT_EQ(cudaMemset(context.errorWord, 0, sizeof(DeviceErrorRecord)), cudaSuccess);
  }
  void TearDown() override {
    if (context.errorWord)
      cudaFree(context.errorWord);
    unsetenv("MPTRT_CUDA_GENERIC_KERNELS");
  }

  /// The bytes of every result allocation (guards included) after a run of
  /// `c` prepared generic or specialised.
  std::vector<std::vector<uint8_t>> runOnce(const Case &c, std::vector<DeviceTensor> &operands,
                                            std::vector<DeviceTensor> &results, bool generic) {
    if (generic)
      setenv("MPTRT_CUDA_GENERIC_KERNELS", "1", 1);
    else
      unsetenv("MPTRT_CUDA_GENERIC_KERNELS");
    plan::Kernel kernel;
    kernel.kind = c.kind;
    kernel.attrs = c.attrs;
    std::vector<const TensorDesc *> ops, res;
    KernelArgs args;
    for (DeviceTensor &t : operands) {
      ops.push_back(&t.desc);
      args.operands.push_back({&t.desc, t.data()});
    }
    for (DeviceTensor &t : results) {
      res.push_back(&t.desc);
      args.results.push_back({&t.desc, t.data()});
      EXPECT_EQ(cudaMemset(t.base, 0xA5, t.allocation), cudaSuccess);
    }
    const KernelView view(kernel, ops, res);
    std::unique_ptr<PreparedKernel> prepared;
    const Status prepareStatus = c.prepare(context, view, &prepared);
    EXPECT_TRUE(prepareStatus) << describeCase(c) << ": " << prepareStatus.message();
    if (!prepareStatus)
      return {};
    const Status runStatus = prepared->run(args);
    EXPECT_TRUE(runStatus) << describeCase(c) << ": " << runStatus.message();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << describeCase(c);
    std::vector<std::vector<uint8_t>> out;
    for (DeviceTensor &t : results) {
      std::vector<uint8_t> bytes(t.allocation);
      EXPECT_EQ(cudaMemcpy(bytes.data(), t.base, t.allocation, cudaMemcpyDeviceToHost),
                cudaSuccess);
      out.push_back(std::move(bytes));
    }
    return out;
  }

  DeviceTensor allocate(const Tensor &t) {
    DeviceTensor d;
    d.desc = makeDesc(t.dtype, t.shape);
    d.offsetBytes = t.offset * static_cast<int64_t>(plan::dtypeSize(t.dtype));
    d.allocation = d.desc.bytes + d.offsetBytes + kGuardBytes;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&d.base), d.allocation), cudaSuccess);
    return d;
  }

  /// Runs `c` generic and specialised; fails unless every result byte (and
  /// guard byte) agrees.
  void check(const Case &c) {
    SCOPED_TRACE(describeCase(c));
    std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(describeCase(c))));
    std::vector<DeviceTensor> operands, results;
    for (const Tensor &t : c.operands) {
      operands.push_back(allocate(t));
      DeviceTensor &d = operands.back();
      std::vector<uint8_t> bytes = randomBytes(t.dtype, d.desc.numel, rng);
      for (const auto &f : c.fixed)
        if (&t == &c.operands[f.first])
          bytes = f.second;
      EXPECT_EQ(cudaMemcpy(d.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                cudaSuccess);
    }
    for (const Tensor &t : c.results)
      results.push_back(allocate(t));
    const auto generic = runOnce(c, operands, results, /*generic=*/true);
    const auto specialised = runOnce(c, operands, results, /*generic=*/false);
    ASSERT_EQ(generic.size(), specialised.size());
    for (size_t r = 0; r < generic.size(); ++r) {
      size_t first = generic[r].size(), differ = 0;
      for (size_t i = 0; i < generic[r].size(); ++i)
        if (generic[r][i] != specialised[r][i]) {
          differ += 1;
          first = std::min(first, i);
        }
      EXPECT_EQ(differ, 0u) << "result " << r << ": " << differ
                            << " bytes differ from the generic kernel's; the first at byte "
                            << first << " of the allocation (the result starts at byte "
                            << results[r].offsetBytes << ")";
    }
    for (DeviceTensor &d : operands)
      cudaFree(d.base);
    for (DeviceTensor &d : results)
      cudaFree(d.base);
    ++cases;
  }

  Context context;
  int cases = 0;
};

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2};
const DType kAll[] = {DType::F32,    DType::F16, DType::BF16, DType::F8E4M3FN,
                      DType::F8E5M2, DType::I64, DType::I32,  DType::I1};

/// A tensor of `shape`, at element offset `offset`.
Tensor t(DType dtype, std::vector<int64_t> shape, int64_t offset = 0) {
  return {dtype, std::move(shape), offset};
}

// Tests unary functions on every float dtype, and the integer ones on i32,
// i64 and i1, aligned and at an odd offset.
TEST_F(CudaSpecialised, Unary) {
  const std::vector<int64_t> shape = {3, 1031};
  for (int64_t offset : {0, 1}) {
    for (DType d : kFloats)
      for (const char *kind : {"relu", "exp", "tanh", "sqrt", "neg", "abs", "sigmoid", "floor"})
        check({kind, prepareUnary, {t(d, shape, offset)}, {t(d, shape)}, {}});
    for (DType d : kFloats)
      check({"gelu",
             prepareUnary,
             {t(d, {4097})},
             {t(d, {4097}, offset)},
             {Attribute::makeString("approximate", "tanh")}});
    for (DType d : {DType::F32, DType::BF16})
      check({"clip",
             prepareUnary,
             {t(d, shape, offset)},
             {t(d, shape, offset)},
             {Attribute::makeFloat("min", -0.5), Attribute::makeFloat("max", 1.25)}});
    for (DType d : {DType::I64, DType::I32})
      for (const char *kind : {"relu", "neg", "abs", "sign"})
        check({kind, prepareUnary, {t(d, shape, offset)}, {t(d, shape)}, {}});
    check({"not", prepareUnary, {t(DType::I1, {65537}, offset)}, {t(DType::I1, {65537})}, {}});
  }
  // Mixed float dtypes keep the generic kernel: still the same bytes.
  check({"exp", prepareUnary, {t(DType::BF16, shape)}, {t(DType::F32, shape)}, {}});
}

// Tests every binary kind on every dtype it takes, with operands of the
// output's shape, aligned or not.
TEST_F(CudaSpecialised, BinarySameShape) {
  const std::vector<int64_t> shape = {7, 517};
  for (int64_t offset : {0, 1})
    for (DType d : kAll) {
      for (const char *kind : {"add", "sub", "mul", "div", "pow", "max", "min"})
        if (d != DType::I1)
          check({kind, prepareBinary, {t(d, shape, offset), t(d, shape)}, {t(d, shape)}, {}});
      for (const char *kind : {"equal", "less", "greater"})
        check({kind, prepareBinary, {t(d, shape), t(d, shape)}, {t(DType::I1, shape, offset)}, {}});
    }
}

// Tests scalar, row and general broadcasts of either operand.
TEST_F(CudaSpecialised, BinaryBroadcast) {
  struct Shapes {
    std::vector<int64_t> lhs, rhs, out;
  };
  const Shapes shapes[] = {
      {{5, 1031}, {}, {5, 1031}},        // scalar rhs
      {{1}, {3, 7, 33}, {3, 7, 33}},     // scalar lhs
      {{9, 64}, {64}, {9, 64}},          // row rhs, a multiple of every vector width
      {{48}, {3, 5, 48}, {3, 5, 48}},    // row lhs
      {{11, 517}, {1, 517}, {11, 517}},  // row rhs, odd
      {{4, 6, 80}, {6, 80}, {4, 6, 80}}, // a row of two axes
      {{33, 1}, {33, 65}, {33, 65}},     // a column: general
      {{5, 1, 7}, {1, 6, 7}, {5, 6, 7}}, // both broadcast
      {{2, 3, 1, 5}, {3, 4, 1}, {2, 3, 4, 5}},
      {{1, 1}, {1, 1}, {1, 1}}, // one element
  };
  for (const Shapes &s : shapes)
    for (DType d : kAll) {
      if (d != DType::I1)
        for (const char *kind : {"sub", "div", "pow", "max"})
          check({kind, prepareBinary, {t(d, s.lhs), t(d, s.rhs)}, {t(d, s.out)}, {}});
      check({"less", prepareBinary, {t(d, s.lhs), t(d, s.rhs)}, {t(DType::I1, s.out)}, {}});
    }
  // At odd offsets: every broadcast takes the one-element path.
  for (DType d : {DType::F32, DType::BF16, DType::I64}) {
    check({"sub", prepareBinary, {t(d, {9, 64}, 1), t(d, {64})}, {t(d, {9, 64})}, {}});
    check({"sub", prepareBinary, {t(d, {9, 64}), t(d, {64}, 3)}, {t(d, {9, 64})}, {}});
    check({"sub", prepareBinary, {t(d, {}, 1), t(d, {9, 65})}, {t(d, {9, 65}, 1)}, {}});
  }
  // Mixed dtypes keep the generic kernel.
  check({"add",
         prepareBinary,
         {t(DType::I64, {9, 64}), t(DType::F32, {64})},
         {t(DType::F32, {9, 64})},
         {}});
  check({"mul",
         prepareBinary,
         {t(DType::BF16, {9, 64}), t(DType::BF16, {64})},
         {t(DType::F32, {9, 64})},
         {}});
}

// Tests where on 1-, 2-, 4- and 8-byte elements, same-shape and broadcast.
TEST_F(CudaSpecialised, Where) {
  for (DType d : {DType::I1, DType::F8E4M3FN, DType::BF16, DType::F32, DType::I32, DType::I64}) {
    for (int64_t offset : {0, 1})
      check({"where",
             prepareWhere,
             {t(DType::I1, {3, 1037}, offset), t(d, {3, 1037}), t(d, {3, 1037}, offset)},
             {t(d, {3, 1037})},
             {}});
    check({"where",
           prepareWhere,
           {t(DType::I1, {4, 1, 9}), t(d, {4, 6, 9}), t(d, {})},
           {t(d, {4, 6, 9})},
           {}});
    check({"where",
           prepareWhere,
           {t(DType::I1, {6, 9}), t(d, {9}), t(d, {4, 1, 1})},
           {t(d, {4, 6, 9})},
           {}});
  }
}

// Tests every cast between the eight dtypes, saturating into fp8 too.
TEST_F(CudaSpecialised, Cast) {
  for (int64_t offset : {0, 1})
    for (DType from : kAll)
      for (DType to : kAll) {
        check({"cast", prepareCast, {t(from, {1031}, offset)}, {t(to, {1031})}, {}});
        if (to == DType::F8E4M3FN || to == DType::F8E5M2)
          check({"cast",
                 prepareCast,
                 {t(from, {2, 257})},
                 {t(to, {2, 257}, offset)},
                 {Attribute::makeInt("saturate", 1)}});
      }
}

// Tests quantize from every float dtype into both fp8 dtypes.
TEST_F(CudaSpecialised, Quantize) {
  for (int64_t offset : {0, 1})
    for (DType from : kFloats)
      for (DType to : {DType::F8E4M3FN, DType::F8E5M2})
        check({"quantize",
               prepareQuantize,
               {t(from, {4099}, offset), t(DType::F32, {})},
               {t(to, {4099})},
               {},
               {{1, bytesOf<float>({3.5f})}}});
}

// Tests unary_grad on every float dtype.
TEST_F(CudaSpecialised, UnaryGrad) {
  for (int64_t offset : {0, 1})
    for (DType d : kFloats)
      for (const char *kind : {"relu", "gelu", "tanh", "sigmoid", "exp", "leaky_relu"})
        check({"unary_grad",
               prepareUnaryGrad,
               {t(d, {3, 333}, offset), t(d, {3, 333})},
               {t(d, {3, 333})},
               {Attribute::makeString("kind", kind)}});
  check({"unary_grad",
         prepareUnaryGrad,
         {t(DType::BF16, {999}), t(DType::F32, {999})},
         {t(DType::BF16, {999})},
         {Attribute::makeString("kind", "gelu")}});
}

// Tests transposes (the last axis kept or not: widened or element-wise),
// slices (negative steps, whole inner rows), expand and slice_grad on 1-,
// 2-, 4- and 8-byte elements, aligned or at an odd offset.
TEST_F(CudaSpecialised, StridedCopies) {
  for (DType d : {DType::I1, DType::BF16, DType::F32, DType::I64})
    for (int64_t offset : {0, 1}) {
      check({"transpose",
             prepareTranspose,
             {t(d, {3, 5, 7, 16}, offset)},
             {t(d, {5, 3, 7, 16})},
             {Attribute::makeInts("perm", {1, 0, 2, 3})}});
      check({"transpose",
             prepareTranspose,
             {t(d, {6, 10, 33})},
             {t(d, {33, 6, 10}, offset)},
             {Attribute::makeInts("perm", {2, 0, 1})}});
      check({"transpose",
             prepareTranspose,
             {t(d, {2, 64, 48}, offset)},
             {t(d, {2, 48, 64})},
             {Attribute::makeInts("perm", {0, 2, 1})}});
      check({"slice",
             prepareSlice,
             {t(d, {9, 40, 32}, offset)},
             {t(d, {3, 40, 32})},
             {Attribute::makeInts("starts", {2, 0, 0}), Attribute::makeInts("ends", {8, 40, 32}),
              Attribute::makeInts("steps", {2, 1, 1})}});
      check({"slice",
             prepareSlice,
             {t(d, {9, 41, 17})},
             {t(d, {9, 13, 5}, offset)},
             {Attribute::makeInts("starts", {0, 40, 1}), Attribute::makeInts("ends", {9, 1, 16}),
              Attribute::makeInts("steps", {1, -3, 3})}});
      check({"slice_grad",
             prepareSliceGrad,
             {t(d, {3, 40, 32}, offset)},
             {t(d, {9, 40, 32})},
             {Attribute::makeInts("starts", {2, 0, 0}), Attribute::makeInts("ends", {8, 40, 32}),
              Attribute::makeInts("steps", {2, 1, 1})}});
      check({"expand", prepareExpand, {t(d, {1, 32}, offset)}, {t(d, {5, 7, 32})}, {}});
      check({"expand", prepareExpand, {t(d, {6, 1})}, {t(d, {2, 6, 33}, offset)}, {}});
    }
  // slice_grad between float dtypes converts (the generic kernel).
  check({"slice_grad",
         prepareSliceGrad,
         {t(DType::BF16, {3, 40})},
         {t(DType::F32, {9, 40})},
         {Attribute::makeInts("starts", {2, 0}), Attribute::makeInts("ends", {8, 40}),
          Attribute::makeInts("steps", {2, 1})}});
}

// Tests concat, split, gather (i64 and i32 indices, negative ones too) and
// trilu.
TEST_F(CudaSpecialised, Pieces) {
  const std::vector<uint8_t> indices64 = bytesOf<int64_t>({0, 6, -1, 3, -7, 2, 2});
  const std::vector<uint8_t> indices32 = bytesOf<int32_t>({5, -2, 0, 1, 1});
  for (DType d : {DType::I1, DType::F16, DType::F32, DType::I64})
    for (int64_t offset : {0, 1}) {
      check({"concat",
             prepareConcat,
             {t(d, {4, 2, 32}, offset), t(d, {4, 6, 32}), t(d, {4, 1, 32})},
             {t(d, {4, 9, 32})},
             {Attribute::makeInt("axis", 1)}});
      check({"concat",
             prepareConcat,
             {t(d, {3, 5}), t(d, {3, 7})},
             {t(d, {3, 12}, offset)},
             {Attribute::makeInt("axis", 1)}});
      check({"split",
             prepareSplit,
             {t(d, {4, 9, 32}, offset)},
             {t(d, {4, 2, 32}), t(d, {4, 7, 32})},
             {Attribute::makeInt("axis", 1), Attribute::makeInts("sizes", {2, 7})}});
      check({"gather",
             prepareGather,
             {t(d, {3, 7, 64}, offset), t(DType::I64, {7})},
             {t(d, {3, 7, 64})},
             {Attribute::makeInt("axis", 1)},
             {{1, indices64}}});
      check({"gather",
             prepareGather,
             {t(d, {6, 9}), t(DType::I32, {5})},
             {t(d, {5, 9}, offset)},
             {Attribute::makeInt("axis", 0)},
             {{1, indices32}}});
      check({"trilu",
             prepareTrilu,
             {t(d, {3, 17, 23}, offset)},
             {t(d, {3, 17, 23})},
             {Attribute::makeInt("upper", 0), Attribute::makeInt("k", 2)}});
      check({"trilu",
             prepareTrilu,
             {t(d, {5, 31})},
             {t(d, {5, 31}, offset)},
             {Attribute::makeInt("upper", 1), Attribute::makeInt("k", -1)}});
    }
}

// Tests dropout, drawing or not, with and without its mask, on every float
// dtype (and a dtype change, generic), at an odd offset too.
TEST_F(CudaSpecialised, Dropout) {
  const std::vector<int64_t> shape = {3, 1031};
  const auto seed = bytesOf<int64_t>({42});
  for (DType d : kFloats)
    for (int64_t offset : {0, 1}) {
      check({"dropout",
             prepareDropout,
             {t(d, shape, offset), t(DType::I64, {}), t(DType::I64, {})},
             {t(d, shape), t(DType::I1, shape, offset)},
             {Attribute::makeFloat("ratio", 0.3), Attribute::makeInt("training", 1),
              Attribute::makeInt("stream", 5)},
             {{1, seed}, {2, bytesOf<int64_t>({7})}}});
      check({"dropout",
             prepareDropout,
             {t(d, shape), t(DType::I64, {}), t(DType::I64, {})},
             {t(d, shape, offset)},
             {Attribute::makeFloat("ratio", 0.5), Attribute::makeInt("training", 1)},
             {{1, seed}, {2, bytesOf<int64_t>({-1})}}});
      check({"dropout",
             prepareDropout,
             {t(d, shape, offset)},
             {t(d, shape), t(DType::I1, shape)},
             {}});
    }
  check({"dropout",
         prepareDropout,
         {t(DType::BF16, shape), t(DType::I64, {}), t(DType::I64, {})},
         {t(DType::F32, shape)},
         {Attribute::makeFloat("ratio", 0.3), Attribute::makeInt("training", 1)},
         {{1, seed}, {2, bytesOf<int64_t>({3})}}});
}

// Tests unscale, clip_by_norm, sgd_update and adamw_update for every float
// gradient dtype (the f32 master or bf16 param, rounded to nearest or
// stochastically), a taken and a skipped step.
TEST_F(CudaSpecialised, Optimizers) {
  const std::vector<int64_t> shape = {5, 203};
  const auto step = bytesOf<int64_t>({4});
  const auto lr = bytesOf<float>({1e-3f});
  const auto norm = bytesOf<float>({3.0f});
  for (DType g : kFloats) {
    check({"unscale",
           prepareUnscale,
           {t(g, shape), t(DType::F32, {})},
           {t(DType::F32, shape)},
           {},
           {{1, bytesOf<float>({1024.0f})}}});
    check({"clip_by_norm",
           prepareClipByNorm,
           {t(g, shape), t(DType::F32, {})},
           {t(DType::F32, shape)},
           {Attribute::makeFloat("max_norm", 1.0)},
           {{1, norm}}});
    for (uint8_t finite : {1, 0}) {
      const std::vector<uint8_t> flag = {finite};
      check({"sgd_update",
             prepareSgdUpdate,
             {t(DType::F32, shape), t(g, shape), t(DType::F32, {}), t(DType::I64, {}),
              t(DType::F32, {}), t(DType::I1, {})},
             {t(DType::F32, shape), t(DType::F32, shape)},
             {Attribute::makeFloat("momentum", 0.9), Attribute::makeFloat("weight_decay", 0.01)},
             {{3, step}, {4, lr}, {5, flag}}});
      check({"sgd_update",
             prepareSgdUpdate,
             {t(DType::F32, shape), t(g, shape), t(DType::I64, {}), t(DType::F32, {}),
              t(DType::I1, {})},
             {t(DType::F32, shape)},
             {},
             {{2, step}, {3, lr}, {4, flag}}});
      for (DType param : {DType::F32, DType::BF16}) {
        check({"adamw_update",
               prepareAdamWUpdate,
               {t(param, shape), t(g, shape), t(DType::F32, shape), t(DType::F32, shape),
                t(DType::I64, {}), t(DType::F32, {}), t(DType::I1, {})},
               {t(param, shape), t(DType::F32, shape), t(DType::F32, shape)},
               {},
               {{4, step}, {5, lr}, {6, flag}}});
      }
      check({"adamw_update",
             prepareAdamWUpdate,
             {t(DType::BF16, shape), t(g, shape), t(DType::F32, shape), t(DType::F32, shape),
              t(DType::I64, {}), t(DType::F32, {}), t(DType::I1, {}), t(DType::I64, {})},
             {t(DType::BF16, shape), t(DType::F32, shape), t(DType::F32, shape)},
             {Attribute::makeInt("stochastic_rounding", 1), Attribute::makeInt("stream", 3)},
             {{4, step}, {5, lr}, {6, flag}, {7, bytesOf<int64_t>({1234})}}});
    }
  }
}

} // namespace
} // namespace cuda
} // namespace rt
} // namespace mptrt
