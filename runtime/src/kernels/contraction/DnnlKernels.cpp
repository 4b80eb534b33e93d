//===- DnnlKernels.cpp - the CPU's fast numerics: oneDNN conv and matmul -===//
//
// The `fast` CPU numerics mode (docs/runtime.md, "CPU numerics modes"):
// conv, conv_grad_input, conv_grad_weight, matmul and gemm through oneDNN's
// primitives, created once at prepare. Everything else, and any of these
// that oneDNN cannot take as the plan states it (more than three spatial
// axes, fp8 tensors, a bf16 operand beside an f32 one, a broadcast C,
// general batch broadcasting), keeps the reference kernel.
//
// Numerics: the operands are used in their stored dtype (f32 or bf16, bf16
// products are exact in f32), the products are accumulated in f32 in an
// order oneDNN chooses, and the f32 sum is rounded once into the result's
// dtype: the reference's contract, without its fixed summation order. On a
// processor without AVX512-BF16 or AMX the primitives compute in f32 on
// exactly widened copies (computeType), which gives the same values; f16
// tensors are always widened so (f16 products are exact in f32 too).
//
// Layout: weights stay OIHW (row-major). A channels-first convolution's
// activation descriptors say `any`, and where oneDNN prefers a blocked
// layout the kernel reorders its inputs into the workspace, runs, and
// reorders its result back (as PyTorch's eager oneDNN path does). A
// channels-last one (`layout = nhwc`, prepareFastChannelsLast) states its
// activations as stored, NHWC, which oneDNN's direct kernels read and write
// without reorders. Matmuls use the plain layouts directly, a transpose
// being a pair of strides.
//
// Threads: oneDNN runs its primitives on OpenMP threads; before each run
// the kernel sets the calling thread's OpenMP team size to numThreads()
// (MPTRT_NUM_THREADS, as for the runtime's own pool), so one variable
// governs both. At a fixed thread count oneDNN's CPU kernels give the same
// bits on every run (FastNumerics.RunToRunBitIdentical, and
// FastNumericsParity.RunToRunBitIdentical for whole training steps).
//
// Run allocates nothing: the primitives, their memory objects (whose data
// pointers are set at each run) and the argument arrays are built at
// prepare, primitives run through the C API with those arrays, and the
// scratchpads and reorder buffers live in the model's workspace.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/ThreadPool.h"
#include "ops/Backward.h"

#include <oneapi/dnnl/dnnl.hpp>

#ifdef MPTRT_DNNL_OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;
using DnnlType = dnnl::memory::data_type;

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// oneDNN's type for f32, bf16 and f16; false for any other dtype.
bool dnnlType(DType dtype, DnnlType *out) {
  if (dtype == DType::F32)
    *out = DnnlType::f32;
  else if (dtype == DType::BF16)
    *out = DnnlType::bf16;
  else if (dtype == DType::F16)
    *out = DnnlType::f16;
  else
    return false;
  return true;
}

/// Whether the processor multiplies bf16 natively (AVX512-BF16 or AMX).
bool nativeBf16() {
  static const bool native = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return native;
}

/// The type a primitive computes a tensor stored as `stored` in. Without
/// native bf16, a bf16 tensor is widened into f32 (exactly) by its port's
/// reorder and a bf16 result rounded from f32 (to nearest even) by it:
/// bf16 products are exact in f32, so the values are those of a bf16
/// primitive, and oneDNN 2.6's emulated bf16 kernels are slower: a bf16
/// ResNet-18 step (bench/resnet_train) took 38 ms with them against 22 ms
/// this way on one AVX-512 thread, and 739 ms against 71 ms on two threads
/// of the busy 2-core machine.
/// f16 is always computed this way (widened exactly; the f32 result rounded
/// to nearest even by the reorder): oneDNN 2.6 has f16 convolutions and
/// matmuls only on AVX512-FP16 processors, and f16 products are exact in f32
/// too.
DnnlType computeType(DnnlType stored) {
  if (stored == DnnlType::f16)
    return DnnlType::f32;
  return stored == DnnlType::bf16 && !nativeBf16() ? DnnlType::f32 : stored;
}

/// Makes oneDNN's primitives created or run next on this thread use
/// numThreads() threads. oneDNN's OpenMP runtime sizes its work split (at
/// primitive creation) and its parallel regions (at each run) by the
/// calling thread's OpenMP setting (omp_get_max_threads), which is per
/// thread, so it is set on the thread that prepares and on the one that
/// runs, every time (a thread the embedding program starts later has
/// OMP_NUM_THREADS's default again).
void useRuntimeThreads() {
#ifdef MPTRT_DNNL_OPENMP
  static const bool omp = dnnl_version()->cpu_runtime == DNNL_RUNTIME_OMP;
  if (omp && omp_get_max_threads() != numThreads())
    omp_set_num_threads(numThreads());
#endif
}

/// Workspace offsets, 64-byte aligned, handed out in order at prepare.
class WorkspacePlan {
public:
  uint64_t take(uint64_t bytes) {
    used_ = (used_ + 63) / 64 * 64;
    const uint64_t at = used_;
    used_ += bytes;
    return at;
  }
  uint64_t bytes() const { return used_; }

private:
  uint64_t used_ = 0;
};

/// The row-major layout of `dims` (rank 0 as [1]).
dnnl::memory::desc plainDesc(Dims dims, DnnlType type) {
  if (dims.empty())
    dims.push_back(1);
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;)
    strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(dims, type, strides);
}

/// A plan tensor's layout (f32 or bf16, checked by the caller).
dnnl::memory::desc plainDesc(const TensorDesc &desc) {
  DnnlType type = DnnlType::f32;
  dnnlType(desc.dtype, &type);
  return plainDesc(Dims(desc.shape.begin(), desc.shape.end()), type);
}

/// A conv activation of channels-first dims [N, C, spatial...] as the plan
/// stores it: row-major, or channels last ([N, spatial..., C]).
dnnl::memory::desc activationDesc(const Dims &dims, DnnlType type, bool channelsLast) {
  if (!channelsLast)
    return plainDesc(dims, type);
  Dims strides(dims.size(), 1);
  int64_t stride = dims[1];
  for (size_t d = dims.size(); d-- > 2;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  strides[0] = stride;
  return dnnl::memory::desc(dims, type, strides);
}
dnnl::memory::desc activationDesc(const TensorDesc &desc, bool channelsLast) {
  DnnlType type = DnnlType::f32;
  dnnlType(desc.dtype, &type);
  return activationDesc(Dims(desc.shape.begin(), desc.shape.end()), type, channelsLast);
}

/// One plan tensor a primitive reads or writes. `user` is the tensor in its
/// plain layout (data pointer set at each run); `inner` is the layout the
/// primitive chose, in the workspace, when it differs, with the reorder
/// between the two (user to inner for an input, back for the result).
struct Port {
  bool isResult = false;
  size_t index = 0;
  /// Bytes from one image to the next when the kernel runs image by image
  /// (DnnlKernel::setPerImage); 0 otherwise.
  uint64_t imageBytes = 0;
  dnnl::memory user;
  dnnl::memory inner;
  bool reordered = false;
  uint64_t innerOffset = 0;
  dnnl::reorder reorder;
  dnnl_exec_arg_t reorderArgs[2] = {};
};

/// A prepared oneDNN primitive with its ports and scratchpad.
class DnnlKernel final : public PreparedKernel {
public:
  uint64_t workspaceBytes() const override { return workspace_.bytes(); }

  Status run(const KernelArgs &args) override {
    useRuntimeThreads();
    if (images_ == 0)
      return runOnce(args, 0);
    // Image by image: each image's f32 partial result added in double, the
    // total rounded once into the result (see setPerImage).
    uint8_t *ws = static_cast<uint8_t *>(args.workspace);
    double *acc = reinterpret_cast<double *>(ws + accOffset_);
    const float *partial = reinterpret_cast<const float *>(ws + partialOffset_);
    std::fill(acc, acc + resultNumel_, 0.0);
    for (int64_t n = 0; n < images_; ++n) {
      MPTRT_TRY(runOnce(args, n));
      parallelFor(resultNumel_, grainForCost(2), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          acc[i] += partial[i];
      });
    }
    const TensorArg &result = args.results[0];
    const DType type = result.desc->dtype;
    parallelFor(resultNumel_, grainForCost(2), [&](int64_t b, int64_t e) {
      storeF64(acc + b, e - b, type, elementPtr(result.data, type, b));
    });
    return Status::ok();
  }

  /// Makes the kernel run `images` times, image n's inputs at n times each
  /// input port's imageBytes, its one result (`numel` elements, a plain
  /// f32 partial in the workspace, which the result port must be bound to
  /// with resultToPartial) added into a double total: conv_grad_weight's
  /// sum over the batch, as the reference kernel makes it.
  void setPerImage(int64_t images, int64_t numel) {
    images_ = images;
    resultNumel_ = numel;
    partialOffset_ = workspace_.take(static_cast<uint64_t>(numel) * sizeof(float));
    accOffset_ = workspace_.take(static_cast<uint64_t>(numel) * sizeof(double));
  }

private:
  Status runOnce(const KernelArgs &args, int64_t image) {
    // Empty tensors never get here (prepareFast leaves them to the
    // reference kernels), so every data pointer is a real tensor's.
    uint8_t *ws = static_cast<uint8_t *>(args.workspace);
    for (Port &port : ports_) {
      if (port.isResult && images_ != 0) {
        port.user.set_data_handle(ws + partialOffset_);
      } else {
        const TensorArg &t = port.isResult ? args.results[port.index] : args.operands[port.index];
        port.user.set_data_handle(static_cast<uint8_t *>(t.data) + image * port.imageBytes);
      }
      if (port.reordered)
        port.inner.set_data_handle(ws + port.innerOffset);
    }
    if (hasScratchpad_)
      scratchpad_.set_data_handle(ws + scratchpadOffset_);
    for (Port &port : ports_)
      if (port.reordered && !port.isResult)
        MPTRT_TRY(execute(port.reorder, port.reorderArgs, 2));
    MPTRT_TRY(execute(primitive_, args_.data(), static_cast<int>(args_.size())));
    for (Port &port : ports_)
      if (port.reordered && port.isResult)
        MPTRT_TRY(execute(port.reorder, port.reorderArgs, 2));
    if (dnnl_stream_wait(stream_.get()) != dnnl_success)
      return Status::error("oneDNN: waiting for the stream failed");
    return Status::ok();
  }

public:
  /// Adds a port for a plan tensor stored as `user` (its plain layout)
  /// whose layout in the primitive is `inner`, bound to argument `arg`.
  void addPort(bool isResult, size_t index, const dnnl::memory::desc &user,
               const dnnl::memory::desc &inner, int arg, uint64_t imageBytes = 0) {
    Port port;
    port.isResult = isResult;
    port.index = index;
    port.imageBytes = imageBytes;
    port.user = dnnl::memory(user, cpuEngine(), DNNL_MEMORY_NONE);
    if (inner == user) {
      port.inner = port.user;
    } else {
      port.reordered = true;
      port.inner = dnnl::memory(inner, cpuEngine(), DNNL_MEMORY_NONE);
      port.innerOffset = workspace_.take(inner.get_size());
      const dnnl::memory &from = isResult ? port.inner : port.user;
      const dnnl::memory &to = isResult ? port.user : port.inner;
      port.reorder = dnnl::reorder(from, to);
      port.reorderArgs[0] = {DNNL_ARG_FROM, from.get()};
      port.reorderArgs[1] = {DNNL_ARG_TO, to.get()};
    }
    args_.push_back({arg, port.inner.get()});
    ports_.push_back(std::move(port));
  }

  /// Sets the primitive and its scratchpad (of `pd`, user mode).
  void setPrimitive(dnnl::primitive primitive, const dnnl::primitive_desc_base &pd) {
    primitive_ = std::move(primitive);
    const dnnl::memory::desc scratch = pd.scratchpad_desc();
    if (scratch.get_size() != 0) {
      hasScratchpad_ = true;
      scratchpadOffset_ = workspace_.take(scratch.get_size());
      scratchpad_ = dnnl::memory(scratch, cpuEngine(), DNNL_MEMORY_NONE);
      args_.push_back({DNNL_ARG_SCRATCHPAD, scratchpad_.get()});
    }
    stream_ = dnnl::stream(cpuEngine());
  }

private:
  Status execute(const dnnl::primitive &p, const dnnl_exec_arg_t *args, int count) {
    if (dnnl_primitive_execute(p.get(), stream_.get(), count, args) != dnnl_success)
      return Status::error("oneDNN: running a primitive failed");
    return Status::ok();
  }

  WorkspacePlan workspace_;
  int64_t images_ = 0, resultNumel_ = 0;
  uint64_t partialOffset_ = 0, accOffset_ = 0;
  std::vector<Port> ports_;
  std::vector<dnnl_exec_arg_t> args_;
  dnnl::primitive primitive_;
  dnnl::memory scratchpad_;
  bool hasScratchpad_ = false;
  uint64_t scratchpadOffset_ = 0;
  dnnl::stream stream_;
};

//===----------------------------------------------------------------------===//
// Convolutions.
//===----------------------------------------------------------------------===//

/// A convolution's shapes as oneDNN states them. oneDNN's dilation is ours
/// minus one, and its right padding is the plan's (with which its output
/// size formula gives ours).
struct ConvShape {
  Dims src, weights, dst, strides, dilations, padsBegin, padsEnd;
};

bool convShape(const KernelView &v, const ConvParams &p, ConvShape *s) {
  const int nsp = p.spatialRank;
  if (nsp < 1 || nsp > 3)
    return false;
  std::vector<int64_t> pads;
  if (!v.getInts("pads", std::vector<int64_t>(2 * nsp, 0), &pads))
    return false;
  s->src = {p.N, p.C};
  s->dst = {p.N, p.M};
  if (p.group > 1)
    s->weights = {p.group, p.M / p.group, p.C / p.group};
  else
    s->weights = {p.M, p.C};
  for (int d = 0; d < nsp; ++d) {
    s->src.push_back(p.in[d]);
    s->dst.push_back(p.out[d]);
    s->weights.push_back(p.kernel[d]);
    s->strides.push_back(p.strides[d]);
    s->dilations.push_back(p.dilations[d] - 1);
    s->padsBegin.push_back(pads[d]);
    s->padsEnd.push_back(pads[nsp + d]);
  }
  return true;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// The forward primitive descriptor of a convolution of these types
/// (activations in layout `act`), for conv itself and as the hint of its
/// gradients; with `relu`, conv's fused relu as oneDNN's post-op (on the
/// f32 sum, before its rounding: a -0 of the unfused relu may come out +0).
dnnl::convolution_forward::primitive_desc forwardDesc(const ConvShape &s, DnnlType x, DnnlType w,
                                                      DnnlType y, const DnnlType *bias, Tag act,
                                                      bool relu = false) {
  const dnnl::memory::desc src(s.src, x, act), weights(s.weights, w, Tag::any), dst(s.dst, y, act);
  dnnl::primitive_attr attr = userScratchpad();
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  if (bias) {
    const dnnl::memory::desc b({s.dst[1]}, *bias, Tag::a);
    return {{dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, weights,
             b, dst, s.strides, s.dilations, s.padsBegin, s.padsEnd},
            attr,
            cpuEngine()};
  }
  return {{dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, weights,
           dst, s.strides, s.dilations, s.padsBegin, s.padsEnd},
          attr,
          cpuEngine()};
}

/// The layout a primitive takes its activations in: oneDNN's choice for
/// channels-first tensors (a blocked one, reordered into and out of), the
/// stored layout itself for channels-last ones, which oneDNN's direct
/// kernels read as they are.
Tag activationTag(size_t rank, bool channelsLast) {
  if (!channelsLast)
    return Tag::any;
  return rank == 3 ? Tag::nwc : rank == 4 ? Tag::nhwc : Tag::ndhwc;
}

Status prepareDnnlConv(const KernelView &v, bool channelsLast,
                       std::unique_ptr<PreparedKernel> *out) {
  ConvParams p;
  MPTRT_TRY(decodeConv(v, &p));
  ConvShape s;
  DnnlType x = DnnlType::f32, w = x, y = x, b = x;
  if (!convShape(v, p, &s) || !dnnlType(v.operand(0).dtype, &x) ||
      !dnnlType(v.operand(1).dtype, &w) || !dnnlType(v.result(0).dtype, &y) ||
      (p.hasBias && !dnnlType(v.operand(2).dtype, &b)))
    return Status::ok();
  auto k = std::make_unique<DnnlKernel>();
  try {
    const DnnlType bc = computeType(b);
    auto pd =
        forwardDesc(s, computeType(x), computeType(w), computeType(y), p.hasBias ? &bc : nullptr,
                    activationTag(s.src.size(), channelsLast), p.relu);
    // The plan's weight [M, C/G, k...] has the bytes of oneDNN's grouped
    // [G, M/G, C/G, k...].
    k->addPort(false, 0, activationDesc(v.operand(0), channelsLast), pd.src_desc(), DNNL_ARG_SRC);
    k->addPort(false, 1, plainDesc(s.weights, w), pd.weights_desc(), DNNL_ARG_WEIGHTS);
    if (p.hasBias)
      k->addPort(false, 2, plainDesc(v.operand(2)), pd.bias_desc(), DNNL_ARG_BIAS);
    k->addPort(true, 0, activationDesc(v.result(0), channelsLast), pd.dst_desc(), DNNL_ARG_DST);
    k->setPrimitive(dnnl::convolution_forward(pd), pd);
  } catch (const dnnl::error &) {
    return Status::ok(); // not a convolution oneDNN takes: the reference runs it
  }
  *out = std::move(k);
  return Status::ok();
}

/// conv_grad_weight image by image: a weight-gradient primitive for one
/// image, run for each, its f32 result added into a double total that is
/// rounded once into dw, as the reference kernel sums the batch. oneDNN
/// over the whole batch sums every position of every image in f32, in its
/// own order: on a batch of 32 16 x 16 images that was 17x / 11x pairwise
/// fp32's max / L2 error (mptrt-backward-accuracy-test's conv cases; image
/// by image 3.0x / 2.7x, within the GEMM bound the reference is held to,
/// and on 128 4 x 4 images 0.9x / 0.7x; FastNumerics.ConvGradWeightLong-
/// SumsWithinTwiceReferenceError checks it); the images are the long part of
/// the sum on a CNN's late stages. Only for f32 operands: it costs time
/// (on one thread of the development machine the parity fixtures' fp32
/// ResNet-18 step took 1.5 ms against 1.2 ms, MobileNetV2 14.5 against
/// 13.8 ms; with bf16 operands 3.7 against 1.9 ms), and bf16 inputs'
/// rounding is far larger than f32 accumulation's. False (k untouched)
/// when oneDNN has no such primitive.
bool prepareGradWeightPerImage(const ConvParams &p, const ConvShape &s, const TensorDesc &xDesc,
                               const TensorDesc &dyDesc, DnnlType x, DnnlType dy, bool channelsLast,
                               DnnlKernel *k) {
  ConvShape one = s;
  one.src[0] = one.dst[0] = 1;
  // oneDNN 2.6's weight gradient of a strided 1x1 convolution on one
  // channels-last image gives wrong values (FastNumerics.ChannelsLastConv-
  // WithinTwiceReferenceError's downsample case: a relative error of 0.57):
  // those take oneDNN's own layout, the image reordered into it.
  const size_t nsp = s.strides.size();
  bool strided1x1 = false;
  for (size_t d = 0; d < nsp; ++d)
    strided1x1 = strided1x1 || s.strides[d] > 1;
  for (size_t d = 0; d < nsp; ++d)
    strided1x1 = strided1x1 && s.weights[s.weights.size() - nsp + d] == 1;
  const Tag act = activationTag(s.src.size(), channelsLast && !strided1x1);
  try {
    const DnnlType xc = computeType(x), dyc = computeType(dy);
    auto hint = forwardDesc(one, xc, xc, dyc, nullptr, act);
    const dnnl::memory::desc src(one.src, xc, act), weights(one.weights, DnnlType::f32, Tag::any),
        dst(one.dst, dyc, act);
    dnnl::convolution_backward_weights::primitive_desc pd({dnnl::algorithm::convolution_direct, src,
                                                           weights, dst, one.strides, one.dilations,
                                                           one.padsBegin, one.padsEnd},
                                                          userScratchpad(), cpuEngine(), hint);
    Dims xImage(xDesc.shape.begin(), xDesc.shape.end()),
        dyImage(dyDesc.shape.begin(), dyDesc.shape.end());
    xImage[0] = dyImage[0] = 1;
    const uint64_t xBytes = xDesc.bytes / static_cast<uint64_t>(p.N);
    const uint64_t dyBytes = dyDesc.bytes / static_cast<uint64_t>(p.N);
    int64_t numel = 1;
    for (int64_t d : s.weights)
      numel *= d;
    DnnlKernel trial;
    trial.addPort(false, 0, activationDesc(xImage, x, channelsLast), pd.src_desc(), DNNL_ARG_SRC,
                  xBytes);
    trial.addPort(false, 1, activationDesc(dyImage, dy, channelsLast), pd.diff_dst_desc(),
                  DNNL_ARG_DIFF_DST, dyBytes);
    trial.addPort(true, 0, plainDesc(s.weights, DnnlType::f32), pd.diff_weights_desc(),
                  DNNL_ARG_DIFF_WEIGHTS);
    trial.setPrimitive(dnnl::convolution_backward_weights(pd), pd);
    trial.setPerImage(p.N, numel);
    *k = std::move(trial);
  } catch (const dnnl::error &) {
    return false;
  }
  return true;
}

Status prepareDnnlConvGrad(const KernelView &v, bool channelsLast,
                           std::unique_ptr<PreparedKernel> *out) {
  ConvParams p;
  MPTRT_TRY(decodeConvGrad(v, &p));
  ConvShape s;
  const bool gradInput = v.kind() == "conv_grad_input";
  // conv_grad_input: dy, weight -> dx; conv_grad_weight: x, dy -> dweight.
  const TensorDesc &xDesc = gradInput ? v.result(0) : v.operand(0);
  const TensorDesc &wDesc = gradInput ? v.operand(1) : v.result(0);
  const TensorDesc &dyDesc = gradInput ? v.operand(0) : v.operand(1);
  DnnlType x = DnnlType::f32, w = x, dy = x;
  if (!convShape(v, p, &s) || !dnnlType(xDesc.dtype, &x) || !dnnlType(wDesc.dtype, &w) ||
      !dnnlType(dyDesc.dtype, &dy))
    return Status::ok();
  auto k = std::make_unique<DnnlKernel>();
  try {
    // The forward hint with the gradients' types: x's type for the source,
    // dy's for the destination.
    const DnnlType xc = computeType(x), wc = computeType(w), dyc = computeType(dy);
    const Tag act = activationTag(s.src.size(), channelsLast);
    auto hint = forwardDesc(s, xc, wc, dyc, nullptr, act);
    const dnnl::memory::desc src(s.src, xc, act), weights(s.weights, wc, Tag::any),
        dst(s.dst, dyc, act);
    if (gradInput) {
      dnnl::convolution_backward_data::primitive_desc pd({dnnl::algorithm::convolution_direct, src,
                                                          weights, dst, s.strides, s.dilations,
                                                          s.padsBegin, s.padsEnd},
                                                         userScratchpad(), cpuEngine(), hint);
      k->addPort(false, 0, activationDesc(dyDesc, channelsLast), pd.diff_dst_desc(),
                 DNNL_ARG_DIFF_DST);
      k->addPort(false, 1, plainDesc(s.weights, w), pd.weights_desc(), DNNL_ARG_WEIGHTS);
      k->addPort(true, 0, activationDesc(xDesc, channelsLast), pd.diff_src_desc(),
                 DNNL_ARG_DIFF_SRC);
      k->setPrimitive(dnnl::convolution_backward_data(pd), pd);
    } else if (p.N > 1 && x == DnnlType::f32 && dy == DnnlType::f32 &&
               prepareGradWeightPerImage(p, s, xDesc, dyDesc, x, dy, channelsLast, k.get())) {
      // f32: image by image, the images' partial sums added in double
    } else {
      dnnl::convolution_backward_weights::primitive_desc pd({dnnl::algorithm::convolution_direct,
                                                             src, weights, dst, s.strides,
                                                             s.dilations, s.padsBegin, s.padsEnd},
                                                            userScratchpad(), cpuEngine(), hint);
      k->addPort(false, 0, activationDesc(xDesc, channelsLast), pd.src_desc(), DNNL_ARG_SRC);
      k->addPort(false, 1, activationDesc(dyDesc, channelsLast), pd.diff_dst_desc(),
                 DNNL_ARG_DIFF_DST);
      k->addPort(true, 0, plainDesc(s.weights, w), pd.diff_weights_desc(), DNNL_ARG_DIFF_WEIGHTS);
      k->setPrimitive(dnnl::convolution_backward_weights(pd), pd);
    }
  } catch (const dnnl::error &) {
    return Status::ok();
  }
  *out = std::move(k);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// matmul and gemm.
//===----------------------------------------------------------------------===//

/// A [rows, cols] matrix stored row-major, or transposed.
dnnl::memory::desc matrixDesc(int64_t batch, int64_t rows, int64_t cols, bool transposed,
                              DnnlType type) {
  const int64_t batchStride = rows * cols;
  return dnnl::memory::desc({batch, rows, cols}, type,
                            transposed ? Dims{batchStride, 1, rows} : Dims{batchStride, cols, 1});
}

/// Whether batch n of an operand starts at n * size (1) or at 0 for every n
/// (0, broadcast); -1 for any other pattern.
int64_t batchPattern(const std::vector<int64_t> &offsets, int64_t size) {
  bool full = true, broadcast = true;
  for (size_t n = 0; n < offsets.size(); ++n) {
    full = full && offsets[n] == static_cast<int64_t>(n) * size;
    broadcast = broadcast && offsets[n] == 0;
  }
  return full ? 1 : broadcast ? 0 : -1;
}

Status prepareDnnlMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  MatMulParams p;
  MPTRT_TRY(decodeMatMul(v, &p));
  DnnlType a = DnnlType::f32, b = a, y = a;
  if (!dnnlType(v.operand(0).dtype, &a) || !dnnlType(v.operand(1).dtype, &b) ||
      !dnnlType(v.result(0).dtype, &y))
    return Status::ok();
  const int64_t aFull = batchPattern(p.aOffset, p.M * p.K);
  const int64_t bFull = batchPattern(p.bOffset, p.K * p.N);
  if (aFull < 0 || bFull < 0)
    return Status::ok();
  auto k = std::make_unique<DnnlKernel>();
  try {
    const int64_t aBatch = aFull ? p.batch : 1, bBatch = bFull ? p.batch : 1;
    const dnnl::memory::desc src = matrixDesc(aBatch, p.M, p.K, false, a);
    const dnnl::memory::desc weights = matrixDesc(bBatch, p.K, p.N, false, b);
    const dnnl::memory::desc dst = matrixDesc(p.batch, p.M, p.N, false, y);
    dnnl::matmul::primitive_desc pd({matrixDesc(aBatch, p.M, p.K, false, computeType(a)),
                                     matrixDesc(bBatch, p.K, p.N, false, computeType(b)),
                                     matrixDesc(p.batch, p.M, p.N, false, computeType(y))},
                                    userScratchpad(), cpuEngine());
    k->addPort(false, 0, src, pd.src_desc(), DNNL_ARG_SRC);
    k->addPort(false, 1, weights, pd.weights_desc(), DNNL_ARG_WEIGHTS);
    k->addPort(true, 0, dst, pd.dst_desc(), DNNL_ARG_DST);
    k->setPrimitive(dnnl::matmul(pd), pd);
  } catch (const dnnl::error &) {
    return Status::ok();
  }
  *out = std::move(k);
  return Status::ok();
}

/// gemm: alpha op(A) op(B), then C as oneDNN's bias (beta 1, and no alpha
/// with it, since oneDNN scales before the bias is added, the plan after),
/// then the activation as a post-op.
Status prepareDnnlGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  GemmParams p;
  MPTRT_TRY(decodeGemm(v, &p));
  DnnlType a = DnnlType::f32, b = a, y = a, c = a;
  if (!dnnlType(v.operand(0).dtype, &a) || !dnnlType(v.operand(1).dtype, &b) ||
      !dnnlType(v.result(0).dtype, &y) || (p.hasC && !dnnlType(v.operand(2).dtype, &c)))
    return Status::ok();
  const bool bias = p.hasC && p.beta != 0.0f;
  if (bias && (p.beta != 1.0f || p.alpha != 1.0f))
    return Status::ok();
  auto k = std::make_unique<DnnlKernel>();
  try {
    dnnl::primitive_attr attr = userScratchpad();
    if (p.alpha != 1.0f)
      attr.set_output_scales(0, {p.alpha});
    dnnl::post_ops ops;
    if (p.activation == Activation::Relu)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    else if (p.activation == Activation::Gelu)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    else if (p.activation == Activation::GeluTanh)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    attr.set_post_ops(ops);
    const dnnl::memory::desc src = matrixDesc(1, p.M, p.K, p.transA, a);
    const dnnl::memory::desc weights = matrixDesc(1, p.K, p.N, p.transB, b);
    const dnnl::memory::desc dst = matrixDesc(1, p.M, p.N, false, y);
    const dnnl::memory::desc srcC = matrixDesc(1, p.M, p.K, p.transA, computeType(a));
    const dnnl::memory::desc weightsC = matrixDesc(1, p.K, p.N, p.transB, computeType(b));
    const dnnl::memory::desc dstC = matrixDesc(1, p.M, p.N, false, computeType(y));
    if (bias) {
      // C broadcast to [M, N]: its own extent on each axis it has.
      const int64_t cm = p.cRowStride ? p.M : 1, cn = p.cColStride ? p.N : 1;
      const dnnl::memory::desc cDesc = plainDesc(Dims{1, cm, cn}, c);
      dnnl::matmul::primitive_desc pd(
          {srcC, weightsC, plainDesc(Dims{1, cm, cn}, computeType(c)), dstC}, attr, cpuEngine());
      k->addPort(false, 0, src, pd.src_desc(), DNNL_ARG_SRC);
      k->addPort(false, 1, weights, pd.weights_desc(), DNNL_ARG_WEIGHTS);
      k->addPort(false, 2, cDesc, pd.bias_desc(), DNNL_ARG_BIAS);
      k->addPort(true, 0, dst, pd.dst_desc(), DNNL_ARG_DST);
      k->setPrimitive(dnnl::matmul(pd), pd);
    } else {
      dnnl::matmul::primitive_desc pd({srcC, weightsC, dstC}, attr, cpuEngine());
      k->addPort(false, 0, src, pd.src_desc(), DNNL_ARG_SRC);
      k->addPort(false, 1, weights, pd.weights_desc(), DNNL_ARG_WEIGHTS);
      k->addPort(true, 0, dst, pd.dst_desc(), DNNL_ARG_DST);
      k->setPrimitive(dnnl::matmul(pd), pd);
    }
  } catch (const dnnl::error &) {
    return Status::ok();
  }
  *out = std::move(k);
  return Status::ok();
}

bool anyEmpty(const KernelView &v) {
  for (size_t i = 0; i < v.numOperands(); ++i)
    if (v.operand(i).numel == 0)
      return true;
  for (size_t i = 0; i < v.numResults(); ++i)
    if (v.result(i).numel == 0)
      return true;
  return false;
}

} // namespace

Status prepareFast(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  out->reset();
  // oneDNN fixes a primitive's split of the work among threads when it
  // creates it, from the thread count then: the same count as the runs.
  useRuntimeThreads();
  // Empty tensors are the reference kernels' (a zero result, no work).
  if (anyEmpty(v))
    return Status::ok();
  const std::string &kind = v.kind();
  if (kind == "conv")
    return prepareDnnlConv(v, false, out);
  if (kind == "conv_grad_input" || kind == "conv_grad_weight")
    return prepareDnnlConvGrad(v, false, out);
  if (kind == "matmul")
    return prepareDnnlMatMul(v, out);
  if (kind == "gemm")
    return prepareDnnlGemm(v, out);
  return Status::ok();
}

Status prepareFastChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out) {
  out->reset();
  useRuntimeThreads();
  if (anyEmpty(first))
    return Status::ok();
  if (first.kind() == "conv")
    return prepareDnnlConv(first, true, out);
  if (first.kind() == "conv_grad_input" || first.kind() == "conv_grad_weight")
    return prepareDnnlConvGrad(first, true, out);
  return Status::ok();
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
