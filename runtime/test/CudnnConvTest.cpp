//===- CudnnConvTest.cpp - the CUDA convolutions through cuDNN ------------===//
//
// conv, conv_grad_input and conv_grad_weight through cuDNN (CudnnConv.cpp)
// against float64, held to twice the larger of the CPU reference's error
// on the same inputs and the expected error of an f32 sum of that length
// (sqrt(L) units of f32 rounding: cuDNN adds in f32, in its own order,
// where the CPU's weight gradient adds the images in double); run to run
// bit for bit (deterministic engines only). MPTRT_CUDA_CONV=cudnn makes the
// load fail where cuDNN does not take a kernel, so a fallback to the direct
// kernels cannot pass for cuDNN. Needs a GPU: skipped, saying why, without
// one.
//
// Everywhere (no GPU needed): the library opens from where the build found
// it, and MPTRT_CUDA_CONV's values.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "cuda/Cudnn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

// Tests MPTRT_CUDA_CONV's values, and that another one is an error naming
// the variable.
TEST(CudnnConv, PathVariable) {
  using rt::cuda::ConvPath;
  const std::pair<const char *, ConvPath> good[] = {{nullptr, ConvPath::Auto},
                                                    {"", ConvPath::Auto},
                                                    {"auto", ConvPath::Auto},
                                                    {"cudnn", ConvPath::Cudnn},
                                                    {"direct", ConvPath::Direct}};
  for (const auto &g : good) {
    ScopedVariable v("MPTRT_CUDA_CONV", g.first);
    ConvPath path = ConvPath::Direct;
    ASSERT_TRUE(rt::cuda::convPathFromEnvironment(&path)) << (g.first ? g.first : "unset");
    EXPECT_EQ(path, g.second) << (g.first ? g.first : "unset");
  }
  ScopedVariable v("MPTRT_CUDA_CONV", "fast");
  ConvPath path;
  const rt::Status s = rt::cuda::convPathFromEnvironment(&path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("MPTRT_CUDA_CONV"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\"fast\""), std::string::npos) << s.message();
}

// Tests that libcudnn.so.9 opens, with every entry point the convolutions
// use, where the build found cuDNN (no GPU needed: nothing is created).
TEST(CudnnConv, LibraryOpensWhereTheBuildFoundIt) {
#ifndef MPTRT_HAVE_CUDNN
  GTEST_SKIP() << "this build has no cuDNN: " << rt::cuda::convDescription();
#else
  struct stat st;
  const std::string lib = std::string(MPTRT_CUDNN_LIBRARY_DIR) + "/libcudnn.so.9";
  if (stat(lib.c_str(), &st) != 0)
    GTEST_SKIP() << "the build found cudnn.h but " << lib << " is absent";
  std::string why;
  const rt::cuda::CudnnApi *api = rt::cuda::cudnnApi(&why);
  ASSERT_NE(api, nullptr) << why;
  EXPECT_GE(api->getVersion(), 90000u);
  EXPECT_LT(api->getVersion(), 100000u);
  const std::string description = rt::cuda::convDescription();
  EXPECT_EQ(description.rfind("cuDNN 9.", 0), 0u) << description;
  EXPECT_NE(description.find("convolutions"), std::string::npos) << description;
#endif
}

/// One convolution: x [N, C, in...], w [M, C/group, k...].
struct ConvCase {
  const char *name;
  std::vector<int64_t> x, w, strides, pads, dilations; // pads: begins, then ends
  int64_t group;
  bool bias;
};

std::vector<int64_t> outShape(const ConvCase &c) {
  return convOutputShape(c.x, c.w, c.strides, c.pads, c.dilations);
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// conv's output (with bias) and the gradients for an upstream dy, in
/// float64: one pass over every (output, input channel, kernel position).
struct ConvRef {
  std::vector<double> y, dx, dw;
};

ConvRef convRef(const ConvCase &c, const HostTensor &x, const HostTensor &w, const HostTensor *b,
                const HostTensor &dy) {
  const size_t nsp = c.x.size() - 2;
  const std::vector<int64_t> out = outShape(c);
  const std::vector<int64_t> kShape(c.w.begin() + 2, c.w.end());
  const int64_t Cg = c.x[1] / c.group, Mg = c.w[0] / c.group, kSize = numel(kShape);
  const std::vector<int64_t> xs = stridesOf(c.x), ws = stridesOf(c.w);
  ConvRef r;
  r.y.assign(numel(out), 0.0);
  r.dx.assign(numel(c.x), 0.0);
  r.dw.assign(numel(c.w), 0.0);
  for (int64_t i = 0; i < numel(out); ++i) {
    const std::vector<int64_t> o = unflatten(i, out);
    const int64_t n = o[0], m = o[1], g = m / Mg;
    if (b)
      r.y[i] = b->get(m);
    for (int64_t cg = 0; cg < Cg; ++cg)
      for (int64_t kf = 0; kf < kSize; ++kf) {
        const std::vector<int64_t> k = unflatten(kf, kShape);
        int64_t xi = n * xs[0] + (g * Cg + cg) * xs[1], wi = m * ws[0] + cg * ws[1];
        bool inside = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t pos = o[2 + d] * c.strides[d] - c.pads[d] + k[d] * c.dilations[d];
          inside = inside && pos >= 0 && pos < c.x[2 + d];
          xi += pos * xs[2 + d];
          wi += k[d] * ws[2 + d];
        }
        if (!inside)
          continue;
        r.y[i] += x.get(xi) * w.get(wi);
        r.dx[xi] += dy.get(i) * w.get(wi);
        r.dw[wi] += x.get(xi) * dy.get(i);
      }
  }
  return r;
}

double relativeError(const HostTensor &got, const std::vector<double> &ref) {
  return relativeL2Error(got, ref);
}

/// The dtypes of one run: operands, bias, and each kind's result.
struct DTypes {
  DType data, bias, dw;
};

const ConvCase kCases[] = {
    {"3x3", {4, 16, 12, 12}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false},
    {"7x7 stem", {2, 3, 20, 20}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true},
    {"depthwise", {3, 32, 9, 9}, {32, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 32, false},
    {"pointwise", {2, 24, 8, 8}, {48, 24, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
    {"grouped", {2, 12, 10, 11}, {18, 4, 3, 2}, {1, 2}, {2, 1, 1, 0}, {2, 1}, 3, false},
    {"1-D", {2, 8, 30}, {16, 8, 5}, {2}, {2, 2}, {1}, 1, true},
    {"3-D", {2, 4, 6, 7, 5}, {8, 4, 3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, 1, false},
    {"long weight sum", {32, 16, 16, 16}, {16, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false},
};

// Tests conv, conv_grad_input and conv_grad_weight through cuDNN against
// float64 (bounds above) and run to run, over strides, asymmetric padding,
// dilation, groups (depthwise), bias, 1-D to 3-D, in f32, bf16 (an f32 bias
// and weight gradient, as the compiler's bf16 plans have them) and f16;
// each kernel also channels last (`layout = nhwc`: cuDNN reads and writes
// the activations with NHWC strides; MPTRT_CUDA_CONV=cudnn makes a
// refusal fail the load rather than fall back to transposes).
TEST(CudnnConv, WithinTwiceReferenceErrorAndDeterministic) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
#ifndef MPTRT_HAVE_CUDNN
  GTEST_SKIP() << "this build has no cuDNN: " << rt::cuda::convDescription();
#endif
  ScopedVariable path("MPTRT_CUDA_CONV", "cudnn");
  const DTypes configs[] = {{DType::F32, DType::F32, DType::F32},
                            {DType::BF16, DType::F32, DType::F32},
                            {DType::F16, DType::F16, DType::F16}};
  std::mt19937 rng(2731);
  for (const ConvCase &c : kCases)
    for (const DTypes &t : configs) {
      const std::vector<int64_t> yShape = outShape(c);
      const HostTensor x = randomTensor(t.data, c.x, rng, -1, 1, 0);
      const HostTensor w = randomTensor(t.data, c.w, rng, -1, 1, 0);
      const HostTensor b = randomTensor(t.bias, {c.w[0]}, rng, -1, 1, 0);
      const HostTensor dy = randomTensor(t.data, yShape, rng, -1, 1, 0);
      const ConvRef ref = convRef(c, x, w, c.bias ? &b : nullptr, dy);
      const std::vector<Attribute> attrs = {
          Attribute::makeInts("strides", c.strides), Attribute::makeInts("pads", c.pads),
          Attribute::makeInts("dilations", c.dilations), Attribute::makeInt("group", c.group)};
      const int64_t kSize = numel(std::vector<int64_t>(c.w.begin() + 2, c.w.end()));
      const int64_t outPositions = numel(std::vector<int64_t>(yShape.begin() + 2, yShape.end()));
      struct Run {
        const char *kind;
        std::vector<HostTensor> operands;
        HostTensor result;
        const std::vector<double> *ref;
        int64_t sumLength;
      };
      std::vector<HostTensor> convOperands = {x, w};
      if (c.bias)
        convOperands.push_back(b);
      const Run runs[] = {
          {"conv", convOperands, HostTensor(t.data, yShape), &ref.y, c.w[1] * kSize},
          {"conv_grad_input", {dy, w}, HostTensor(t.data, c.x), &ref.dx, c.w[0] / c.group * kSize},
          {"conv_grad_weight", {x, dy}, HostTensor(t.dw, c.w), &ref.dw, c.x[0] * outPositions},
      };
      for (const Run &r : runs)
        for (const bool last : {false, true}) {
          const std::string label = std::string(c.name) + " " + r.kind + " (" +
                                    plan::dtypeName(t.data) + " -> " +
                                    plan::dtypeName(r.result.dtype) + (last ? ", nhwc)" : ")");
          // Channels last: the activations (every operand but w and the
          // bias, the result but dw) stored [N, spatial..., C].
          std::vector<HostTensor> operands = r.operands;
          HostTensor result = r.result;
          std::vector<Attribute> kernelAttrs = attrs;
          std::vector<double> ref = *r.ref;
          const bool weightGrad = std::string(r.kind) == "conv_grad_weight";
          if (last) {
            operands[0] = permuteChannels(operands[0], true);
            if (weightGrad) {
              operands[1] = permuteChannels(operands[1], true);
            } else {
              result = HostTensor(result.dtype, channelsLastShape(result.shape));
              ref = channelsLastValues(ref, r.result.shape);
            }
            kernelAttrs.push_back(Attribute::makeString("layout", "nhwc"));
          }
          KernelRun cpu = runKernel(r.kind, r.operands, {r.result}, attrs, "cpu");
          KernelRun gpu = runKernel(r.kind, operands, {result}, kernelAttrs, "cuda");
          KernelRun again = runKernel(r.kind, operands, {result}, kernelAttrs, "cuda");
          ASSERT_TRUE(cpu.ok) << label << ": " << cpu.error;
          ASSERT_TRUE(gpu.ok) << label << ": " << gpu.error;
          ASSERT_TRUE(again.ok) << label << ": " << again.error;
          const double cpuErr = relativeError(cpu.outputs[0], *r.ref);
          const double gpuErr = relativeError(gpu.outputs[0], ref);
          const double f32Sum = std::sqrt(static_cast<double>(r.sumLength)) * 0x1p-24;
          EXPECT_LE(gpuErr, 2 * std::max(cpuErr, f32Sum))
              << label << ": cuDNN " << gpuErr << ", CPU reference " << cpuErr;
          EXPECT_TRUE(gpu.outputs[0].bytes == again.outputs[0].bytes)
              << label << ": two runs differ in their bits";
          std::printf("%-50s cuDNN %.3g, CPU reference %.3g\n", label.c_str(), gpuErr, cpuErr);
        }
    }
}

// Tests that MPTRT_CUDA_CONV=cudnn fails the load of a kernel cuDNN cannot
// take (four spatial axes; cuDNN takes one to three), naming the variable,
// and that by default the direct kernel runs it, matching the CPU.
TEST(CudnnConv, RefusedKernelFailsOnlyWhenCudnnIsRequired) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  std::mt19937 rng(5);
  const HostTensor x = randomTensor(DType::F32, {1, 2, 3, 3, 3, 3}, rng, -1, 1, 0);
  const HostTensor w = randomTensor(DType::F32, {2, 2, 2, 1, 2, 1}, rng, -1, 1, 0);
  const HostTensor y(DType::F32, {1, 2, 2, 3, 2, 3});
  {
    ScopedVariable path("MPTRT_CUDA_CONV", "cudnn");
    KernelRun r = runKernel("conv", {x, w}, {y}, {}, "cuda");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("MPTRT_CUDA_CONV=cudnn"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("spatial axes"), std::string::npos) << r.error;
  }
  ScopedVariable path("MPTRT_CUDA_CONV", nullptr);
  KernelRun cpu = runKernel("conv", {x, w}, {y}, {}, "cpu");
  KernelRun gpu = runKernel("conv", {x, w}, {y}, {}, "cuda");
  ASSERT_TRUE(cpu.ok) << cpu.error;
  ASSERT_TRUE(gpu.ok) << gpu.error;
  EXPECT_LE(relativeError(gpu.outputs[0], std::vector<double>(cpu.outputs[0].values())), 1e-6);
}

} // namespace
