//===- PrecisionProfile.cpp - measured ranges for --assign-precision ------===//
//
// Reads the file `mpt-train --collect-ranges` writes (one entry per kernel
// result, with the ONNX node that made it) and keeps, per node, what its
// forward results measured: the largest |x| and the fraction of values that
// fp16 would flush to zero. The analysis asks it for a node's verdict in
// fp16 (PrecisionPropagation.cpp).
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;

namespace mpt::precision {

FailureOr<PrecisionProfile> PrecisionProfile::load(StringRef path,
                                                   double margin,
                                                   double flushLimit,
                                                   std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = ("cannot read the precision profile '" + path +
             "': " + buffer.getError().message())
                .str();
    return failure();
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = ("precision profile '" + path +
             "' is not JSON: " + llvm::toString(parsed.takeError()))
                .str();
    return failure();
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *results = root ? root->getArray("results") : nullptr;
  if (!results || root->getInteger("version") != 1) {
    error = ("precision profile '" + path +
             "' is not a version-1 ranges file of mpt-train "
             "--collect-ranges (no \"results\")")
                .str();
    return failure();
  }
  PrecisionProfile profile;
  profile.path = path.str();
  profile.margin = margin;
  profile.flushLimit = flushLimit;
  for (size_t i = 0; i < results->size(); ++i) {
    const llvm::json::Object *r = (*results)[i].getAsObject();
    std::optional<StringRef> node = r ? r->getString("node") : std::nullopt;
    std::optional<StringRef> phase = r ? r->getString("phase") : std::nullopt;
    std::optional<int64_t> count = r ? r->getInteger("count") : std::nullopt;
    if (!node || !phase || !count) {
      error = ("precision profile '" + path + "': result " + Twine(i) +
               " lacks node, phase or count")
                  .str();
      return failure();
    }
    // Backward values are scaled by the loss scale, which handles their
    // range; an entry without a node cannot be matched to an op.
    if (*phase != "forward" || node->empty() || *count <= 0)
      continue;
    double maxAbs = r->getNumber("max_abs").value_or(0.0);
    double flush = 0;
    if (const llvm::json::Object *f = r->getObject("flush"))
      flush = f->getNumber("fp16").value_or(0.0);
    NodeRange &range = profile.nodes[*node];
    range.maxAbs = std::max(range.maxAbs, maxAbs);
    range.flushed += flush * static_cast<double>(*count);
    range.count += static_cast<double>(*count);
  }
  return profile;
}

const PrecisionProfile::NodeRange *
PrecisionProfile::find(StringRef node) const {
  auto it = nodes.find(node);
  return it == nodes.end() ? nullptr : &it->second;
}

PrecisionProfile::Verdict PrecisionProfile::fp16Verdict(StringRef node) const {
  const NodeRange *range = find(node);
  if (!range)
    return Verdict::Fits;
  // Within `margin` doublings of fp16's largest finite value: the next
  // batches may go beyond it.
  if (range->maxAbs * std::exp2(margin) > kFP16Max)
    return Verdict::Overflows;
  if (range->count > 0 && range->flushed / range->count > flushLimit)
    return Verdict::Underflows;
  return Verdict::Fits;
}

} // namespace mpt::precision
