//===- EinsumImport.cpp - Einsum as transposes, sums and matmuls ----------===//
//
// Einsum as the ops MPT has, so that it trains with their gradients and
// runs on every backend:
//
//   1. each operand on its own: a label repeated within it keeps its
//      diagonal (x times an identity along the two axes, summed over the
//      second); an axis of 1 that broadcasts against the label's size
//      elsewhere is expanded; the labels that no other operand and not the
//      output have are summed;
//   2. the operands are contracted left to right, each pair as one matmul:
//      the labels both have and a later operand or the output needs are
//      batch axes, the other labels both have are contracted, each side's
//      own labels are its rows or columns: transposes and reshapes make
//      (batch, M, K) x (batch, K, N), and a reshape splits M and N again;
//   3. a transpose puts the result's labels in the output's order.
//
// Ellipses are labels of their own (right-aligned across the operands, as
// numpy broadcasts them). The implicit output (no "->") is the ellipsis
// followed by the labels that occur once, in alphabetical order.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// A label: a letter's character code, or an ellipsis axis (0, 1, ...,
/// below every letter, so that sorted labels put the ellipsis first).
using Label = int64_t;
constexpr Label kFirstLetter = 'A';

/// One operand of the contraction: a value and the label of each axis.
struct Operand {
  Value value;
  SmallVector<Label> labels;
};

std::string labelName(Label l) {
  return l >= kFirstLetter ? std::string(1, static_cast<char>(l))
                           : "... axis " + std::to_string(l);
}

/// The equation's terms: one per input, and the output's.
struct Equation {
  SmallVector<SmallVector<Label>> inputs;
  SmallVector<Label> output;
};

/// Parses one term into labels; `ellipsisRank` axes replace its "...",
/// numbered so that they end at `totalEllipsis` (right-aligned).
FailureOr<SmallVector<Label>> parseTerm(NodeContext &c, StringRef term,
                                        StringRef equation, int64_t rank,
                                        int64_t totalEllipsis, bool isOutput) {
  SmallVector<Label> labels;
  int64_t letters = llvm::count_if(term, llvm::isAlpha);
  size_t dots = term.find("...");
  if (dots != StringRef::npos && term.find("...", dots + 3) != StringRef::npos)
    return c.emitError() << "equation '" << equation
                         << "' has more than one ellipsis in a term",
           failure();
  int64_t ellipsisRank = 0;
  if (dots != StringRef::npos)
    ellipsisRank = isOutput ? totalEllipsis : rank - letters;
  if (!isOutput &&
      (ellipsisRank < 0 || (dots == StringRef::npos && letters != rank)))
    return c.emitError() << "equation '" << equation << "': term '" << term
                         << "' does not match an input of rank " << rank,
           failure();
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t e = 0; e < ellipsisRank; ++e)
        labels.push_back(totalEllipsis - ellipsisRank + e);
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(term[i]))
      return c.emitError() << "equation '" << equation
                           << "' has a character that is not a letter ('"
                           << term[i] << "')",
             failure();
    labels.push_back(term[i]);
  }
  return labels;
}

FailureOr<Equation> parseEquation(NodeContext &c, StringRef text) {
  std::string compact;
  for (char ch : text)
    if (!llvm::isSpace(ch))
      compact += ch;
  StringRef eq(compact);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != c.numInputs())
    return c.emitError() << "equation '" << text << "' has " << terms.size()
                         << " input terms for " << c.numInputs() << " inputs",
           failure();
  int64_t totalEllipsis = 0;
  for (auto [i, term] : llvm::enumerate(terms))
    if (term.contains("..."))
      totalEllipsis = std::max<int64_t>(
          totalEllipsis,
          c.inputType(i).getRank() - llvm::count_if(term, llvm::isAlpha));
  Equation e;
  std::map<Label, int> counts;
  for (auto [i, term] : llvm::enumerate(terms)) {
    auto labels = parseTerm(c, term, text, c.inputType(i).getRank(),
                            totalEllipsis, /*isOutput=*/false);
    if (failed(labels))
      return failure();
    for (Label l : *labels)
      ++counts[l];
    e.inputs.push_back(std::move(*labels));
  }
  if (explicitOutput) {
    auto labels = parseTerm(c, rhs, text, 0, totalEllipsis, /*isOutput=*/true);
    if (failed(labels))
      return failure();
    e.output = std::move(*labels);
    llvm::SmallSet<Label, 8> seen;
    for (Label l : e.output) {
      if (!counts.count(l))
        return c.emitError() << "equation '" << text << "': output label '"
                             << labelName(l) << "' is in no input",
               failure();
      if (!seen.insert(l).second)
        return c.emitError() << "equation '" << text << "': output label '"
                             << labelName(l) << "' occurs twice",
               failure();
    }
    return e;
  }
  // Implicit: the ellipsis, then the letters that occur once, sorted (the
  // map's order).
  for (auto [l, count] : counts)
    if (l < kFirstLetter || count == 1)
      e.output.push_back(l);
  return e;
}

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

FailureOr<Value> reshape(NodeContext &c, Value v, ArrayRef<int64_t> shape) {
  return c.createTyped<ReshapeOp>(RankedTensorType::get(shape, elementOf(v)),
                                  {v})[0];
}

FailureOr<Value> sumAxes(NodeContext &c, Value v, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return v;
  return c.create1<ReduceSumOp>(
      {v}, {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
            c.named("keepdims", c.b.getBoolAttr(false))});
}

/// `x` with its axes ordered as `order` (labels it has).
FailureOr<Value> permute(NodeContext &c, Operand &x, ArrayRef<Label> order) {
  SmallVector<int64_t> perm;
  for (Label l : order)
    perm.push_back(llvm::find(x.labels, l) - x.labels.begin());
  auto moved = c.create1<TransposeOp>(
      {x.value}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
  if (failed(moved))
    return failure();
  x.value = *moved;
  x.labels.assign(order.begin(), order.end());
  return *moved;
}

/// Keeps the diagonal of the first label that `x` repeats, until none is:
/// x * I (the identity along axes p and q) summed over q.
LogicalResult takeDiagonals(NodeContext &c, Operand &x) {
  for (;;) {
    int64_t p = -1, q = -1;
    for (size_t i = 0; i < x.labels.size() && p < 0; ++i)
      for (size_t j = i + 1; j < x.labels.size(); ++j)
        if (x.labels[i] == x.labels[j]) {
          p = i, q = j;
          break;
        }
    if (p < 0)
      return success();
    int64_t n = shapeOf(x.value)[p];
    if (shapeOf(x.value)[q] != n)
      return c.emitError() << "label '" << labelName(x.labels[p])
                           << "' is repeated on axes of " << n << " and "
                           << shapeOf(x.value)[q] << " elements";
    SmallVector<int64_t> shape(x.labels.size(), 1);
    shape[p] = shape[q] = n;
    SmallVector<float> identity(n * n, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      identity[i * n + i] = 1.0f;
    auto f32 = RankedTensorType::get(shape, c.b.getF32Type());
    Value eye = ConstantOp::create(
                    c.b, c.loc, DenseElementsAttr::get(f32, ArrayRef(identity)))
                    .getResult();
    if (elementOf(x.value) != c.b.getF32Type())
      eye = c.createTyped<CastOp>(f32.clone(elementOf(x.value)), {eye})[0];
    auto masked = c.create1<MulOp>({x.value, eye});
    if (failed(masked))
      return failure();
    auto diagonal = sumAxes(c, *masked, {q});
    if (failed(diagonal))
      return failure();
    x.value = *diagonal;
    x.labels.erase(x.labels.begin() + q);
  }
}

/// Contracts `a` with `b` into one operand whose labels are the batch
/// labels, then a's own, then b's own; `needed` are the labels a later
/// operand or the output has.
FailureOr<Operand> contract(NodeContext &c, Operand a, Operand b,
                            const llvm::SmallSetVector<Label, 8> &needed,
                            const std::map<Label, int64_t> &sizes) {
  SmallVector<Label> batch, contracted, aOwn, bOwn;
  for (Label l : a.labels) {
    if (!llvm::is_contained(b.labels, l))
      aOwn.push_back(l);
    else if (needed.contains(l))
      batch.push_back(l);
    else
      contracted.push_back(l);
  }
  for (Label l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      bOwn.push_back(l);
  auto product = [&](ArrayRef<Label> labels) {
    int64_t n = 1;
    for (Label l : labels)
      n *= sizes.at(l);
    return n;
  };
  SmallVector<int64_t> batchShape;
  for (Label l : batch)
    batchShape.push_back(sizes.at(l));
  const int64_t m = product(aOwn), k = product(contracted), n = product(bOwn);
  SmallVector<Label> aOrder(batch), bOrder(batch);
  llvm::append_range(aOrder, aOwn);
  llvm::append_range(aOrder, contracted);
  llvm::append_range(bOrder, contracted);
  llvm::append_range(bOrder, bOwn);
  if (failed(permute(c, a, aOrder)) || failed(permute(c, b, bOrder)))
    return failure();
  SmallVector<int64_t> aShape(batchShape), bShape(batchShape);
  aShape.append({m, k});
  bShape.append({k, n});
  auto lhs = reshape(c, a.value, aShape);
  auto rhs = reshape(c, b.value, bShape);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto matmul = c.create1<MatMulOp>(
      {*lhs, *rhs},
      {c.named("operandSegmentSizes", c.b.getDenseI32ArrayAttr({1, 1, 0, 0}))});
  if (failed(matmul))
    return failure();
  Operand result;
  result.labels = batch;
  llvm::append_range(result.labels, aOwn);
  llvm::append_range(result.labels, bOwn);
  SmallVector<int64_t> shape;
  for (Label l : result.labels)
    shape.push_back(sizes.at(l));
  auto split = reshape(c, *matmul, shape);
  if (failed(split))
    return failure();
  result.value = *split;
  return result;
}

LogicalResult importEinsum(NodeContext &c) {
  std::string text = c.getString("equation", "");
  auto equation = parseEquation(c, text);
  if (failed(equation))
    return failure();
  Type element = c.inputType(0).getElementType();
  if (c.numInputs() > 1 && !isa<FloatType>(element)) {
    std::string type;
    llvm::raw_string_ostream(type) << element;
    return c.unsupported("equation '" + text + "' contracts " + type +
                         " operands (the contractions are matmuls, which "
                         "take floats)");
  }
  // Each label's size: the largest of its axes, the others 1 or equal.
  std::map<Label, int64_t> sizes;
  for (auto [i, labels] : llvm::enumerate(equation->inputs))
    for (auto [axis, l] : llvm::enumerate(labels)) {
      int64_t dim = c.inputType(i).getDimSize(axis);
      auto [it, inserted] = sizes.try_emplace(l, dim);
      if (inserted || it->second == dim || dim == 1)
        continue;
      if (it->second != 1)
        return c.emitError()
               << "equation '" << text << "': label '" << labelName(l)
               << "' has sizes " << it->second << " and " << dim;
      it->second = dim;
    }

  SmallVector<Operand> operands;
  for (auto [i, labels] : llvm::enumerate(equation->inputs))
    operands.push_back({c.input(i), labels});
  // The labels needed after operand i: the output's and those of the
  // operands after it.
  auto neededAfter = [&](size_t i) {
    llvm::SmallSetVector<Label, 8> needed;
    needed.insert(equation->output.begin(), equation->output.end());
    for (size_t j = i + 1; j < operands.size(); ++j)
      needed.insert(operands[j].labels.begin(), operands[j].labels.end());
    return needed;
  };
  for (auto [i, x] : llvm::enumerate(operands)) {
    if (failed(takeDiagonals(c, x)))
      return failure();
    SmallVector<int64_t> full;
    for (Label l : x.labels)
      full.push_back(sizes.at(l));
    if (ArrayRef<int64_t>(full) != shapeOf(x.value))
      x.value = c.createTyped<ExpandOp>(
          RankedTensorType::get(full, elementOf(x.value)), {x.value})[0];
    // Sum what no other operand and not the output has.
    llvm::SmallSetVector<Label, 8> elsewhere;
    elsewhere.insert(equation->output.begin(), equation->output.end());
    for (auto [j, other] : llvm::enumerate(operands))
      if (j != i)
        elsewhere.insert(other.labels.begin(), other.labels.end());
    SmallVector<int64_t> summed;
    SmallVector<Label> kept;
    for (auto [axis, l] : llvm::enumerate(x.labels)) {
      if (elsewhere.contains(l))
        kept.push_back(l);
      else
        summed.push_back(axis);
    }
    auto reduced = sumAxes(c, x.value, summed);
    if (failed(reduced))
      return failure();
    x.value = *reduced;
    x.labels = kept;
  }
  Operand acc = operands.front();
  for (size_t i = 1; i < operands.size(); ++i) {
    auto next = contract(c, acc, operands[i], neededAfter(i), sizes);
    if (failed(next))
      return failure();
    acc = *next;
  }
  auto result = permute(c, acc, equation->output);
  if (failed(result))
    return failure();
  c.setResults(*result);
  return success();
}

} // namespace

void registerEinsumImporters(OpImporterTable &t) {
  t.add("Einsum", {12, importEinsum});
}

} // namespace mpt::onnx_import
