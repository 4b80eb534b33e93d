//===- MasterWeights.cpp - bf16 master weights of the training step ------===//
#include "MasterWeights.h"

#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;
using namespace mpt;

namespace {

/// The f32 values of an initial value (dense, or a dense resource blob).
FailureOr<SmallVector<float>> f32Values(ElementsAttr value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    auto range = dense.getValues<float>();
    return SmallVector<float>(range.begin(), range.end());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> bytes = blob->getData();
    if (bytes.size() !=
        static_cast<size_t>(value.getNumElements()) * sizeof(float))
      return failure();
    SmallVector<float> values(value.getNumElements());
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  return failure();
}

/// `value` rounded to nearest even into bf16, as an attribute of `type`.
FailureOr<Attribute> toBf16(ElementsAttr value, RankedTensorType type) {
  auto values = f32Values(value);
  if (failed(values))
    return failure();
  SmallVector<APFloat> rounded;
  rounded.reserve(values->size());
  for (float f : *values) {
    APFloat x(f);
    bool lostInfo;
    (void)x.convert(APFloat::BFloat(), APFloat::rmNearestTiesToEven, &lostInfo);
    rounded.push_back(x);
  }
  return Attribute(DenseElementsAttr::get(type, rounded));
}

} // namespace

BlockArgument mpt::findParam(func::FuncOp func, StringRef name) {
  for (BlockArgument arg : func.getArguments())
    if (auto attr = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      kParamAttrName))
      if (attr.getValue() == name)
        return arg;
  return {};
}

LogicalResult mpt::makeBf16Master(func::FuncOp func, BlockArgument param) {
  auto f32Type = cast<RankedTensorType>(param.getType());
  auto bf16Type = f32Type.clone(BFloat16Type::get(func.getContext()));
  unsigned index = param.getArgNumber();
  if (auto init =
          func.getArgAttrOfType<ElementsAttr>(index, kInitialValueAttrName)) {
    auto rounded = toBf16(init, bf16Type);
    if (failed(rounded))
      return emitError(param.getLoc(),
                       "cannot read the initial value of parameter '")
                 << func.getArgAttrOfType<StringAttr>(index, kParamAttrName)
                        .getValue()
                 << "' to round it into a bf16 master",
             failure();
    func.setArgAttr(index, kInitialValueAttrName, *rounded);
  }
  param.setType(bf16Type);
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&func.getBody().front());
  auto widened = CastOp::create(b, param.getLoc(), f32Type, param);
  widened.setInserted(true);
  param.replaceAllUsesExcept(widened.getResult(), widened);
  // The signature follows the entry block.
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getBody().getArgumentTypes(),
                                         func.getResultTypes()));
  return success();
}
