//===- CudnnConv.cpp - conv and its gradients through cuDNN ---------------===//
//
// conv, conv_grad_input and conv_grad_weight as one cuDNN graph each (the
// backend API: a convolution operation of three tensors X, W, Y), built and
// planned at prepare, executed by run() on the backend's stream. Prepare:
//
//   1. the graph with the plan's dtypes (f32, bf16, f16; the tensors as
//      the plan stores them: NCHW, or for a channels-last kernel (`layout =
//      nhwc`, prepared from its channels-first form by the backend's
//      prepareChannelsLastKernel) X and Y with NHWC strides, which cuDNN's
//      tensor-core engines read without transposes; a 1-D convolution as a
//      2-D one of width 1);
//   2. cuDNN's heuristics (mode A, then its fallback list), and the first
//      engine whose numerical notes allow it: deterministic (no atomics, so
//      bits repeat run to run), no FFT or Winograd transforms, no inputs
//      down-converted and no reduced-precision reduction, and, where every
//      input is f32, no tensor cores (which would be TF32: MPT's f32 is
//      f32), whose plan finalizes with a workspace of at most
//      kMaxCudnnWorkspace;
//   3. if no engine takes the plan's dtypes (bf16 operands with an f32
//      result, say), the same graph in f32: bf16 / f16 operands are widened
//      into the workspace first (exactly), and the result is computed in f32
//      in the workspace and rounded once into its dtype afterwards.
//
// conv's bias and fused relu are not in the graph: with an f32 result they
// are applied in place after the convolution (the f32 sum, then + bias,
// rounded once in f32, as on the CPU, then relu); with another result
// dtype, step 1 is skipped and step 3's finishing kernel adds the bias
// before the one rounding and applies relu to the rounded value. cuDNN's
// fused conv + bias + activation engines are not used yet. Accumulation is f32
// (CUDNN_ATTR_CONVOLUTION_COMP_TYPE float) in cuDNN's order.
//
// The workspace (cuDNN's, the widened operands, the f32 result) is the
// kernel's share of the model's workspace, sized at prepare; run() makes no
// device allocation. It builds cuDNN's variant pack (the data pointers) on
// its first run and again only when a pointer changes, so replaying a plan
// repeats no host work, and a run under CUDA-graph capture records the
// engine's kernels like any other.
//
// Where cuDNN takes neither form (an FP8 operand, more than three spatial
// axes, a window cuDNN cannot express) prepare says why and ConvKernels.cu
// keeps its direct kernel (MPTRT_CUDA_CONV=auto) or fails the load
// (MPTRT_CUDA_CONV=cudnn). Without cuDNN in the build every conv kernel is
// a direct one.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Cudnn.h"
#include "ops/Backward.h"

#include <algorithm>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {
namespace cuda {

#ifndef MPTRT_HAVE_CUDNN

bool prepareCudnnConv(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *,
                      std::string *whyNot, bool) {
  *whyNot = "this build has no cuDNN (cudnn.h was not found)";
  return false;
}

#else

namespace {

/// The most workspace one cuDNN engine may ask for: engines wanting more
/// are passed over for the next one.
constexpr uint64_t kMaxCudnnWorkspace = 256ull << 20;

/// The convolution's three tensors, in cuDNN's roles. conv reads X and W
/// and writes Y; conv_grad_input reads Y (dy) and W and writes X (dx);
/// conv_grad_weight reads X and Y (dy) and writes W (dw).
enum Role { kX = 0, kW = 1, kY = 2 };
constexpr int64_t kUids[3] = {1, 2, 3};

/// Which plan tensor plays each role, and how.
struct Slot {
  bool isResult = false; // the kernel's result (else operand `index`)
  int index = 0;
  DType dtype = DType::F32;
  int64_t numel = 0;
  bool staged = false;       // widened input, or the f32 result, in the workspace
  uint64_t wsOffset = 0;     // where, when staged
  std::vector<int64_t> dims; // NCHW, at least four axes
  bool channelsLast = false; // stored [N, spatial..., C] (an activation of a layout = nhwc kernel)
};

bool cudnnType(DType t, cudnnDataType_t *out) {
  switch (t) {
  case DType::F32:
    *out = CUDNN_DATA_FLOAT;
    return true;
  case DType::BF16:
    *out = CUDNN_DATA_BFLOAT16;
    return true;
  case DType::F16:
    *out = CUDNN_DATA_HALF;
    return true;
  default:
    return false;
  }
}

/// The strides of a tensor of NCHW `dims` stored row-major, or channels
/// last ([N, spatial..., C]: C innermost; a 1-D convolution's trailing
/// width of 1 changes nothing).
std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims, bool channelsLast) {
  std::vector<int64_t> s(dims.size(), 1);
  if (!channelsLast) {
    for (size_t i = dims.size() - 1; i > 0; --i)
      s[i - 1] = s[i] * dims[i];
    return s;
  }
  int64_t stride = dims[1];
  for (size_t i = dims.size(); i-- > 2;) {
    s[i] = stride;
    stride *= dims[i];
  }
  s[0] = stride;
  return s;
}

/// The window in cuDNN's terms (at least two spatial axes).
struct Window {
  std::vector<int64_t> strides, dilations, pre, post;
};

/// The convolution as cuDNN states it, or false with why not.
bool cudnnWindow(const ConvParams &p, Window *w, std::string *whyNot) {
  if (p.spatialRank < 1 || p.spatialRank > 3) {
    *whyNot = std::to_string(p.spatialRank) + " spatial axes (cuDNN takes 1 to 3)";
    return false;
  }
  for (int d = 0; d < p.spatialRank; ++d) {
    const int64_t span = (p.kernel[d] - 1) * p.dilations[d] + 1;
    // The end padding that gives the plan's output size (the attribute's
    // may be larger by up to stride - 1 positions that no output reads).
    const int64_t post =
        std::max<int64_t>(0, (p.out[d] - 1) * p.strides[d] + span - p.in[d] - p.padsBegin[d]);
    if (p.padsBegin[d] < 0 ||
        (p.in[d] + p.padsBegin[d] + post - span) / p.strides[d] + 1 != p.out[d]) {
      *whyNot = "a window cuDNN cannot state (axis " + std::to_string(d) + ")";
      return false;
    }
    w->strides.push_back(p.strides[d]);
    w->dilations.push_back(p.dilations[d]);
    w->pre.push_back(p.padsBegin[d]);
    w->post.push_back(post);
  }
  if (p.spatialRank == 1) { // width 1
    w->strides.push_back(1);
    w->dilations.push_back(1);
    w->pre.push_back(0);
    w->post.push_back(0);
  }
  return true;
}

/// The dims of [lead0, lead1, spatial...] with a trailing 1 for 1-D.
std::vector<int64_t> dimsOf(int64_t a, int64_t b, const std::vector<int64_t> &spatial) {
  std::vector<int64_t> d = {a, b};
  d.insert(d.end(), spatial.begin(), spatial.end());
  if (spatial.size() == 1)
    d.push_back(1);
  return d;
}

Status tensorDescriptor(int64_t uid, cudnnDataType_t type, const std::vector<int64_t> &dims,
                        bool channelsLast, CudnnDescriptor *t) {
  const std::vector<int64_t> strides = stridesOf(dims, channelsLast);
  const int64_t n = static_cast<int64_t>(dims.size()), alignment = 16;
  MPTRT_TRY(t->create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  MPTRT_TRY(t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type));
  MPTRT_TRY(t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, dims.data()));
  MPTRT_TRY(t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, strides.data()));
  MPTRT_TRY(t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  MPTRT_TRY(t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment));
  return t->finalize();
}

/// Whether an engine's numerical notes allow it (above).
bool allowedNotes(const std::vector<cudnnBackendNumericalNote_t> &notes, bool allInputsF32) {
  for (cudnnBackendNumericalNote_t n : notes) {
    switch (n) {
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
    case CUDNN_NUMERICAL_NOTE_FFT:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      return false;
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      if (allInputsF32)
        return false;
      break;
    default:
      break;
    }
  }
  return true;
}

/// A finalized execution plan and its workspace.
struct Planned {
  CudnnDescriptor plan;
  uint64_t workspace = 0;
};

/// The backend attributes that name X, W and Y in one direction's
/// operation.
struct Direction {
  cudnnBackendDescriptorType_t op;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

Direction directionOf(const std::string &kind) {
  if (kind == "conv")
    return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
  if (kind == "conv_grad_input")
    return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
}

/// The operation graph of one convolution with these tensor dtypes.
Status buildGraph(cudnnHandle_t handle, const std::string &kind, const Window &win,
                  const std::vector<int64_t> (&dims)[3], const cudnnDataType_t (&types)[3],
                  bool channelsLast, CudnnDescriptor *graph) {
  CudnnDescriptor tensors[3];
  for (int r = 0; r < 3; ++r)
    MPTRT_TRY(tensorDescriptor(kUids[r], types[r], dims[r], channelsLast && r != kW, &tensors[r]));
  CudnnDescriptor conv;
  const int64_t spatial = static_cast<int64_t>(win.strides.size());
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  MPTRT_TRY(conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  MPTRT_TRY(conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial));
  MPTRT_TRY(conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
  MPTRT_TRY(conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  MPTRT_TRY(
      conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, win.dilations.data()));
  MPTRT_TRY(conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial,
                     win.strides.data()));
  MPTRT_TRY(
      conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, win.pre.data()));
  MPTRT_TRY(
      conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, win.post.data()));
  MPTRT_TRY(conv.finalize());

  const Direction d = directionOf(kind);
  const float alpha = 1.0f, beta = 0.0f;
  cudnnBackendDescriptor_t x = tensors[kX].get(), w = tensors[kW].get(), y = tensors[kY].get(),
                           c = conv.get();
  CudnnDescriptor op;
  MPTRT_TRY(op.create(d.op));
  MPTRT_TRY(op.set(d.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
  MPTRT_TRY(op.set(d.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w));
  MPTRT_TRY(op.set(d.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
  MPTRT_TRY(op.set(d.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c));
  MPTRT_TRY(op.set(d.alpha, CUDNN_TYPE_FLOAT, 1, &alpha));
  MPTRT_TRY(op.set(d.beta, CUDNN_TYPE_FLOAT, 1, &beta));
  MPTRT_TRY(op.finalize());

  cudnnBackendDescriptor_t ops = op.get();
  MPTRT_TRY(graph->create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  MPTRT_TRY(graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
  MPTRT_TRY(graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ops));
  return graph->finalize();
}

/// The engine configurations cuDNN's heuristics of `mode` rank for `graph`,
/// best first (none where the heuristics fail).
std::vector<CudnnDescriptor> rankedConfigs(const CudnnDescriptor &graph,
                                           cudnnBackendHeurMode_t mode) {
  const CudnnApi *api = cudnnApi(nullptr);
  CudnnDescriptor heur;
  cudnnBackendDescriptor_t g = graph.get();
  int64_t count = 0;
  if (!heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) ||
      !heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g) ||
      !heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) || !heur.finalize() ||
      api->getAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                        &count, nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return {};
  std::vector<CudnnDescriptor> configs(count);
  std::vector<cudnnBackendDescriptor_t> raw(count);
  for (int64_t i = 0; i < count; ++i) {
    if (!configs[i].create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
      return {};
    raw[i] = configs[i].get();
  }
  int64_t returned = 0;
  if (api->getAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                        count, &returned, raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  configs.resize(static_cast<size_t>(std::max<int64_t>(0, std::min(returned, count))));
  return configs;
}

/// Whether the engine of `config` is allowed (allowedNotes).
bool allowedEngine(const CudnnDescriptor &config, bool allInputsF32) {
  const CudnnApi *api = cudnnApi(nullptr);
  CudnnDescriptor engine;
  if (!engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR))
    return false;
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  if (api->getAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                        &n, &e) != CUDNN_STATUS_SUCCESS)
    return false;
  std::vector<cudnnBackendNumericalNote_t> notes(CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  int64_t noteCount = 0;
  if (api->getAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                        CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &noteCount,
                        notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  notes.resize(static_cast<size_t>(std::max<int64_t>(0, noteCount)));
  return allowedNotes(notes, allInputsF32);
}

/// The graph of one convolution with these tensor dtypes, planned with the
/// first allowed engine; false with why not.
bool planGraph(cudnnHandle_t handle, const std::string &kind, const Window &win,
               const std::vector<int64_t> (&dims)[3], const cudnnDataType_t (&types)[3],
               bool channelsLast, bool allInputsF32, Planned *out, std::string *whyNot) {
  CudnnDescriptor graph;
  if (Status s = buildGraph(handle, kind, win, dims, types, channelsLast, &graph); !s) {
    *whyNot = s.message();
    return false;
  }
  const CudnnApi *api = cudnnApi(nullptr);
  std::string refused;
  int tried = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK})
    for (const CudnnDescriptor &config : rankedConfigs(graph, mode)) {
      ++tried;
      if (!allowedEngine(config, allInputsF32))
        continue;
      Planned p;
      cudnnBackendDescriptor_t cfg = config.get();
      if (!p.plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) ||
          !p.plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) ||
          !p.plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &cfg))
        continue;
      if (Status s = p.plan.finalize(); !s) {
        refused = s.message();
        continue;
      }
      int64_t ws = 0, n = 0;
      if (api->getAttribute(p.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                            CUDNN_TYPE_INT64, 1, &n, &ws) != CUDNN_STATUS_SUCCESS ||
          ws < 0 || static_cast<uint64_t>(ws) > kMaxCudnnWorkspace)
        continue;
      p.workspace = static_cast<uint64_t>(ws);
      *out = std::move(p);
      return true;
    }
  *whyNot = "no deterministic cuDNN engine without FFT, Winograd or (in f32) TF32 takes it (" +
            std::to_string(tried) + " engines tried" +
            (refused.empty() ? std::string() : "; the last refusal: " + refused) + ")";
  return false;
}

class CudnnConvKernel final : public PreparedKernel {
public:
  CudnnConvKernel(const Context &c, cudnnHandle_t handle) : ctx_(c), handle_(handle) {}

  /// Plans the kernel: the plan's dtypes first, else in f32 (above); with
  /// `channelsLast`, `v` is a channels-last kernel's channels-first form
  /// and X and Y are stated with the strides they are stored with.
  bool prepare(const KernelView &v, const ConvParams &p, bool channelsLast, std::string *whyNot) {
    Window win;
    if (!cudnnWindow(p, &win, whyNot))
      return false;
    kind_ = v.kind();
    const std::vector<int64_t> xDims = dimsOf(p.N, p.C, p.in),
                               wDims = dimsOf(p.M, p.C / p.group, p.kernel),
                               yDims = dimsOf(p.N, p.M, p.out);
    auto operand = [&](int i, std::vector<int64_t> dims) {
      Slot s;
      s.index = i;
      s.dtype = v.operand(i).dtype;
      s.numel = v.operand(i).numel;
      s.dims = std::move(dims);
      return s;
    };
    Slot result;
    result.isResult = true;
    result.dtype = v.result(0).dtype;
    result.numel = v.result(0).numel;
    if (kind_ == "conv") {
      slots_[kX] = operand(0, xDims);
      slots_[kW] = operand(1, wDims);
      result.dims = yDims;
      slots_[kY] = result;
      out_ = kY;
      hasBias_ = p.hasBias;
      relu_ = p.relu;
      if (hasBias_)
        biasType_ = v.operand(2).dtype;
    } else if (kind_ == "conv_grad_input") {
      slots_[kY] = operand(0, yDims);
      slots_[kW] = operand(1, wDims);
      result.dims = xDims;
      slots_[kX] = result;
      out_ = kX;
    } else {
      slots_[kX] = operand(0, xDims);
      slots_[kY] = operand(1, yDims);
      result.dims = wDims;
      slots_[kW] = result;
      out_ = kW;
    }
    channels_ = p.M;
    inner_ = channelsLast ? 1 : p.outSize; // the bias index: (e / inner) % channels

    cudnnDataType_t types[3];
    bool allF32 = true;
    for (int r = 0; r < 3; ++r) {
      if (!cudnnType(slots_[r].dtype, &types[r])) {
        *whyNot = std::string("a ") + plan::dtypeName(slots_[r].dtype) + " tensor";
        return false;
      }
      if (r != out_)
        allF32 = allF32 && slots_[r].dtype == DType::F32;
    }
    const std::vector<int64_t> dims[3] = {slots_[kX].dims, slots_[kW].dims, slots_[kY].dims};
    // 1. The plan's dtypes (a bias or a relu only after an f32 result).
    const bool epilogue = hasBias_ || relu_;
    std::string nativeWhy = "a bias or relu after a " + std::string(plan::dtypeName(result.dtype)) +
                            " result (applied around its one rounding)";
    if ((!epilogue || result.dtype == DType::F32) &&
        planGraph(handle_, kind_, win, dims, types, channelsLast, allF32, &planned_, &nativeWhy)) {
      finish_ = epilogue; // in place, in f32
      layoutWorkspace();
      return true;
    }
    // 2. Everything in f32, staged in the workspace.
    const cudnnDataType_t f32[3] = {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT};
    std::string f32Why;
    if (!planGraph(handle_, kind_, win, dims, f32, channelsLast, /*allInputsF32=*/true, &planned_,
                   &f32Why)) {
      *whyNot = "with its dtypes: " + nativeWhy + "; in f32: " + f32Why;
      return false;
    }
    for (int r = 0; r < 3; ++r)
      slots_[r].staged = slots_[r].dtype != DType::F32;
    finish_ = hasBias_ || relu_ || slots_[out_].staged;
    layoutWorkspace();
    return true;
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    auto *ws = static_cast<uint8_t *>(args.workspace);
    void *ptrs[3];
    for (int r = 0; r < 3; ++r) {
      const Slot &s = slots_[r];
      void *data = s.isResult ? args.results[0].data : args.operands[s.index].data;
      ptrs[r] = s.staged ? ws + s.wsOffset : data;
      if (s.staged && !s.isResult)
        MPTRT_TRY(widenToF32(ctx_, s.dtype, data, static_cast<float *>(ptrs[r]), s.numel));
    }
    void *cudnnWs = planned_.workspace ? ws + cudnnOffset_ : nullptr;
    MPTRT_TRY(variantPack(ptrs, cudnnWs));
    MPTRT_TRY(cudnnCheck(cudnnApi(nullptr)->execute(handle_, planned_.plan.get(), pack_.get()),
                         "cudnnBackendExecute"));
    if (finish_) {
      const Slot &o = slots_[out_];
      const TensorArg *bias = hasBias_ ? &args.operands[2] : nullptr;
      MPTRT_TRY(launchConvFinish(ctx_, static_cast<const float *>(ptrs[out_]),
                                 bias ? biasType_ : DType::F32, bias ? bias->data : nullptr,
                                 channels_, inner_, o.numel, relu_, o.dtype, args.results[0].data));
    }
    return Status::ok();
  }

private:
  void layoutWorkspace() {
    Carve carve;
    for (Slot &s : slots_)
      if (s.staged)
        s.wsOffset = carve.take(static_cast<uint64_t>(s.numel) * sizeof(float));
    cudnnOffset_ = carve.take(planned_.workspace);
    workspace_ = carve.used;
  }

  /// cuDNN's variant pack for these pointers: made on the first run and
  /// when a pointer changes (a plan's pointers do not, so once).
  Status variantPack(void *const (&ptrs)[3], void *ws) {
    if (pack_.get() && std::equal(ptrs, ptrs + 3, packPtrs_) && ws == packWs_)
      return Status::ok();
    CudnnDescriptor pack;
    void *data[3] = {ptrs[0], ptrs[1], ptrs[2]};
    MPTRT_TRY(pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    MPTRT_TRY(pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, kUids));
    MPTRT_TRY(pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, data));
    MPTRT_TRY(pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    MPTRT_TRY(pack.finalize());
    pack_ = std::move(pack);
    std::copy(ptrs, ptrs + 3, packPtrs_);
    packWs_ = ws;
    return Status::ok();
  }

  const Context &ctx_;
  cudnnHandle_t handle_;
  std::string kind_;
  Slot slots_[3];
  int out_ = kY;
  bool hasBias_ = false, relu_ = false, finish_ = false;
  DType biasType_ = DType::F32;
  int64_t channels_ = 1, inner_ = 1;
  Planned planned_;
  uint64_t cudnnOffset_ = 0, workspace_ = 0;
  CudnnDescriptor pack_;
  void *packPtrs_[3] = {nullptr, nullptr, nullptr};
  void *packWs_ = nullptr;
};

} // namespace

bool prepareCudnnConv(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                      std::string *whyNot, bool channelsLast) {
  ConvParams p;
  const Status decoded = v.kind() == "conv" ? decodeConv(v, &p) : decodeConvGrad(v, &p);
  if (!decoded) {
    *whyNot = decoded.message();
    return false;
  }
  if (p.N == 0 || p.M == 0 || p.C == 0 || p.outSize == 0 || p.inSize == 0) {
    *whyNot = "an empty tensor";
    return false;
  }
  cudnnHandle_t handle = nullptr;
  if (Status s = cudnnHandleOf(c, &handle); !s) {
    *whyNot = s.message();
    return false;
  }
  auto kernel = std::make_unique<CudnnConvKernel>(c, handle);
  if (!kernel->prepare(v, p, channelsLast, whyNot))
    return false;
  *out = std::move(kernel);
  return true;
}

#endif // MPTRT_HAVE_CUDNN

} // namespace cuda
} // namespace rt
} // namespace mptrt
