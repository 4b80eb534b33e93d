//===- RecurrentImport.cpp - ONNX RNN, GRU and LSTM, unrolled -------------===//
//
// A recurrent node becomes the mpt ops of its equations, unrolled over the
// sequence, whose length the input's static shape gives: autodiff then
// derives the backward pass (back-propagation through time) from those ops,
// and each of them keeps its own precision policy. The input projection of
// every step is one matmul over the whole sequence; each step adds its
// hidden state's projection, then the gates.
//
// Supported: every direction (forward, reverse, bidirectional), both
// layouts, the bias, initial states, LSTM peepholes, `clip`, GRU's
// `linear_before_reset`, and as activations the unary functions imported
// from ONNX operators.
// `sequence_lens` must be a constant equal to the sequence length for every
// batch entry (shorter sequences would make the unrolled graph depend on
// data). Anything else is reported as unsupported, naming the attribute.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

#include <functional>

using namespace mlir;

namespace mpt::onnx_import {
namespace {

enum class Cell { RNN, GRU, LSTM };

/// The gates of each cell: RNN's one, GRU's z, r, h, LSTM's i, o, f, c.
unsigned gateCount(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
}

/// The activations per direction: RNN's f, GRU's f and g, LSTM's f, g, h.
unsigned activationCount(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
}

/// The builder of one recurrent node.
class Recurrence {
public:
  Recurrence(NodeContext &c, Cell cell) : c(c), cell(cell) {}

  LogicalResult import();

private:
  using Activation = std::function<FailureOr<Value>(Value)>;

  Type elementType() const { return c.inputType(0).getElementType(); }
  RankedTensorType type(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elementType());
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return c.createTyped<ReshapeOp>(type(shape), {v})[0];
  }
  FailureOr<Value> transpose(Value v, ArrayRef<int64_t> perm) {
    return c.create1<TransposeOp>(
        {v}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
  }
  /// `v[lo:hi]` along `axis`, the other axes whole.
  FailureOr<Value> sliceAxis(Value v, int64_t axis, int64_t lo, int64_t hi) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
        steps(shape.size(), 1);
    starts[axis] = lo;
    ends[axis] = hi;
    return c.slice(v, starts, ends, steps);
  }
  /// Direction `d`'s row of `packed` ([dirs, count * size]: B's [Wb, Rb],
  /// P's [Pi, Po, Pf]) cut into its `count` vectors of `size`.
  FailureOr<SmallVector<Value>> directionParts(Value packed, int64_t d,
                                               int64_t count, int64_t size) {
    auto row = sliceAxis(packed, 0, d, d + 1);
    if (failed(row))
      return failure();
    Value flat = reshape(*row, {count * size});
    SmallVector<Value> parts;
    for (int64_t i = 0; i < count; ++i) {
      auto part = sliceAxis(flat, 0, i * size, (i + 1) * size);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    return parts;
  }
  /// a x b, 2-d, without FP8 scales.
  FailureOr<Value> matmul(Value a, Value b) {
    return c.create1<MatMulOp>(
        {a, b}, {c.named("operandSegmentSizes",
                         c.b.getDenseI32ArrayAttr({1, 1, 0, 0}))});
  }
  Value zeros(ArrayRef<int64_t> shape) {
    return grad::zeros(c.b, c.loc, type(shape));
  }

  LogicalResult readAttributes();
  FailureOr<Activation> activation(StringRef name);
  FailureOr<Value> clipped(Value v);
  /// One direction's outputs: every step's hidden state [S, B, H] and the
  /// last hidden and cell states [B, H].
  struct DirectionResult {
    Value sequence, lastHidden, lastCell;
  };
  FailureOr<DirectionResult> direction(int64_t d, bool reverse, Value x);

  NodeContext &c;
  const Cell cell;
  int64_t hidden = 0, seq = 0, batch = 0, inputSize = 0, directions = 1;
  std::string directionName;
  bool batchMajor = false;
  bool linearBeforeReset = false;
  std::optional<double> clip;
  SmallVector<Activation> activations;
};

/// An activation is named as the ONNX operator of that function: any unary
/// function whose record imports an ONNX operator (UnaryKinds.def's import
/// rows), with its parameters' defaults, which are the ONNX operator's and
/// the recurrent ops' (activation_alpha and _beta are refused).
FailureOr<Recurrence::Activation> Recurrence::activation(StringRef name) {
#define MPTRT_UNARY_IMPORT(Name, OnnxName, sinceOpset)                         \
  if (name.equals_insensitive(#OnnxName))                                      \
    return Activation([this](Value v) { return c.create1<Name##Op>({v}); });
#include "mptrt/generated/UnaryKinds.def"
  (void)c.unsupported("activation '" + name +
                      "' (an ONNX unary function MPT imports is expected)");
  return failure();
}

LogicalResult Recurrence::readAttributes() {
  hidden = c.getInt("hidden_size", 0);
  if (hidden <= 0)
    return c.emitError() << "hidden_size must be given and positive";
  directionName = c.getString("direction", "forward");
  if (directionName == "bidirectional")
    directions = 2;
  else if (directionName != "forward" && directionName != "reverse")
    return c.emitError() << "direction must be forward, reverse or "
                            "bidirectional, got '"
                         << directionName << "'";
  batchMajor = c.getInt("layout", 0) != 0;
  if (cell == Cell::GRU)
    linearBeforeReset = c.getInt("linear_before_reset", 0) != 0;
  if (cell == Cell::LSTM && c.getInt("input_forget", 0) != 0)
    return c.unsupported("input_forget=1 (coupled input and forget gates)");
  if (c.hasAttr("clip"))
    clip = c.getFloat("clip", 0.0f);
  if (c.hasAttr("activation_alpha") || c.hasAttr("activation_beta"))
    return c.unsupported("activation_alpha and activation_beta");

  // f, g (and h) per direction; the defaults are ONNX's.
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *a = c.attr("activations"))
    for (const std::string &name : a->strings())
      names.push_back(name);
  const unsigned perDirection = activationCount(cell);
  if (names.empty()) {
    for (int64_t d = 0; d < directions; ++d) {
      if (cell == Cell::RNN)
        names.push_back("Tanh");
      else
        names.append({"Sigmoid", "Tanh"});
      if (cell == Cell::LSTM)
        names.push_back("Tanh");
    }
  }
  if (static_cast<int64_t>(names.size()) != perDirection * directions)
    return c.emitError() << "activations must name "
                         << perDirection * directions << " functions, got "
                         << names.size();
  for (const std::string &name : names) {
    auto f = activation(name);
    if (failed(f))
      return failure();
    activations.push_back(*f);
  }
  return success();
}

FailureOr<Value> Recurrence::clipped(Value v) {
  if (!clip)
    return v;
  return c.create1<ClipOp>({v}, {c.named("min", c.b.getF64FloatAttr(-*clip)),
                                 c.named("max", c.b.getF64FloatAttr(*clip))});
}

FailureOr<Recurrence::DirectionResult>
Recurrence::direction(int64_t d, bool reverse, Value x) {
  const unsigned gates = gateCount(cell);
  const int64_t width = gates * hidden;
  const unsigned perDirection = activationCount(cell);
  Activation f = activations[d * perDirection];
  Activation g = cell == Cell::RNN ? f : activations[d * perDirection + 1];
  Activation h = cell == Cell::LSTM ? activations[d * perDirection + 2] : g;

  // This direction's weights, transposed for row-vector products.
  auto w = sliceAxis(c.input(1), 0, d, d + 1);
  auto r = sliceAxis(c.input(2), 0, d, d + 1);
  if (failed(w) || failed(r))
    return failure();
  auto wt = transpose(reshape(*w, {width, inputSize}), {1, 0});
  auto rt = transpose(reshape(*r, {width, hidden}), {1, 0});
  if (failed(wt) || failed(rt))
    return failure();

  // The input projection of every step at once: [S*B, I] x [I, G*H].
  auto projected = matmul(reshape(x, {seq * batch, inputSize}), *wt);
  if (failed(projected))
    return failure();
  Value xw = reshape(*projected, {seq, batch, width});

  // The biases: Wb, and Rb, which GRU's linear_before_reset keeps apart for
  // the candidate gate.
  Value rbCandidate;
  if (c.hasInput(3)) {
    auto parts = directionParts(c.input(3), d, 2, width);
    if (failed(parts))
      return failure();
    Value wb = (*parts)[0], rb = (*parts)[1];
    Value bias = wb;
    if (cell == Cell::GRU && linearBeforeReset) {
      // z and r take both biases; the candidate's Rb goes inside r * (...).
      auto rbGates = sliceAxis(rb, 0, 0, 2 * hidden);
      auto rbH = sliceAxis(rb, 0, 2 * hidden, width);
      if (failed(rbGates) || failed(rbH))
        return failure();
      auto padded =
          c.create1<ConcatOp>({*rbGates, zeros({hidden})},
                              {c.named("axis", c.b.getI64IntegerAttr(0))});
      if (failed(padded))
        return failure();
      auto sum = c.create1<AddOp>({wb, *padded});
      if (failed(sum))
        return failure();
      bias = *sum;
      rbCandidate = *rbH;
    } else {
      auto sum = c.create1<AddOp>({wb, rb});
      if (failed(sum))
        return failure();
      bias = *sum;
    }
    auto biased = c.create1<AddOp>({xw, bias});
    if (failed(biased))
      return failure();
    xw = *biased;
  }

  // Peepholes (LSTM): P = [Pi, Po, Pf].
  Value pi, po, pf;
  if (cell == Cell::LSTM && c.hasInput(7)) {
    auto parts = directionParts(c.input(7), d, 3, hidden);
    if (failed(parts))
      return failure();
    pi = (*parts)[0], po = (*parts)[1], pf = (*parts)[2];
  }

  // Initial states, [num_directions, B, H] (batch-major: [B, dirs, H]).
  auto initial = [&](unsigned input) -> FailureOr<Value> {
    if (!c.hasInput(input))
      return zeros({batch, hidden});
    auto s = sliceAxis(c.input(input), batchMajor ? 1 : 0, d, d + 1);
    if (failed(s))
      return failure();
    return reshape(*s, {batch, hidden});
  };
  auto h0 = initial(5);
  if (failed(h0))
    return failure();
  Value hPrev = *h0, cPrev;
  if (cell == Cell::LSTM) {
    auto c0 = initial(6);
    if (failed(c0))
      return failure();
    cPrev = *c0;
  }

  auto gate = [&](Value v, unsigned k) {
    return sliceAxis(v, 1, k * hidden, (k + 1) * hidden);
  };
  auto add = [&](Value a, Value b) { return c.create1<AddOp>({a, b}); };
  auto mul = [&](Value a, Value b) { return c.create1<MulOp>({a, b}); };
  // act(clip(v)), the gates' nonlinearity.
  auto apply = [&](const Activation &act, Value v) -> FailureOr<Value> {
    auto cl = clipped(v);
    if (failed(cl))
      return failure();
    return act(*cl);
  };

  SmallVector<Value> steps(seq);
  for (int64_t i = 0; i < seq; ++i) {
    int64_t t = reverse ? seq - 1 - i : i;
    auto xt = sliceAxis(xw, 0, t, t + 1);
    if (failed(xt))
      return failure();
    Value xwT = reshape(*xt, {batch, width});
    Value hNext, cNext;
    if (cell == Cell::GRU) {
      // R is split: z and r use H_{t-1} R^T; the candidate uses r * H or
      // r * (H Rh^T + Rbh).
      auto rzr = sliceAxis(*rt, 1, 0, 2 * hidden);
      auto rh = sliceAxis(*rt, 1, 2 * hidden, width);
      if (failed(rzr) || failed(rh))
        return failure();
      auto hrZr = matmul(hPrev, *rzr);
      auto xZr = sliceAxis(xwT, 1, 0, 2 * hidden);
      auto xH = sliceAxis(xwT, 1, 2 * hidden, width);
      if (failed(hrZr) || failed(xZr) || failed(xH))
        return failure();
      auto zr = add(*xZr, *hrZr);
      if (failed(zr))
        return failure();
      auto zPre = gate(*zr, 0), rPre = gate(*zr, 1);
      if (failed(zPre) || failed(rPre))
        return failure();
      auto z = apply(f, *zPre), rg = apply(f, *rPre);
      if (failed(z) || failed(rg))
        return failure();
      FailureOr<Value> inner;
      if (linearBeforeReset) {
        auto hr = matmul(hPrev, *rh);
        if (failed(hr))
          return failure();
        FailureOr<Value> withBias = *hr;
        if (rbCandidate)
          withBias = add(*hr, rbCandidate);
        if (failed(withBias))
          return failure();
        inner = mul(*rg, *withBias);
      } else {
        auto reset = mul(*rg, hPrev);
        if (failed(reset))
          return failure();
        inner = matmul(*reset, *rh);
      }
      if (failed(inner))
        return failure();
      auto candidatePre = add(*xH, *inner);
      if (failed(candidatePre))
        return failure();
      auto candidate = apply(g, *candidatePre);
      if (failed(candidate))
        return failure();
      // H = (1 - z) * candidate + z * H_{t-1} = candidate + z * (H - candidate)
      auto diff = c.create1<SubOp>({hPrev, *candidate});
      if (failed(diff))
        return failure();
      auto kept = mul(*z, *diff);
      if (failed(kept))
        return failure();
      auto next = add(*candidate, *kept);
      if (failed(next))
        return failure();
      hNext = *next;
    } else {
      auto hr = matmul(hPrev, *rt);
      if (failed(hr))
        return failure();
      auto pre = add(xwT, *hr);
      if (failed(pre))
        return failure();
      if (cell == Cell::RNN) {
        auto next = apply(f, *pre);
        if (failed(next))
          return failure();
        hNext = *next;
      } else {
        // LSTM, gates i, o, f, c.
        auto iPre = gate(*pre, 0), oPre = gate(*pre, 1), fPre = gate(*pre, 2),
             cPre = gate(*pre, 3);
        if (failed(iPre) || failed(oPre) || failed(fPre) || failed(cPre))
          return failure();
        auto peep = [&](Value v, Value p, Value state) -> FailureOr<Value> {
          if (!p)
            return v;
          auto scaled = mul(p, state);
          if (failed(scaled))
            return failure();
          return add(v, *scaled);
        };
        auto iIn = peep(*iPre, pi, cPrev), fIn = peep(*fPre, pf, cPrev);
        if (failed(iIn) || failed(fIn))
          return failure();
        auto ig = apply(f, *iIn), fg = apply(f, *fIn), cg = apply(g, *cPre);
        if (failed(ig) || failed(fg) || failed(cg))
          return failure();
        auto keep = mul(*fg, cPrev), write = mul(*ig, *cg);
        if (failed(keep) || failed(write))
          return failure();
        auto state = add(*keep, *write);
        if (failed(state))
          return failure();
        auto oIn = peep(*oPre, po, *state);
        if (failed(oIn))
          return failure();
        auto og = apply(f, *oIn);
        auto hc = h(*state);
        if (failed(og) || failed(hc))
          return failure();
        auto next = mul(*og, *hc);
        if (failed(next))
          return failure();
        hNext = *next;
        cNext = *state;
      }
    }
    hPrev = hNext;
    if (cNext)
      cPrev = cNext;
    steps[t] = reshape(hNext, {1, batch, hidden});
  }
  auto sequence =
      c.create1<ConcatOp>(steps, {c.named("axis", c.b.getI64IntegerAttr(0))});
  if (failed(sequence))
    return failure();
  return DirectionResult{*sequence, hPrev, cPrev};
}

LogicalResult Recurrence::import() {
  if (failed(readAttributes()))
    return failure();
  RankedTensorType xType = c.inputType(0);
  if (xType.getRank() != 3)
    return c.emitError() << "X must have rank 3, got " << xType;
  Value x = c.input(0);
  if (batchMajor) {
    auto seqMajor = transpose(x, {1, 0, 2});
    if (failed(seqMajor))
      return failure();
    x = *seqMajor;
  }
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  seq = shape[0], batch = shape[1], inputSize = shape[2];
  const int64_t width = gateCount(cell) * hidden;
  auto checkWeight = [&](unsigned i, ArrayRef<int64_t> want,
                         StringRef what) -> LogicalResult {
    if (!c.hasInput(i))
      return success();
    if (c.inputType(i).getShape() != want) {
      auto diag = c.emitError() << what << " (" << c.describeInput(i)
                                << ") must have shape [";
      llvm::interleave(want, diag, "x");
      return diag << "], got " << c.inputType(i);
    }
    return success();
  };
  if (!c.hasInput(1) || !c.hasInput(2))
    return c.emitError() << "W and R are required";
  if (failed(checkWeight(1, {directions, width, inputSize}, "W")) ||
      failed(checkWeight(2, {directions, width, hidden}, "R")) ||
      failed(checkWeight(3, {directions, 2 * width}, "B")))
    return failure();
  SmallVector<int64_t> stateShape =
      batchMajor ? SmallVector<int64_t>{batch, directions, hidden}
                 : SmallVector<int64_t>{directions, batch, hidden};
  if (failed(checkWeight(5, stateShape, "initial_h")) ||
      (cell == Cell::LSTM &&
       (failed(checkWeight(6, stateShape, "initial_c")) ||
        failed(checkWeight(7, {directions, 3 * hidden}, "P")))))
    return failure();

  // sequence_lens: only the full length, for every batch entry.
  if (c.hasInput(4)) {
    auto lens = c.constantInts(4, "sequence_lens");
    if (failed(lens))
      return failure();
    for (int64_t len : *lens)
      if (len != seq)
        return c.unsupported("sequence_lens shorter than the sequence (" +
                             Twine(len) + " of " + Twine(seq) + ")");
  }

  SmallVector<DirectionResult> results;
  for (int64_t d = 0; d < directions; ++d) {
    bool reverse = directionName == "reverse" || d == 1;
    auto r = direction(d, reverse, x);
    if (failed(r))
      return failure();
    results.push_back(*r);
  }

  // Y [S, dirs, B, H] (batch-major: [B, S, dirs, H]); Y_h and Y_c
  // [dirs, B, H] (batch-major: [B, dirs, H]).
  SmallVector<Value> ys, hs, cs;
  for (const DirectionResult &r : results) {
    ys.push_back(reshape(r.sequence, {seq, 1, batch, hidden}));
    hs.push_back(reshape(r.lastHidden, {1, batch, hidden}));
    if (cell == Cell::LSTM)
      cs.push_back(reshape(r.lastCell, {1, batch, hidden}));
  }
  auto concat = [&](ArrayRef<Value> parts, int64_t axis) -> FailureOr<Value> {
    if (parts.size() == 1)
      return parts.front();
    return c.create1<ConcatOp>(parts,
                               {c.named("axis", c.b.getI64IntegerAttr(axis))});
  };
  auto y = concat(ys, 1), yh = concat(hs, 0);
  if (failed(y) || failed(yh))
    return failure();
  SmallVector<Value> outputs = {*y, *yh};
  if (cell == Cell::LSTM) {
    auto yc = concat(cs, 0);
    if (failed(yc))
      return failure();
    outputs.push_back(*yc);
  }
  if (batchMajor) {
    auto yb = transpose(outputs[0], {2, 0, 1, 3});
    if (failed(yb))
      return failure();
    outputs[0] = *yb;
    for (unsigned i = 1; i < outputs.size(); ++i) {
      auto sb = transpose(outputs[i], {1, 0, 2});
      if (failed(sb))
        return failure();
      outputs[i] = *sb;
    }
  }
  outputs.resize(std::min<size_t>(outputs.size(), c.numOutputs()));
  c.setResults(outputs);
  return success();
}

template <Cell cell> LogicalResult importRecurrent(NodeContext &c) {
  return Recurrence(c, cell).import();
}

} // namespace

void registerRecurrentImporters(OpImporterTable &t) {
  // sequence_lens (input 4) must be constant.
  t.add("RNN", {7, importRecurrent<Cell::RNN>, /*constantInputs=*/0b10000});
  t.add("GRU", {7, importRecurrent<Cell::GRU>, 0b10000});
  t.add("LSTM", {7, importRecurrent<Cell::LSTM>, 0b10000});
}

} // namespace mpt::onnx_import
