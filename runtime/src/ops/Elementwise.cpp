//===- Elementwise.cpp - decoders for elementwise kernels ----------------===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

#include <cmath>
#include <cstring>

namespace mptrt {
namespace rt {

Status makeBroadcast(const std::vector<const TensorDesc *> &inputs, const TensorDesc &out,
                     bool exact, BroadcastIndex *bc) {
  const int rank = out.rank();
  bc->rank = rank;
  bc->numInputs = static_cast<int>(inputs.size());
  bc->numel = out.numel;
  for (int d = 0; d < rank; ++d)
    bc->outShape[d] = out.shape[d];
  // The numpy broadcast of the inputs, to compare with `out` if `exact`.
  std::vector<int64_t> joint(rank, 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorDesc &in = *inputs[i];
    if (in.rank() > rank)
      return Status::error("operand " + std::to_string(i) + " (" + describe(in) +
                           ") has a higher rank than the result (" + describe(out) + ")");
    bc->sameShape[i] = in.shape == out.shape;
    // Right-align the input's axes with the output's.
    const int lead = rank - in.rank();
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t dim = d >= lead ? in.shape[d - lead] : 1;
      if (dim != 1 && dim != out.shape[d])
        return Status::error("operand " + std::to_string(i) + " (" + describe(in) +
                             ") does not broadcast to the result (" + describe(out) + ")");
      bc->strides[i][d] = dim == 1 ? 0 : stride;
      stride *= dim;
      if (dim != 1)
        joint[d] = dim;
    }
  }
  if (exact && joint != out.shape)
    return Status::error("result (" + describe(out) +
                         ") is not the broadcast of the operands' shapes");
  return Status::ok();
}

//===----------------------------------------------------------------------===//

namespace {

struct UnaryKind {
  const char *name;
  UnaryOp op;
  bool allowsInt;
};

const UnaryKind kUnaryKinds[] = {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  {kernel ? #kind : nullptr, UnaryOp::Name, integer != 0},
#include "mptrt/generated/UnaryKinds.def"
};

/// The functions' float parameters, with their defaults.
struct UnaryParamRow {
  UnaryOp op;
  const char *name;
  double defaultValue;
};
const UnaryParamRow kUnaryParams[] = {
#define MPTRT_UNARY_PARAM(Name, kind, param, value) {UnaryOp::Name, #param, value},
#include "mptrt/generated/UnaryKinds.def"
};

bool hasUnaryParams(UnaryOp op) {
  for (const UnaryParamRow &row : kUnaryParams)
    if (row.op == op)
      return true;
  return false;
}

} // namespace

Status readUnaryParams(const KernelView &v, UnaryOp op, float *alpha, float *beta, float *gamma) {
  for (const UnaryParamRow &row : kUnaryParams) {
    if (row.op != op)
      continue;
    float *slot = std::strcmp(row.name, "alpha") == 0  ? alpha
                  : std::strcmp(row.name, "beta") == 0 ? beta
                                                       : gamma;
    double value;
    MPTRT_TRY(v.getFloat(row.name, row.defaultValue, &value));
    *slot = static_cast<float>(value);
  }
  return Status::ok();
}

Status decodeUnary(const KernelView &v, UnaryParams *p) {
  const UnaryKind *kind = nullptr;
  for (const UnaryKind &k : kUnaryKinds)
    if (k.name && v.kind() == k.name)
      kind = &k;
  if (!kind)
    return v.error("not an elementwise unary kind");
  p->op = kind->op;
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  const TensorDesc &in = v.operand(0), &out = v.result(0);
  if (in.shape != out.shape)
    return v.error(resultLabel(v, 0) + " must have the shape of " + operandLabel(v, 0));

  switch (p->op) {
  case UnaryOp::LeakyRelu: {
    MPTRT_TRY(v.allowOnly({"alpha"}));
    double alpha;
    MPTRT_TRY(v.getFloat("alpha", 0.01, &alpha));
    p->alpha = static_cast<float>(alpha);
    break;
  }
  case UnaryOp::Gelu: {
    MPTRT_TRY(v.allowOnly({"approximate"}));
    std::string approximate;
    MPTRT_TRY(v.getString("approximate", "none", &approximate));
    if (approximate == "tanh")
      p->op = UnaryOp::GeluTanh;
    else if (approximate != "none")
      return v.error("attribute 'approximate' must be \"none\" or \"tanh\", not \"" + approximate +
                     "\"");
    break;
  }
  case UnaryOp::Clip:
    MPTRT_TRY(v.allowOnly({"min", "max"}));
    p->hasMin = v.has("min");
    p->hasMax = v.has("max");
    MPTRT_TRY(v.getFloat("min", 0, &p->clipMin));
    MPTRT_TRY(v.getFloat("max", 0, &p->clipMax));
    if (std::isnan(p->clipMin) || std::isnan(p->clipMax))
      return v.error("clip bounds must not be NaN");
    break;
  default:
    // Only the float parameters its record declares (KernelSchema.def).
    MPTRT_TRY(hasUnaryParams(p->op) ? v.allowSchemaAttributes() : v.allowOnly({}));
    MPTRT_TRY(readUnaryParams(v, p->op, &p->alpha, &p->beta, &p->gamma));
    break;
  }

  if (p->op == UnaryOp::Not) {
    if (in.dtype != DType::I1 || out.dtype != DType::I1)
      return v.error("operand and result must be i1");
    p->integer = true;
    return Status::ok();
  }
  if (isFloat(in) && isFloat(out))
    return Status::ok();
  if (kind->allowsInt && isInt(in) && in.dtype == out.dtype) {
    p->integer = true;
    return Status::ok();
  }
  return v.error(std::string("operand and result must both be float") +
                 (kind->allowsInt ? ", or the same integer type" : "") + "; got " + describe(in) +
                 " -> " + describe(out));
}

//===----------------------------------------------------------------------===//

Status decodeBinary(const KernelView &v, BinaryParams *p) {
  static const struct {
    const char *name;
    BinaryOp op;
  } kinds[] = {
#define MPTRT_BINARY_ROW(Name, kind) {#kind, BinaryOp::Name},
      MPTRT_BINARY_OPS(MPTRT_BINARY_ROW)
#undef MPTRT_BINARY_ROW
  };
  bool found = false;
  for (const auto &k : kinds)
    if (v.kind() == k.name) {
      p->op = k.op;
      found = true;
    }
  if (!found)
    return v.error("not an elementwise binary kind");
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  const TensorDesc &lhs = v.operand(0), &rhs = v.operand(1), &out = v.result(0);
  const bool compare =
      p->op == BinaryOp::Equal || p->op == BinaryOp::Less || p->op == BinaryOp::Greater;
  const bool lhsInt = !isFloat(lhs), rhsInt = !isFloat(rhs);
  if (compare) {
    if (out.dtype != DType::I1)
      return v.error(resultLabel(v, 0) + " of a comparison must be i1");
    // Integers and booleans compare exactly in int64, anything else in f32.
    p->integer = lhsInt && rhsInt;
  } else if (isFloat(out)) {
    if (lhs.dtype == DType::I1 || rhs.dtype == DType::I1)
      return v.error("arithmetic on i1 operands is not supported");
    p->integer = false; // integer operands are converted to f32
  } else if (isInt(out) && isInt(lhs) && isInt(rhs)) {
    p->integer = true;
  } else {
    return v.error("operands " + describe(lhs) + ", " + describe(rhs) + " and result " +
                   describe(out) + ": an integer result needs integer operands");
  }
  return makeBroadcast({&lhs, &rhs}, out, /*exact=*/true, &p->bc);
}

Status decodeWhere(const KernelView &v, WhereParams *p) {
  MPTRT_TRY(v.expectCounts(3, 3, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  const TensorDesc &cond = v.operand(0), &x = v.operand(1), &y = v.operand(2), &out = v.result(0);
  if (cond.dtype != DType::I1)
    return v.error(operandLabel(v, 0) + " (the condition) must be i1");
  if (x.dtype != out.dtype || y.dtype != out.dtype)
    return v.error("x, y and the result must have one element type; got " + describe(x) + ", " +
                   describe(y) + " -> " + describe(out));
  p->elementSize = out.elementSize();
  return makeBroadcast({&cond, &x, &y}, out, /*exact=*/true, &p->bc);
}

Status decodeCast(const KernelView &v, CastParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"saturate"}));
  MPTRT_TRY(v.getBool("saturate", false, &p->saturate));
  if (v.operand(0).shape != v.result(0).shape)
    return v.error(resultLabel(v, 0) + " must have the shape of " + operandLabel(v, 0));
  p->numel = v.result(0).numel;
  return Status::ok();
}

Status decodeQuantize(const KernelView &v, QuantizeParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  const TensorDesc &x = v.operand(0), &scale = v.operand(1), &y = v.result(0);
  if (!isFloat(x))
    return v.error(operandLabel(v, 0) + " must be a float tensor");
  if (scale.dtype != DType::F32 || !scale.shape.empty())
    return v.error(operandLabel(v, 1) + " (the scale) must be a 0-d f32 tensor");
  if (y.dtype != DType::F8E4M3FN && y.dtype != DType::F8E5M2)
    return v.error(resultLabel(v, 0) + " must be f8E4M3FN or f8E5M2");
  if (x.shape != y.shape)
    return v.error(resultLabel(v, 0) + " must have the shape of " + operandLabel(v, 0));
  p->numel = y.numel;
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
