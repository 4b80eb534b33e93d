//===- RefOpsReduction.cpp - reduce_sum, reduce_mean, reduce_max, l2 ------===//
//
// Reductions over `axes` (all axes when empty; negative allowed). keepdims
// only changes the result's shape, which the result type gives.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

enum class Reduction { Sum, Mean, Max, L2 };

RefEvaluator reduce(Reduction kind) {
  return [kind](Operation *op, ArrayRef<RefTensor> operands,
                std::vector<RefTensor> &results) -> LogicalResult {
    const RefTensor &x = operands[0];
    std::vector<int64_t> axes =
        optionalIntListAttr(op, "axes").value_or(std::vector<int64_t>{});
    std::vector<bool> reduced(x.rank(), axes.empty());
    for (int64_t axis : axes) {
      std::optional<int64_t> a = normalizeAxis(axis, x.rank());
      if (!a)
        return fail(op, "axis " + Twine(axis) + " out of range");
      reduced[*a] = true;
    }
    // Accumulate into the keepdims shape.
    std::vector<int64_t> kept = x.shape;
    for (int64_t axis = 0; axis < x.rank(); ++axis)
      if (reduced[axis])
        kept[axis] = 1;
    std::vector<int64_t> keptStrides = stridesOf(kept);
    double init =
        kind == Reduction::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    std::vector<double> acc(product(kept), init);
    int64_t flat = 0;
    forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
      int64_t out = 0;
      for (int64_t axis = 0; axis < x.rank(); ++axis)
        if (!reduced[axis])
          out += index[axis] * keptStrides[axis];
      double v = x.data[flat++];
      double &a = acc[out];
      switch (kind) {
      case Reduction::Sum:
      case Reduction::Mean:
        a += v;
        break;
      case Reduction::Max:
        a = std::isnan(v) || std::isnan(a) ? v + a : std::max(a, v);
        break;
      case Reduction::L2:
        a += v * v;
        break;
      }
    });
    double count = static_cast<double>(x.numElements()) /
                   static_cast<double>(std::max<size_t>(acc.size(), 1));
    for (double &a : acc) {
      if (kind == Reduction::Mean)
        a /= count;
      else if (kind == Reduction::L2)
        a = std::sqrt(a);
    }
    results.emplace_back(resultShape(op, 0), std::move(acc));
    return success();
  };
}

} // namespace

void addReductionOps(RefOpTable &table) {
  table["mpt.reduce_sum"] = reduce(Reduction::Sum);
  table["mpt.reduce_mean"] = reduce(Reduction::Mean);
  table["mpt.reduce_max"] = reduce(Reduction::Max);
  table["mpt.reduce_l2"] = reduce(Reduction::L2);
}

} // namespace mpt::ref
