//===- KernelCases.cpp - one realistic kernel of every kind ---------------===//
#include "KernelCases.h"
#include "UnaryOracle.h"

#include <random>

namespace mptrt {
namespace test {

Case make(std::string kind, std::vector<Operand> operands, std::vector<std::pair<DType, T>> results,
          std::vector<Attribute> attrs) {
  static std::mt19937 rng(7);
  Case c{std::move(kind), {}, {}, std::move(attrs)};
  for (const Operand &o : operands)
    c.operands.push_back(randomTensor(o.dtype, o.shape, rng, o.lo, o.hi, o.lo >= 0 ? 0.5 : 0.1));
  for (const auto &r : results)
    c.results.emplace_back(r.first, r.second);
  return c;
}

/// Every kind of the CPU backend, with a representative shape each: the
/// activations of a small CNN or transformer block, and the non-f32 dtypes
/// where a kernel widens into scratch.
std::vector<Case> allCases() {
  std::vector<Case> cs;
  const T act = {64, 1024}, img = {8, 16, 32, 32};
  // The float unary kernels without attributes (UnaryKinds.def), and gelu.
  for (const oracle::UnaryFunctionInfo &u : oracle::unaryFunctions())
    if (u.kernel && !u.attrs && u.floating) // [0.5, 2], or across the reach
      cs.push_back(make(u.kind, {{F32, act, u.reach ? -u.reach : 0.5, u.reach ? u.reach : 2.0}},
                        {{F32, act}}));
  cs.push_back(make("gelu", {{F32, act, 0.5, 2.0}}, {{F32, act}}));
  cs.push_back(make("not", {{I1, act}}, {{I1, act}}));
  cs.push_back(make("leaky_relu", {{BF16, act}}, {{BF16, act}}, {aFloat("alpha", 0.1)}));
  cs.push_back(make("clip", {{F32, act}}, {{F32, act}}, {aFloat("min", -1), aFloat("max", 1)}));
  for (const char *k : {"add", "sub", "mul", "div", "pow", "max", "min"})
    cs.push_back(make(k, {{F32, act, 0.5, 2.0}, {F32, {1024}, 0.5, 2.0}}, {{F32, act}}));
  for (const char *k : {"equal", "less", "greater"})
    cs.push_back(make(k, {{F32, act}, {F32, {64, 1}}}, {{I1, act}}));
  cs.push_back(make("where", {{I1, act}, {F32, act}, {F32, {1024}}}, {{F32, act}}));
  // Contractions: f32, and bf16 (widened into scratch) with a bf16 result.
  cs.push_back(make("matmul", {{F32, {4, 64, 128}}, {F32, {128, 96}}}, {{F32, {4, 64, 96}}}));
  cs.push_back(make("matmul", {{BF16, {4, 64, 128}}, {BF16, {128, 96}}}, {{BF16, {4, 64, 96}}}));
  cs.push_back(make("gemm", {{F32, {64, 256}}, {F32, {256, 128}}, {F32, {128}}}, {{F32, {64, 128}}},
                    {aString("activation", "relu")}));
  cs.push_back(make("gemm", {{BF16, {64, 256}}, {BF16, {128, 256}}, {F32, {128}}},
                    {{BF16, {64, 128}}}, {aInt("trans_b", 1), aString("activation", "gelu")}));
  const std::vector<Attribute> conv3 = {aInts("pads", {1, 1, 1, 1})};
  cs.push_back(
      make("scaled_matmul",
           {{F8, {4, 64, 128}}, {F8E5, {128, 96}}, {F32, {}, 0.5, 2.0}, {F32, {}, 0.5, 2.0}},
           {{BF16, {4, 64, 96}}}));
  cs.push_back(make(
      "scaled_gemm",
      {{F8, {64, 256}}, {F8, {128, 256}}, {F32, {128}}, {F32, {}, 0.5, 2.0}, {F32, {}, 0.5, 2.0}},
      {{F32, {64, 128}}}, {aInt("trans_b", 1)}));
  cs.push_back(make("conv", {{F32, img}, {F32, {32, 16, 3, 3}}, {F32, {32}}},
                    {{F32, {8, 32, 32, 32}}}, conv3));
  cs.push_back(make("conv", {{BF16, img}, {BF16, {32, 16, 3, 3}}, {F32, {32}}},
                    {{BF16, {8, 32, 32, 32}}}, conv3));
  // A depthwise conv: one unit per (image, channel), spread over threads.
  cs.push_back(make("conv", {{F32, img}, {F32, {16, 1, 3, 3}}}, {{F32, img}},
                    {aInts("pads", {1, 1, 1, 1}), aInt("group", 16)}));
  // Pooling.
  const std::vector<Attribute> pool = {aInts("kernel_shape", {3, 3}), aInts("strides", {2, 2}),
                                       aInts("pads", {1, 1, 1, 1})};
  cs.push_back(make("max_pool", {{F32, img}}, {{F32, {8, 16, 16, 16}}}, pool));
  cs.push_back(make("max_pool", {{I64, img}}, {{I64, {8, 16, 16, 16}}}, pool));
  cs.push_back(make("average_pool", {{BF16, img}}, {{BF16, {8, 16, 16, 16}}}, pool));
  cs.push_back(make("global_average_pool", {{F32, img}}, {{F32, {8, 16, 1, 1}}}));
  // Normalisation, softmax.
  cs.push_back(make("batch_norm",
                    {{F32, img}, {F32, {16}}, {F32, {16}}, {F32, {16}}, {F32, {16}, 0.5, 2.0}},
                    {{F32, img}}));
  cs.push_back(make("batch_norm_train",
                    {{F32, img}, {F32, {16}}, {F32, {16}}, {F32, {16}}, {F32, {16}, 0.5, 2.0}},
                    {{F32, img}, {F32, {16}}, {F32, {16}}}));
  // Channels-last activations (mpt-channels-last): run as the channels-first
  // kernel between the backend's transposes (ChannelsLast.h).
  cs.push_back(make("conv", {{BF16, {8, 32, 32, 16}}, {BF16, {32, 16, 3, 3}}},
                    {{BF16, {8, 32, 32, 32}}},
                    {aInts("pads", {1, 1, 1, 1}), aString("layout", "nhwc")}));
  cs.push_back(
      make("batch_norm_train",
           {{F32, {8, 32, 32, 16}}, {F32, {16}}, {F32, {16}}, {F32, {16}}, {F32, {16}, 0.5, 2.0}},
           {{F32, {8, 32, 32, 16}}, {F32, {16}}, {F32, {16}}},
           {aString("layout", "nhwc"), aString("activation", "relu")}));
  // The fused epilogue of a ResNet block (mpt-fuse-batch-norm): residual, relu.
  cs.push_back(
      make("batch_norm_train",
           {{BF16, img}, {F32, {16}}, {F32, {16}}, {F32, {16}}, {F32, {16}, 0.5, 2.0}, {BF16, img}},
           {{BF16, img}, {F32, {16}}, {F32, {16}}}, {aString("activation", "relu")}));
  cs.push_back(make("layer_norm", {{BF16, act}, {F32, {1024}}, {F32, {1024}}},
                    {{BF16, act}, {F32, {64, 1}}, {F32, {64, 1}}}));
  cs.push_back(make("softmax", {{F32, act}}, {{F32, act}}));
  cs.push_back(
      make("log_softmax", {{F32, {8, 100, 64}}}, {{F32, {8, 100, 64}}}, {aInt("axis", 1)}));
  // Reductions and losses.
  cs.push_back(
      make("reduce_sum", {{F32, img}}, {{F32, {1, 16, 1, 1}}}, {aInts("axes", {0, 2, 3})}));
  cs.push_back(make("reduce_mean", {{BF16, act}}, {{F32, {64, 1}}}, {aInts("axes", {1})}));
  cs.push_back(make("reduce_max", {{I64, act}}, {{I64, {1, 1024}}}, {aInts("axes", {0})}));
  cs.push_back(
      make("reduce_l2", {{F32, act}}, {{F32, {}}}, {aInts("axes", {}), aInt("keepdims", 0)}));
  cs.push_back(make("softmax_cross_entropy_loss", {{F32, {256, 100}}, {I64, {256}, 0, 99}},
                    {{F32, {}}, {F32, {256, 100}}}));
  cs.push_back(make("nll_loss", {{F32, {16, 10, 32}}, {I64, {16, 32}, 0, 9}, {F32, {10}}},
                    {{F32, {16, 32}}}, {aString("reduction", "none")}));
  // Data movement.
  for (const char *k : {"copy", "identity", "reshape", "flatten", "squeeze", "unsqueeze"})
    cs.push_back(make(k, {{F32, act}}, {{F32, {64, 32, 32}}}));
  cs.push_back(make("cast", {{F32, act}}, {{BF16, act}}));
  cs.push_back(make("quantize", {{F32, act}, {F32, {}, 0.5, 2.0}}, {{F8, act}}));
  cs.push_back(make("dropout", {{F32, act}}, {{F32, act}, {I1, act}}));
  cs.push_back(
      make("transpose", {{F32, img}}, {{F32, {8, 32, 32, 16}}}, {aInts("perm", {0, 2, 3, 1})}));
  cs.push_back(
      make("concat", {{F32, act}, {F32, {64, 512}}}, {{F32, {64, 1536}}}, {aInt("axis", 1)}));
  cs.push_back(
      make("split", {{F32, act}}, {{F32, {64, 512}}, {F32, {64, 512}}}, {aInt("axis", 1)}));
  cs.push_back(make("slice", {{F32, act}}, {{F32, {32, 500}}},
                    {aInts("starts", {0, 10}), aInts("ends", {64, 1010}), aInts("steps", {2, 2})}));
  cs.push_back(
      make("gather", {{F32, {1000, 256}}, {I64, {64, 8}, -1000, 999}}, {{F32, {64, 8, 256}}}));
  // Attention: a GPT-2-like head split in bf16 with a causal-sized mask,
  // and an f32 one with Tq != Tk and no mask.
  const T heads = {2, 4, 128, 64};
  cs.push_back(make("attention",
                    {{BF16, heads}, {BF16, heads}, {BF16, heads}, {F32, {1, 1, 128, 128}}},
                    {{BF16, heads}, {F32, {2, 4, 128}}}, {aFloat("scale", 0.125)}));
  cs.push_back(make("attention", {{F32, {6, 40, 32}}, {F32, {6, 70, 32}}, {F32, {6, 70, 24}}},
                    {{F32, {6, 40, 24}}, {F32, {6, 40}}}, {aFloat("scale", 0.2)}));
  cs.push_back(make("expand", {{F32, {1, 1024}}}, {{F32, act}}));
  cs.push_back(make("trilu", {{F32, {8, 128, 128}}}, {{F32, {8, 128, 128}}}, {aInt("upper", 0)}));
  cs.push_back(make("constant_of_shape", {}, {{F32, act}}, {aFloat("value", 1.5)}));
  // Backward.
  cs.push_back(
      make("unary_grad", {{BF16, act}, {BF16, act}}, {{BF16, act}}, {aString("kind", "gelu")}));
  cs.push_back(make("softmax_grad", {{F32, {8, 100, 64}}, {F32, {8, 100, 64}}},
                    {{F32, {8, 100, 64}}}, {aInt("axis", 1)}));
  cs.push_back(make("softmax_grad", {{BF16, act}, {BF16, act}}, {{BF16, act}},
                    {aInt("axis", -1), aInt("log", 1)}));
  cs.push_back(
      make("layer_norm_grad",
           {{F32, act}, {F32, {1024}}, {F32, {64, 1}}, {F32, {64, 1}, 0.5, 2.0}, {F32, act}},
           {{F32, act}, {F32, {1024}}, {F32, {1024}}}, {aInt("axis", -1)}));
  cs.push_back(make("attention_grad",
                    {{BF16, heads},
                     {BF16, heads},
                     {BF16, heads},
                     {BF16, heads},
                     {F32, {2, 4, 128}, 1.0, 3.0},
                     {BF16, heads},
                     {F32, {1, 1, 128, 128}}},
                    {{BF16, heads}, {BF16, heads}, {BF16, heads}}, {aFloat("scale", 0.125)}));
  cs.push_back(make("softmax_cross_entropy_loss_grad",
                    {{F32, {256, 100}}, {I64, {256}, 0, 99}, {F32, {100}}, {F32, {}}},
                    {{F32, {256, 100}}}));
  cs.push_back(make("nll_loss_grad", {{I64, {16, 32}, 0, 9}, {F32, {16, 32}}},
                    {{F32, {16, 10, 32}}}, {aString("reduction", "none")}));
  cs.push_back(make("gather_grad", {{I64, {64, 8}, -1000, 999}, {F32, {64, 8, 256}}},
                    {{F32, {1000, 256}}}, {aInt("axis", 0)}));
  cs.push_back(make("slice_grad", {{F32, {32, 500}}}, {{F32, act}},
                    {aInts("starts", {0, 10}), aInts("ends", {64, 1010}), aInts("steps", {2, 2})}));
  cs.push_back(make("max_pool_grad", {{F32, img}, {F32, {8, 16, 16, 16}}}, {{F32, img}}, pool));
  cs.push_back(make("average_pool_grad", {{BF16, {8, 16, 16, 16}}}, {{BF16, img}}, pool));
  cs.push_back(make("conv_grad_input", {{F32, {8, 32, 32, 32}}, {F32, {32, 16, 3, 3}}},
                    {{F32, img}}, conv3));
  cs.push_back(make("conv_grad_input", {{BF16, {8, 32, 32, 32}}, {BF16, {32, 16, 3, 3}}},
                    {{BF16, img}}, conv3));
  cs.push_back(make("conv_grad_weight", {{F32, img}, {F32, {8, 32, 32, 32}}},
                    {{F32, {32, 16, 3, 3}}}, conv3));
  cs.push_back(make("conv_grad_weight", {{BF16, img}, {BF16, {8, 32, 32, 32}}},
                    {{F32, {32, 16, 3, 3}}}, conv3));
  cs.push_back(make("batch_norm_grad", {{BF16, img}, {F32, {16}}, {BF16, img}},
                    {{BF16, img}, {F32, {16}}, {F32, {16}}}));
  cs.push_back(make("batch_norm_grad", {{BF16, img}, {F32, {16}}, {BF16, img}, {BF16, img}},
                    {{BF16, img}, {F32, {16}}, {F32, {16}}}, {aString("activation", "relu")}));
  // Training.
  cs.push_back(make("scale_loss", {{F32, {}}, {F32, {}, 1, 4}}, {{F32, {}}}));
  cs.push_back(make("unscale", {{BF16, act}, {F32, {}, 1, 4}}, {{F32, act}}));
  cs.push_back(make("all_finite", {{F32, act}, {BF16, {4096}}, {F32, {10}}}, {{I1, {}}}));
  // One process: the world of one rank the tests run in (the MPI path is
  // data-parallel-equivalence's).
  cs.push_back(make("all_reduce", {{F32, act}, {BF16, {4096}}}, {{F32, act}, {BF16, {4096}}}));
  // ZeRO-1's kernels over that world of one: a tensor's one shard holds it.
  cs.push_back(make("reduce_scatter", {{F32, {64, 130}}, {BF16, {4096}}},
                    {{F32, {64 * 130}}, {BF16, {4096}}}, {aInt("world_size", 1)}));
  cs.push_back(make("all_gather", {{F32, {64 * 130}}, {BF16, {4096}}},
                    {{F32, {64, 130}}, {BF16, {4096}}}, {aInt("world_size", 1)}));
  cs.push_back(make("shard", {{F32, {64, 130}}}, {{F32, {64 * 130}}}, {aInt("world_size", 1)}));
  cs.push_back(make("global_norm", {{F32, act}, {BF16, {4096}}, {F32, {10}}}, {{F32, {}}}));
  cs.push_back(
      make("clip_by_norm", {{F32, act}, {F32, {}, 1, 4}}, {{F32, act}}, {aFloat("max_norm", 1.0)}));
  cs.push_back(
      make("sgd_update",
           {{F32, act}, {F32, act}, {F32, act}, {I64, {}, 1, 9}, {F32, {}, 0.5, 1}, {I1, {}, 1, 1}},
           {{F32, act}, {F32, act}}, {aFloat("momentum", 0.9)}));
  cs.push_back(make("adamw_update",
                    {{F32, act},
                     {BF16, act},
                     {F32, act},
                     {F32, act, 0.5, 2.0},
                     {I64, {}, 1, 9},
                     {F32, {}, 0.5, 1},
                     {I1, {}, 1, 1}},
                    {{F32, act}, {F32, act}, {F32, act}}));
  cs.push_back(make("update_loss_scale", {{F32, {}, 1, 4}, {I64, {}, 0, 9}, {I1, {}, 0, 1}},
                    {{F32, {}}, {I64, {}}}, {aInt("growth_interval", 5)}));
  cs.push_back(make("lr_schedule", {{I64, {}, 0, 99}}, {{F32, {}}},
                    {aString("schedule", "warmup_cosine"), aFloat("lr", 1e-3),
                     aInt("warmup_steps", 10), aInt("total_steps", 100)}));
  cs.push_back(make("advance_step", {{I64, {}, 0, 99}, {I1, {}, 0, 1}}, {{I64, {}}}));
  cs.push_back(make("amax", {{BF16, act}}, {{F32, {}}}));
  cs.push_back(make("update_fp8_scale",
                    {{F32, {16}, 0.5, 2.0}, {F32, {}, 0.5, 2.0}, {F32, {}, 0.5, 2.0}},
                    {{F32, {16}}, {F32, {}}}));
  // Training-mode dropout (the Philox mask), last so that the operands of the
  // cases above stay what they were.
  cs.push_back(make("dropout", {{BF16, act}, {I64, {}, 0, 1000000}, {I64, {}, 0, 99}},
                    {{F32, act}, {I1, act}},
                    {aFloat("ratio", 0.1), aInt("training", 1), aInt("stream", 7)}));
  // Edge cases of the normalisation, reduction, loss and pooling kinds (the
  // CUDA parity test's main check of them): ignore_index, class weights and
  // every reduction, trailing dims on the losses, non-trailing and integer
  // reductions, ceil_mode with count_include_pad, 1-D and dilated 3-D
  // windows, a scalar layer-norm scale, rank-2 batch norm, softmax over
  // axis 0. Appended last, so the cases above keep their random values.
  cs.push_back(make("softmax_cross_entropy_loss",
                    {{F32, {8, 7, 5}}, {I64, {8, 5}, 0, 6}, {F32, {7}, 0.5, 2.0}}, {{F32, {}}},
                    {aString("reduction", "sum"), aInt("ignore_index", 3)}));
  cs.push_back(make("softmax_cross_entropy_loss", {{BF16, {8, 7, 5}}, {I64, {8, 5}, 0, 6}},
                    {{F32, {}}, {BF16, {8, 7, 5}}}, {aInt("ignore_index", 2)}));
  cs.push_back(make("softmax_cross_entropy_loss", {{F32, {300, 3}}, {I64, {300}, 0, 2}},
                    {{BF16, {300}}}, {aString("reduction", "none")}));
  cs.push_back(make("nll_loss", {{F32, {16, 10, 3}}, {I64, {16, 3}, 0, 9}, {F32, {10}}},
                    {{F32, {}}}, {aInt("ignore_index", 4)}));
  cs.push_back(make("softmax_cross_entropy_loss_grad",
                    {{F32, {8, 7, 5}}, {I64, {8, 5}, 0, 6}, {F32, {8, 5}}}, {{F32, {8, 7, 5}}},
                    {aString("reduction", "none"), aInt("ignore_index", 1)}));
  cs.push_back(make("softmax_cross_entropy_loss_grad",
                    {{F32, {8, 7, 5}}, {I64, {8, 5}, 0, 6}, {F32, {}}}, {{F32, {8, 7, 5}}},
                    {aString("reduction", "sum")}));
  cs.push_back(make("nll_loss_grad", {{I64, {16, 3}, 0, 9}, {F32, {10}, 0.5, 2.0}, {F32, {}}},
                    {{BF16, {16, 10, 3}}}, {aInt("ignore_index", 4)}));
  cs.push_back(
      make("reduce_sum", {{F32, {6, 5, 4, 3}}}, {{F32, {6, 1, 4, 1}}}, {aInts("axes", {1, 3})}));
  cs.push_back(make("reduce_max", {{F32, {6, 500, 3}}}, {{BF16, {6, 3}}},
                    {aInts("axes", {1}), aInt("keepdims", 0)}));
  cs.push_back(make("reduce_sum", {{I64, {6, 500, 3}}}, {{I64, {6, 3}}},
                    {aInts("axes", {1}), aInt("keepdims", 0)}));
  cs.push_back(make("reduce_l2", {{BF16, {5, 3000}}}, {{F32, {5, 1}}}, {aInts("axes", {1})}));
  const std::vector<Attribute> ceilPool = {aInts("kernel_shape", {3, 2}), aInts("strides", {2, 2}),
                                           aInts("pads", {1, 0, 1, 1}),
                                           aInt("count_include_pad", 1), aInt("ceil_mode", 1)};
  cs.push_back(make("average_pool", {{F32, {2, 3, 9, 8}}}, {{F32, {2, 3, 5, 4}}}, ceilPool));
  cs.push_back(make("average_pool_grad", {{F32, {2, 3, 5, 4}}}, {{F32, {2, 3, 9, 8}}}, ceilPool));
  const std::vector<Attribute> pool3 = {aInts("kernel_shape", {2, 3, 2}),
                                        aInts("strides", {2, 1, 2}), aInts("dilations", {2, 1, 1})};
  cs.push_back(make("max_pool", {{F32, {2, 3, 6, 7, 5}}}, {{F32, {2, 3, 2, 5, 2}}}, pool3));
  cs.push_back(make("max_pool_grad", {{F32, {2, 3, 6, 7, 5}}, {F32, {2, 3, 2, 5, 2}}},
                    {{F32, {2, 3, 6, 7, 5}}}, pool3));
  cs.push_back(make("max_pool_grad", {{BF16, {2, 3, 9}}, {F32, {2, 3, 9}}}, {{F32, {2, 3, 9}}},
                    {aInts("kernel_shape", {3}), aInts("strides", {1}), aInts("pads", {1, 1})}));
  cs.push_back(make("layer_norm", {{F32, {5, 3, 700}}, {F32, {1}}}, {{F32, {5, 3, 700}}},
                    {aInt("axis", 1)}));
  cs.push_back(make(
      "layer_norm_grad",
      {{F32, {37, 300}}, {F32, {1}}, {F32, {37, 1}}, {F32, {37, 1}, 0.5, 2.0}, {F32, {37, 300}}},
      {{F32, {37, 300}}, {F32, {1}}, {F32, {1}}}, {aInt("axis", -1)}));
  cs.push_back(make("batch_norm_train",
                    {{F32, {300, 7}}, {F32, {7}}, {F32, {7}}, {F32, {7}}, {F32, {7}, 0.5, 2.0}},
                    {{F32, {300, 7}}, {F32, {7}}, {F32, {7}}}, {aFloat("momentum", 0.8)}));
  cs.push_back(make("batch_norm_grad", {{F32, {300, 7}}, {F32, {7}}, {F32, {300, 7}}},
                    {{F32, {300, 7}}, {F32, {7}}, {F32, {7}}}));
  cs.push_back(make("softmax", {{BF16, {33, 5, 2}}}, {{F32, {33, 5, 2}}}, {aInt("axis", 0)}));
  cs.push_back(make("log_softmax", {{F32, {3000}}}, {{BF16, {3000}}}, {aInt("axis", 0)}));
  cs.push_back(make("softmax_grad", {{F32, {33, 5, 2}}, {F32, {33, 5, 2}}}, {{F32, {33, 5, 2}}},
                    {aInt("axis", 0), aInt("log", 1)}));
  // f32 gradients of the elementwise kinds (UnaryKinds.def); not tanh and
  // gelu_tanh, whose 1 - tanh^2 magnifies glibc's tanhf error past any
  // fixed ulp bound (docs/runtime.md, "The CUDA backend").
  for (const oracle::UnaryFunctionInfo &u : oracle::unaryFunctions())
    if (u.grad && std::string(u.kind) != "tanh" && std::string(u.kind) != "gelu_tanh")
      cs.push_back(
          make("unary_grad",
               {{F32, {4096}, u.reach ? -u.reach : 0.5, u.reach ? u.reach : 2.0}, {F32, {4096}}},
               {{F32, {4096}}}, {aString("kind", u.kind)}));
  // The FP8 contractions' other layouts on CUDA: A stored [K, M] and B
  // [K, N], both transposed into cuBLASLt's TN layout in the workspace, with
  // alpha and beta; and E5M2 times E5M2, which cuBLASLt's FP8 GEMMs do not
  // take, so the CUDA kernel widens to float32 there. (Last, so that the
  // cases above keep their random operands.)
  cs.push_back(make("scaled_gemm",
                    {{F8, {256, 64}},
                     {F8E5, {256, 128}},
                     {F32, {64, 128}},
                     {F32, {}, 0.5, 2.0},
                     {F32, {}, 0.5, 2.0}},
                    {{BF16, {64, 128}}},
                    {aInt("trans_a", 1), aFloat("alpha", 0.5), aFloat("beta", 2.0)}));
  cs.push_back(
      make("scaled_matmul",
           {{F8E5, {2, 32, 64}}, {F8E5, {2, 64, 48}}, {F32, {}, 0.5, 2.0}, {F32, {}, 0.5, 2.0}},
           {{F32, {2, 32, 48}}}));
  // bf16 master weights (master-weights=bf16 and bf16-sr): the update
  // rounded into bf16 to nearest even, and stochastically from the Philox
  // word of (seed, step, stream, element), which both backends draw from
  // the same header. (Last, so that the cases above keep their operands.)
  cs.push_back(make("adamw_update",
                    {{BF16, act},
                     {F32, act},
                     {F32, act},
                     {F32, act, 0.5, 2.0},
                     {I64, {}, 1, 9},
                     {F32, {}, 0.5, 1},
                     {I1, {}, 1, 1}},
                    {{BF16, act}, {F32, act}, {F32, act}}));
  cs.push_back(make("adamw_update",
                    {{BF16, act},
                     {F32, act},
                     {F32, act},
                     {F32, act, 0.5, 2.0},
                     {I64, {}, 1, 9},
                     {F32, {}, 0.5, 1},
                     {I1, {}, 1, 1},
                     {I64, {}, 0, 1000000}},
                    {{BF16, act}, {F32, act}, {F32, act}},
                    {aInt("stochastic_rounding", 1), aInt("stream", 2147483648LL)}));
  return cs;
}

std::string describeCase(const Case &c) {
  std::string s = c.kind + "(";
  for (size_t i = 0; i < c.operands.size(); ++i) {
    s += i ? ", " : "";
    s += plan::dtypeName(c.operands[i].dtype);
  }
  return s + ")";
}

/// `c` as a one-kernel plan (inputs in0.., outputs out0..) whose entry
/// point is `entry`.
std::vector<uint8_t> planOf(const Case &c, const std::string &entry) {
  PlanBuilder b;
  std::vector<uint32_t> in, out;
  for (size_t i = 0; i < c.operands.size(); ++i)
    in.push_back(b.input("in" + std::to_string(i), c.operands[i].dtype, c.operands[i].shape));
  for (size_t i = 0; i < c.results.size(); ++i)
    out.push_back(b.output("out" + std::to_string(i), c.results[i].dtype, c.results[i].shape));
  b.kernel(c.kind, in, out, c.attrs);
  b.entry(entry);
  return b.bytes();
}

} // namespace test
} // namespace mptrt
