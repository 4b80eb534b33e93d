//===- DataMovementKernelTest.cpp - copies, reshapes and indexing --------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <limits>

#include <cmath>

using namespace mptrt;
using namespace mptrt::test;

namespace {

const DType kAllDTypes[] = {DType::F32,    DType::F16, DType::BF16, DType::F8E4M3FN,
                            DType::F8E5M2, DType::I64, DType::I32,  DType::I1};

// Tests the copy kinds: same bytes under a new shape; a different element
// count is rejected at load.
TEST(CopyKernels, ReshapeLike) {
  std::mt19937 rng(50);
  struct {
    const char *kind;
    std::vector<int64_t> in, out;
    std::vector<Attribute> attrs;
  } cases[] = {
      {"copy", {2, 3}, {2, 3}, {}},
      {"identity", {4}, {4}, {}},
      {"reshape", {2, 3, 4}, {6, 4}, {}},
      {"flatten", {2, 3, 4}, {2, 12}, {Attribute::makeInt("axis", 1)}},
      {"squeeze", {2, 1, 3}, {2, 3}, {Attribute::makeInts("axes", {1})}},
      {"unsqueeze", {2, 3}, {2, 3, 1}, {Attribute::makeInts("axes", {2})}},
  };
  for (auto &c : cases)
    for (DType t : kAllDTypes) {
      HostTensor x = randomTensor(t, c.in, rng);
      KernelRun r = runKernel(c.kind, {x}, {HostTensor(t, c.out)}, c.attrs);
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.outputs[0].bytes, x.bytes) << c.kind;
    }
  KernelRun r =
      runKernel("reshape", {HostTensor(DType::F32, {2, 3})}, {HostTensor(DType::F32, {7})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("as many elements"), std::string::npos) << r.error;
}

// Tests inference dropout: a copy (converting float types) and a true mask;
// training mode with a non-zero ratio is rejected at load.
TEST(DropoutKernel, Inference) {
  std::mt19937 rng(51);
  HostTensor x = randomTensor(DType::BF16, {3, 5}, rng);
  KernelRun r =
      runKernel("dropout", {x}, {HostTensor(DType::F32, {3, 5}), HostTensor(DType::I1, {3, 5})},
                {Attribute::makeFloat("ratio", 0.3)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].values(), x.values());
  EXPECT_EQ(r.outputs[1].values(), std::vector<double>(15, 1.0));
  r = runKernel("dropout", {x}, {HostTensor(DType::BF16, {3, 5})},
                {Attribute::makeInt("training", 1)});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("training-mode dropout"), std::string::npos) << r.error;
}

// Tests transpose with several permutations and element sizes.
TEST(TransposeKernel, Permutations) {
  std::mt19937 rng(52);
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  const std::vector<std::vector<int64_t>> perms = {
      {0, 1, 2, 3}, {3, 2, 1, 0}, {0, 2, 1, 3}, {1, 3, 0, 2}};
  for (const auto &perm : perms)
    for (DType t : {DType::F32, DType::BF16, DType::F8E4M3FN, DType::I64}) {
      HostTensor x = randomTensor(t, shape, rng);
      std::vector<int64_t> outShape;
      for (int64_t p : perm)
        outShape.push_back(shape[p]);
      KernelRun r = runKernel("transpose", {x}, {HostTensor(t, outShape)},
                              {Attribute::makeInts("perm", perm)});
      ASSERT_TRUE(r.ok) << r.error;
      const std::vector<int64_t> st = stridesOf(shape);
      std::vector<double> ref(x.numel());
      for (int64_t i = 0; i < x.numel(); ++i) {
        std::vector<int64_t> o = unflatten(i, outShape);
        int64_t off = 0;
        for (size_t d = 0; d < perm.size(); ++d)
          off += o[d] * st[perm[d]];
        ref[i] = x.get(off);
      }
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0));
    }
  // Without perm: the axes reversed.
  HostTensor x = randomTensor(DType::F32, {2, 3}, rng);
  KernelRun r = runKernel("transpose", {x}, {HostTensor(DType::F32, {3, 2})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].get(1), x.get(3));
}

// Tests concat along each axis and split back, with explicit and implied sizes.
TEST(ConcatSplitKernels, EveryAxis) {
  std::mt19937 rng(53);
  for (int64_t axis : {0, 1, 2, -1})
    for (DType t : {DType::F32, DType::F16, DType::I32, DType::I1}) {
      const int64_t a = axis < 0 ? axis + 3 : axis;
      std::vector<HostTensor> parts;
      std::vector<int64_t> sizes = {2, 1, 3};
      std::vector<int64_t> outShape = {2, 3, 4};
      outShape[a] = 6;
      for (int64_t s : sizes) {
        std::vector<int64_t> sh = {2, 3, 4};
        sh[a] = s;
        parts.push_back(randomTensor(t, sh, rng));
      }
      KernelRun r =
          runKernel("concat", parts, {HostTensor(t, outShape)}, {Attribute::makeInt("axis", axis)});
      ASSERT_TRUE(r.ok) << r.error;
      const HostTensor &cat = r.outputs[0];
      for (int64_t i = 0; i < cat.numel(); ++i) {
        std::vector<int64_t> idx = unflatten(i, outShape);
        int64_t p = 0, pos = idx[a];
        while (pos >= sizes[p])
          pos -= sizes[p++];
        idx[a] = pos;
        const std::vector<int64_t> ps = stridesOf(parts[p].shape);
        int64_t off = 0;
        for (int d = 0; d < 3; ++d)
          off += idx[d] * ps[d];
        ASSERT_EQ(cat.get(i), parts[p].get(off));
      }
      std::vector<HostTensor> pieces;
      for (const HostTensor &part : parts)
        pieces.push_back(HostTensor(t, part.shape));
      r = runKernel("split", {cat}, pieces,
                    {Attribute::makeInt("axis", axis), Attribute::makeInts("sizes", sizes)});
      ASSERT_TRUE(r.ok) << r.error;
      for (size_t i = 0; i < parts.size(); ++i)
        EXPECT_EQ(r.outputs[i].bytes, parts[i].bytes);
    }
  HostTensor x = randomTensor(DType::F32, {6, 2}, rng);
  KernelRun r =
      runKernel("split", {x}, {HostTensor(DType::F32, {3, 2}), HostTensor(DType::F32, {3, 2})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[1].get(0), x.get(6));
}

// Tests slice with steps far past the span (the largest and smallest
// int64, as a hostile plan may give them): one element per axis, read at
// its start, with no overflow in the index arithmetic (the plan fuzzer
// found one under UBSan); and slice_grad with the same window.
TEST(SliceKernel, HugeSteps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t small = std::numeric_limits<int64_t>::min();
  std::mt19937 rng(55);
  HostTensor x = randomTensor(DType::F32, {3, 4}, rng);
  std::vector<Attribute> attrs = {Attribute::makeInts("starts", {1, 3}),
                                  Attribute::makeInts("ends", {3, -1}),
                                  Attribute::makeInts("steps", {big, small})};
  KernelRun r = runKernel("slice", {x}, {HostTensor(DType::F32, {1, 1})}, attrs);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].get(0), x.get(1 * 4 + 3));
  HostTensor dy = randomTensor(DType::F32, {1, 1}, rng);
  KernelRun g = runKernel("slice_grad", {dy}, {HostTensor(DType::F32, {3, 4})}, attrs);
  ASSERT_TRUE(g.ok) << g.error;
  EXPECT_EQ(g.outputs[0].get(1 * 4 + 3), dy.get(0));
}

// Tests slice with positive and negative steps, empty results, all axes.
TEST(SliceKernel, Steps) {
  std::mt19937 rng(54);
  const std::vector<int64_t> shape = {5, 6, 7};
  struct {
    std::vector<int64_t> starts, ends, steps;
  } cases[] = {
      {{0, 0, 0}, {5, 6, 7}, {1, 1, 1}},       {{1, 2, 0}, {4, 6, 7}, {2, 3, 1}},
      {{4, 5, 6}, {-1, -1, -1}, {-1, -2, -3}}, {{3, 0, 2}, {1, 6, 2}, {-1, 4, 1}},
      {{2, 1, 5}, {2, 5, 0}, {1, 1, -2}},
  };
  for (auto &c : cases)
    for (DType t : {DType::F32, DType::BF16, DType::I64}) {
      std::vector<int64_t> outShape;
      for (int d = 0; d < 3; ++d) {
        const int64_t s = c.starts[d], e = c.ends[d], st = c.steps[d];
        outShape.push_back(st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st);
      }
      HostTensor x = randomTensor(t, shape, rng);
      KernelRun r =
          runKernel("slice", {x}, {HostTensor(t, outShape)},
                    {Attribute::makeInts("starts", c.starts), Attribute::makeInts("ends", c.ends),
                     Attribute::makeInts("steps", c.steps)});
      ASSERT_TRUE(r.ok) << r.error;
      const std::vector<int64_t> st = stridesOf(shape);
      std::vector<double> ref;
      int64_t n = 1;
      for (int64_t d : outShape)
        n *= d;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<int64_t> o = unflatten(i, outShape);
        int64_t off = 0;
        for (int d = 0; d < 3; ++d)
          off += (c.starts[d] + o[d] * c.steps[d]) * st[d];
        ref.push_back(x.get(off));
      }
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0));
    }
  KernelRun r = runKernel("slice", {HostTensor(DType::F32, {4})}, {HostTensor(DType::F32, {2})},
                          {Attribute::makeInts("starts", {3}), Attribute::makeInts("ends", {5}),
                           Attribute::makeInts("steps", {1})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("0 <= start <= end <= dim"), std::string::npos) << r.error;
}

// Tests gather along each axis with negative, i32 and i64 indices.
TEST(GatherKernel, EveryAxis) {
  std::mt19937 rng(55);
  const std::vector<int64_t> shape = {4, 5, 3};
  for (int64_t axis : {0, 1, 2, -2})
    for (DType it : {DType::I32, DType::I64}) {
      const int64_t a = axis < 0 ? axis + 3 : axis;
      HostTensor data = randomTensor(DType::F16, shape, rng);
      HostTensor idx = randomTensor(it, {2, 3}, rng, -shape[a], shape[a] - 1);
      std::vector<int64_t> outShape(shape.begin(), shape.begin() + a);
      outShape.insert(outShape.end(), {2, 3});
      outShape.insert(outShape.end(), shape.begin() + a + 1, shape.end());
      KernelRun r = runKernel("gather", {data, idx}, {HostTensor(DType::F16, outShape)},
                              {Attribute::makeInt("axis", axis)});
      ASSERT_TRUE(r.ok) << r.error;
      const std::vector<int64_t> st = stridesOf(shape);
      std::vector<double> ref;
      for (int64_t i = 0; i < r.outputs[0].numel(); ++i) {
        std::vector<int64_t> o = unflatten(i, outShape);
        std::vector<int64_t> src(o.begin(), o.begin() + a);
        int64_t k = idx.getInt(o[a] * 3 + o[a + 1]);
        src.push_back(k < 0 ? k + shape[a] : k);
        src.insert(src.end(), o.begin() + a + 2, o.end());
        int64_t off = 0;
        for (int d = 0; d < 3; ++d)
          off += src[d] * st[d];
        ref.push_back(data.get(off));
      }
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0)) << "axis " << axis;
    }
}

// Tests expand to a larger rank with broadcast axes.
TEST(ExpandKernel, Broadcast) {
  std::mt19937 rng(56);
  for (DType t : {DType::F32, DType::F8E5M2, DType::I64, DType::I1}) {
    HostTensor x = randomTensor(t, {3, 1}, rng);
    KernelRun r = runKernel("expand", {x}, {HostTensor(t, {2, 3, 4})});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> ref;
    for (int64_t i = 0; i < 24; ++i)
      ref.push_back(x.get((i / 4) % 3));
    EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0));
  }
}

// Tests trilu, upper and lower, with k from -2 to 2, on a batch of matrices.
TEST(TriluKernel, UpperLower) {
  std::mt19937 rng(57);
  for (bool upper : {true, false})
    for (int64_t k = -2; k <= 2; ++k)
      for (DType t : {DType::F32, DType::BF16, DType::I32}) {
        HostTensor x = randomTensor(t, {2, 4, 5}, rng);
        KernelRun r = runKernel("trilu", {x}, {HostTensor(t, {2, 4, 5})},
                                {Attribute::makeInt("upper", upper), Attribute::makeInt("k", k)});
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref;
        for (int64_t i = 0; i < x.numel(); ++i) {
          const int64_t row = (i / 5) % 4, col = i % 5;
          const bool keep = upper ? col - row >= k : col - row <= k;
          ref.push_back(keep ? x.get(i) : 0.0);
        }
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 0, 0)) << upper << " " << k;
      }
}

// Tests constant_of_shape with float and integer values.
TEST(FillKernel, ConstantOfShape) {
  KernelRun r = runKernel("constant_of_shape", {}, {HostTensor(DType::BF16, {2, 3})},
                          {Attribute::makeFloat("value", 1.5)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].values(), std::vector<double>(6, 1.5));
  r = runKernel("constant_of_shape", {}, {HostTensor(DType::I64, {3})},
                {Attribute::makeInt("value", (int64_t{1} << 60) + 1)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].getInt(2), (int64_t{1} << 60) + 1);
  r = runKernel("constant_of_shape", {}, {HostTensor(DType::F32, {2})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].values(), std::vector<double>(2, 0.0));
}

} // namespace
