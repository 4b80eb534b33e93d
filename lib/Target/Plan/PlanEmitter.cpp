//===- PlanEmitter.cpp - mptrt IR to a runtime plan file ------------------===//
//
// Walks each lowered function once, in program order, and builds the plan
// structs of runtime/include/mptrt/PlanFormat.h; the runtime's own verifier
// checks the result before it is written. Only mptrt ops are serialised:
// each kernel op's kind and attributes come from its ODS definition, through
// KernelOpInterface (the attribute table MPTRTOps.td computes).
//
//===----------------------------------------------------------------------===//
#include "mpt/Target/Plan/PlanEmitter.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/OutputRole.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mptrt/PhysicalMemory.h"
#include "mptrt/plan/Layout.h"
#include "mptrt/plan/Validation.h"
#include "mptrt/plan/Writer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mpt;
namespace plan = mptrt::plan;

namespace {

FailureOr<plan::DType> dtypeOf(Type element, Location loc) {
  if (element.isF32())
    return plan::DType::F32;
  if (element.isF16())
    return plan::DType::F16;
  if (element.isBF16())
    return plan::DType::BF16;
  if (isa<Float8E4M3FNType>(element))
    return plan::DType::F8E4M3FN;
  if (isa<Float8E5M2Type>(element))
    return plan::DType::F8E5M2;
  if (element.isSignlessInteger(64))
    return plan::DType::I64;
  if (element.isSignlessInteger(32))
    return plan::DType::I32;
  if (element.isSignlessInteger(1))
    return plan::DType::I1;
  return emitError(loc) << "element type " << element
                        << " has no plan encoding",
         failure();
}

/// The bytes of a constant or initial value, little-endian, in their own
/// type's width (i1 as one byte): a view of the attribute's own storage
/// where it holds them so (the attribute outlives the plan's writing), else
/// a converted copy.
struct ElementBytes {
  ArrayRef<uint8_t> view;
  std::vector<uint8_t> owned;
  bool isView = false;
  ArrayRef<uint8_t> bytes() const {
    return isView ? view : ArrayRef<uint8_t>(owned);
  }
  /// Appends them to the plan's constants (a view by reference) and returns
  /// their offset.
  uint64_t appendTo(plan::Plan &built) const {
    return isView ? plan::appendConstantView(built, view.data(), view.size())
                  : plan::appendConstant(built, owned.data(), owned.size());
  }
};

ArrayRef<uint8_t> asBytes(ArrayRef<char> data) {
  return ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()),
                           data.size());
}

/// Bits an element takes in a plan (i1 takes a byte).
unsigned storageBits(Type element) {
  return element.isInteger(1) ? 8 : element.getIntOrFloatBitWidth();
}

/// Fails, at `loc`, when the constant's bytes cannot be written: more than
/// a plan holds, or than this process can allocate, which the emitter would
/// fill before writing. A splat (ConstantOfShape's fill, sized by the
/// model) is checked before it is expanded.
LogicalResult checkConstantSize(ElementsAttr attr, unsigned width,
                                Location loc) {
  uint64_t bytes = 0;
  const bool overflows =
      __builtin_mul_overflow(static_cast<uint64_t>(attr.getNumElements()),
                             uint64_t(width / 8), &bytes);
  const uint64_t memory =
      mptrt::allocatableBytes() ? mptrt::allocatableBytes() : UINT64_MAX;
  if (!overflows && bytes < plan::kMaxBytes && bytes <= memory)
    return success();
  InFlightDiagnostic diag = emitError(loc) << "constant " << attr.getType();
  if (StringRef node = onnxNodeName(loc); !node.empty())
    diag << " (ONNX node '" << node << "')";
  if (overflows || bytes >= plan::kMaxBytes)
    return diag << " is larger than a plan can hold (2^48 bytes)";
  return diag << " takes " << bytes << " bytes, more than the " << memory
              << " bytes of memory this process can use";
}

FailureOr<ElementBytes> elementBytes(ElementsAttr attr, Location loc) {
  Type element = attr.getElementType();
  unsigned width = storageBits(element);
  if (failed(checkConstantSize(attr, width, loc)))
    return failure();
  ElementBytes out;
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(attr)) {
    ArrayRef<char> data = blob.getData();
    uint64_t expected = attr.getNumElements() * (width / 8);
    if (element.isInteger(1) || data.size() != expected)
      return emitError(loc)
                 << "resource '" << blob.getRawHandle().getKey() << "' holds "
                 << data.size() << " bytes; expected " << expected,
             failure();
    out.view = asBytes(data);
    out.isView = true;
    return out;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return emitError(loc) << "constant " << attr << " has no plan encoding",
           failure();
  // Whole-byte elements are stored as their little-endian bytes, densely
  // packed (a splat holds one element): use them as they are, rather than
  // element by element through APInt and APFloat.
  if (!element.isInteger(1) &&
      llvm::endianness::native == llvm::endianness::little) {
    ArrayRef<char> raw = dense.getRawData();
    if (!dense.isSplat()) {
      out.view = asBytes(raw);
      out.isView = true;
      return out;
    }
    out.owned.reserve(dense.getNumElements() * (width / 8));
    for (int64_t i = 0, e = dense.getNumElements(); i < e; ++i)
      out.owned.insert(out.owned.end(), raw.begin(), raw.begin() + width / 8);
    return out;
  }
  out.owned.reserve(dense.getNumElements() * (width / 8));
  auto append = [&](const APInt &bits) {
    for (unsigned byte = 0; byte < width / 8; ++byte)
      out.owned.push_back(
          static_cast<uint8_t>(bits.extractBitsAsZExtValue(8, byte * 8)));
  };
  if (isa<FloatType>(element)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      append(v.bitcastToAPInt());
  } else {
    for (const APInt &v : dense.getValues<APInt>())
      append(width == 8 && element.isInteger(1) ? v.zext(8) : v);
  }
  return out;
}

/// Whether every byte is zero (memcmp of the bytes against themselves
/// shifted by one: as fast as the library's memcmp).
bool allZero(ArrayRef<uint8_t> bytes) {
  return bytes.empty() ||
         (bytes[0] == 0 &&
          std::memcmp(bytes.data(), bytes.data() + 1, bytes.size() - 1) == 0);
}

std::vector<int64_t> shapeOf(Type type) {
  auto shape = cast<RankedTensorType>(type).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// Builds one plan from every public function of a module.
class PlanBuilder {
public:
  LogicalResult addFunction(func::FuncOp func);
  plan::Plan &result() { return built; }

private:
  FailureOr<uint32_t> newTensor(Value value, plan::Storage storage,
                                StringRef name, uint64_t offset = 0);
  FailureOr<uint32_t> bound(llvm::StringMap<uint32_t> &table, Value value,
                            plan::Storage storage, StringRef name,
                            StringRef kind);
  FailureOr<uint32_t> constant(rt::ConstantOp op);
  LogicalResult setInitialValue(uint32_t id, Attribute value, Location loc);
  LogicalResult addKernel(rt::KernelOpInterface op, plan::EntryPoint &entry);
  LogicalResult addView(rt::ViewOp op);
  FailureOr<std::vector<plan::Attribute>> kernelAttrs(rt::KernelOpInterface op);

  plan::Plan built;
  llvm::StringMap<uint32_t> params, inputs, outputs;
  DenseMap<Attribute, uint32_t> constants;
  /// Training-step results written in place over a parameter's tensor.
  DenseMap<Value, uint32_t> updateTarget;
  /// The parameters updated by the kernels emitted so far in this entry.
  DenseSet<uint32_t> updatedSoFar;
  DenseMap<Value, uint32_t> tensorOf;    // per function
  DenseMap<Value, StringRef> outputName; // per function
};

FailureOr<uint32_t> PlanBuilder::newTensor(Value value, plan::Storage storage,
                                           StringRef name, uint64_t offset) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape())
    return emitError(value.getLoc())
               << "value of type " << type
               << " has a dynamic shape; plans need static shapes",
           failure();
  auto dtype = dtypeOf(type.getElementType(), value.getLoc());
  if (failed(dtype))
    return failure();
  plan::Tensor tensor;
  tensor.name = name.str();
  tensor.dtype = *dtype;
  tensor.storage = storage;
  tensor.shape = shapeOf(type);
  tensor.offset = offset;
  built.tensors.push_back(std::move(tensor));
  return static_cast<uint32_t>(built.tensors.size() - 1);
}

/// Parameters, inputs and outputs are shared by name across entry points.
FailureOr<uint32_t> PlanBuilder::bound(llvm::StringMap<uint32_t> &table,
                                       Value value, plan::Storage storage,
                                       StringRef name, StringRef kind) {
  auto it = table.find(name);
  if (it == table.end()) {
    auto id = newTensor(value, storage, name);
    if (succeeded(id))
      table[name] = *id;
    return id;
  }
  const plan::Tensor &existing = built.tensors[it->second];
  auto type = cast<RankedTensorType>(value.getType());
  auto dtype = dtypeOf(type.getElementType(), value.getLoc());
  if (failed(dtype))
    return failure();
  if (existing.dtype != *dtype || existing.shape != shapeOf(type))
    return emitError(value.getLoc())
               << kind << " '" << name << "' is " << type
               << " here but has another type in an earlier entry point",
           failure();
  return it->second;
}

FailureOr<uint32_t> PlanBuilder::constant(rt::ConstantOp op) {
  Attribute value = op.getValue();
  if (auto it = constants.find(value); it != constants.end())
    return it->second;
  auto bytes = elementBytes(cast<ElementsAttr>(value), op.getLoc());
  if (failed(bytes))
    return failure();
  uint64_t offset = bytes->appendTo(built);
  auto id = newTensor(op.getResult(), plan::Storage::Constant, "", offset);
  if (succeeded(id))
    constants[value] = *id;
  return id;
}

LogicalResult PlanBuilder::setInitialValue(uint32_t id, Attribute value,
                                           Location loc) {
  plan::Tensor &tensor = built.tensors[id];
  if (tensor.hasInitializer || tensor.zeroInitialized)
    return success(); // the first entry point that names it set it
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return emitError(loc) << "mpt.initial_value must be an elements attribute",
           failure();
  // The value must have the parameter's element width and count; checked
  // on its type, before any of its bytes are looked at.
  uint64_t expected = 0;
  plan::tensorByteSize(tensor, &expected);
  const unsigned bits = storageBits(elements.getElementType());
  if (plan::dtypeSize(tensor.dtype) * 8 != bits ||
      static_cast<uint64_t>(elements.getNumElements()) * (bits / 8) != expected)
    return emitError(loc) << "initial value of parameter '" << tensor.name
                          << "' is " << elements.getType()
                          << ", which does not match the parameter",
           failure();
  // A zero splat (optimizer moments, fresh accumulators) is recognised
  // before it would be expanded into its full size.
  if (auto dense = dyn_cast<DenseElementsAttr>(elements);
      dense && dense.isSplat() && allZero(asBytes(dense.getRawData()))) {
    tensor.zeroInitialized = true;
    return success();
  }
  auto bytes = elementBytes(elements, loc);
  if (failed(bytes))
    return failure();
  // All zeros (optimizer moments, fresh accumulators): the plan records the
  // fact, not the bytes, and the runtime zero-fills at load.
  if (allZero(bytes->bytes())) {
    tensor.zeroInitialized = true;
    return success();
  }
  tensor.offset = bytes->appendTo(built);
  tensor.hasInitializer = true;
  return success();
}

/// The kernel's attributes, as its op's ODS definition declares them (name,
/// schema type), in name order; an unset optional attribute is left out,
/// so the runtime applies its default.
FailureOr<std::vector<plan::Attribute>>
PlanBuilder::kernelAttrs(rt::KernelOpInterface kernel) {
  Operation *op = kernel;
  SmallVector<rt::KernelAttrInfo> infos(kernel.getKernelAttrInfo());
  llvm::sort(infos,
             [](const rt::KernelAttrInfo &a, const rt::KernelAttrInfo &b) {
               return StringRef(a.name) < StringRef(b.name);
             });
  std::vector<plan::Attribute> attrs;
  for (const rt::KernelAttrInfo &info : infos) {
    std::optional<Attribute> stored = op->getInherentAttr(info.name);
    if (!stored || !*stored)
      continue;
    Attribute value = *stored;
    std::string name = info.name;
    switch (info.type) {
    case rt::KernelAttrType::Bool:
      if (auto b = dyn_cast<BoolAttr>(value)) {
        attrs.push_back(plan::Attribute::makeInt(name, b.getValue()));
        continue;
      }
      break;
    case rt::KernelAttrType::Int:
      if (auto i = dyn_cast<IntegerAttr>(value)) {
        attrs.push_back(
            plan::Attribute::makeInt(name, i.getValue().getSExtValue()));
        continue;
      }
      break;
    case rt::KernelAttrType::Float:
      if (auto f = dyn_cast<FloatAttr>(value)) {
        attrs.push_back(plan::Attribute::makeFloat(name, f.getValueAsDouble()));
        continue;
      }
      // constant_of_shape fills an integer result with an integer.
      if (auto i = dyn_cast<IntegerAttr>(value)) {
        attrs.push_back(
            plan::Attribute::makeInt(name, i.getValue().getSExtValue()));
        continue;
      }
      break;
    case rt::KernelAttrType::IntList:
      if (auto list = dyn_cast<DenseI64ArrayAttr>(value)) {
        attrs.push_back(plan::Attribute::makeInts(
            name, std::vector<int64_t>(list.asArrayRef().begin(),
                                       list.asArrayRef().end())));
        continue;
      }
      break;
    case rt::KernelAttrType::String:
      if (auto e = dyn_cast<rt::KernelStringAttrInterface>(value)) {
        attrs.push_back(
            plan::Attribute::makeString(name, e.getKernelString().str()));
        continue;
      }
      break;
    case rt::KernelAttrType::Unsupported:
      break;
    }
    return op->emitOpError() << "attribute '" << name << "' (" << value
                             << ") has no plan encoding",
           failure();
  }
  return attrs;
}

/// A view aliases its source's bytes: a new tensor record, no kernel.
LogicalResult PlanBuilder::addView(rt::ViewOp op) {
  if (!tensorOf.count(op.getSource()) ||
      built.tensors[tensorOf[op.getSource()]].storage != plan::Storage::Arena)
    return op.emitOpError("views a value that is not in the arena"), failure();
  auto id = newTensor(op.getResult(), plan::Storage::Arena, "",
                      op.getOffsetAttr().getValue().getZExtValue());
  if (failed(id))
    return failure();
  tensorOf[op.getResult()] = *id;
  return success();
}

LogicalResult PlanBuilder::addKernel(rt::KernelOpInterface kernelOp,
                                     plan::EntryPoint &entry) {
  Operation *op = kernelOp;
  DenseI64ArrayAttr offsets = kernelOp.getArenaOffsets();
  if (!offsets || offsets.size() != static_cast<int64_t>(op->getNumResults()))
    return op->emitOpError("has no arena placement; run --lower-to-runtime "
                           "before emitting a plan"),
           failure();

  plan::Kernel kernel;
  kernel.kind = kernelOp.getKernelKind().str();
  kernel.origin = onnxNodeName(op->getLoc()).str();
  kernel.phase = isBackward(op) ? plan::Phase::Backward : plan::Phase::Forward;
  for (Value operand : op->getOperands()) {
    auto it = tensorOf.find(operand);
    if (it == tensorOf.end())
      return op->emitOpError("uses a value the plan has no tensor for"),
             failure();
    if (updatedSoFar.contains(it->second))
      return op->emitOpError("reads parameter '")
                 << built.tensors[it->second].name
                 << "' after the kernel that updates it in place",
             failure();
    kernel.operands.push_back(it->second);
  }
  for (auto [result, offset] :
       llvm::zip(op->getResults(), offsets.asArrayRef())) {
    FailureOr<uint32_t> id = failure();
    if (auto target = updateTarget.find(result); target != updateTarget.end())
      id = target->second;
    else if (auto name = outputName.find(result); name != outputName.end())
      id =
          bound(outputs, result, plan::Storage::Output, name->second, "output");
    else if (offset >= 0)
      id = newTensor(result, plan::Storage::Arena, "",
                     static_cast<uint64_t>(offset));
    else
      return op->emitOpError("result has neither an arena offset nor an "
                             "output binding"),
             failure();
    if (failed(id))
      return failure();
    tensorOf[result] = *id;
    kernel.results.push_back(*id);
  }
  auto attrs = kernelAttrs(kernelOp);
  if (failed(attrs))
    return failure();
  kernel.attrs = std::move(*attrs);
  for (Value result : op->getResults())
    if (auto target = updateTarget.find(result); target != updateTarget.end())
      updatedSoFar.insert(target->second);
  built.kernels.push_back(std::move(kernel));
  entry.kernels.push_back(static_cast<uint32_t>(built.kernels.size() - 1));
  return success();
}

LogicalResult PlanBuilder::addFunction(func::FuncOp func) {
  tensorOf.clear();
  outputName.clear();
  updateTarget.clear();
  updatedSoFar.clear();
  llvm::StringMap<Value> paramArgs;
  auto arenas = func.getBody().front().getOps<rt::ArenaOp>();
  if (arenas.empty())
    return func.emitOpError("has no memory plan (no mptrt.arena); run "
                            "--lower-to-runtime before emitting a plan"),
           failure();
  rt::ArenaOp arena = *arenas.begin();
  plan::EntryPoint entry;
  entry.name = func.getSymName().str();
  entry.arenaBytes = plan::alignUp(arena.getSize());

  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (auto name = func.getArgAttrOfType<StringAttr>(i, mpt::kParamAttrName)) {
      auto id = bound(params, arg, plan::Storage::Parameter, name, "parameter");
      if (failed(id))
        return failure();
      if (Attribute init = func.getArgAttr(i, mpt::kInitialValueAttrName))
        if (failed(setInitialValue(*id, init, arg.getLoc())))
          return failure();
      tensorOf[arg] = *id;
      paramArgs[name.getValue()] = arg;
      entry.params.push_back(*id);
    } else if (auto name =
                   func.getArgAttrOfType<StringAttr>(i, mpt::kInputAttrName)) {
      auto id = bound(inputs, arg, plan::Storage::Input, name, "input");
      if (failed(id))
        return failure();
      tensorOf[arg] = *id;
      entry.inputs.push_back(*id);
    } else {
      return emitError(arg.getLoc())
                 << "argument " << i
                 << " has no binding; run --lower-to-runtime first",
             failure();
    }
  }
  Operation *terminator = func.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    if (auto param =
            func.getResultAttrOfType<StringAttr>(i, mpt::kUpdatesAttrName)) {
      auto arg = paramArgs.find(param.getValue());
      if (arg == paramArgs.end())
        return func.emitOpError()
                   << "result " << i << " updates '" << param.getValue()
                   << "', which is not a parameter",
               failure();
      if (isa<BlockArgument>(value) || value.getDefiningOp<rt::ConstantOp>() ||
          outputName.count(value) ||
          !updateTarget.try_emplace(value, tensorOf[arg->second]).second)
        return func.emitOpError()
                   << "result " << i
                   << " is not written by a kernel of its own; run "
                      "--lower-to-runtime first",
               failure();
      continue;
    }
    auto name = func.getResultAttrOfType<StringAttr>(i, mpt::kOutputAttrName);
    if (!name)
      return func.emitOpError() << "result " << i
                                << " has no binding; run --lower-to-runtime "
                                   "first",
             failure();
    if (!outputName.try_emplace(value, name.getValue()).second ||
        isa<BlockArgument>(value) || value.getDefiningOp<rt::ConstantOp>())
      return func.emitOpError()
                 << "result " << i
                 << " is not written by a kernel of its own; run "
                    "--lower-to-runtime first",
             failure();
  }

  for (Operation &op : func.getBody().front()) {
    if (&op == terminator)
      break;
    if (auto c = dyn_cast<rt::ConstantOp>(op)) {
      auto id = constant(c);
      if (failed(id))
        return failure();
      tensorOf[c.getResult()] = *id;
      continue;
    }
    if (auto view = dyn_cast<rt::ViewOp>(op)) {
      if (failed(addView(view)))
        return failure();
      continue;
    }
    if (isa<rt::ArenaOp>(op))
      continue;
    auto kernel = dyn_cast<rt::KernelOpInterface>(op);
    if (!kernel)
      return op.emitOpError("is not an mptrt kernel; only the execution "
                            "dialect is serialised (run --lower-to-runtime "
                            "first)"),
             failure();
    if (failed(addKernel(kernel, entry)))
      return failure();
  }
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    if (updateTarget.count(value))
      continue;
    entry.outputs.push_back(tensorOf[value]);
    auto role =
        func.getResultAttrOfType<OutputRoleAttr>(i, mpt::kOutputRoleAttrName);
    entry.outputRoles.push_back(role ? toAbiRole(role.getValue())
                                     : plan::OutputRole::None);
  }
  built.entries.push_back(std::move(entry));
  return success();
}

} // namespace

/// Builds the plan of `module`; its constants view the module's attributes.
static LogicalResult buildPlan(ModuleOp module, PlanBuilder &builder,
                               PlanSummary *summary) {
  bool any = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || func.isPrivate())
      continue;
    any = true;
    if (failed(builder.addFunction(func)))
      return failure();
  }
  if (!any)
    return module.emitError("no public function to make an entry point of"),
           failure();
  plan::Plan &built = builder.result();
  std::string error;
  if (!plan::verifyPlan(built, &error))
    return module.emitError("the plan fails the runtime's checks: ") << error,
           failure();
  if (summary) {
    *summary = PlanSummary();
    summary->entries = built.entries.size();
    summary->kernels = built.kernels.size();
    summary->tensors = built.tensors.size();
    for (const plan::Tensor &t : built.tensors) {
      uint64_t bytes = 0;
      plan::tensorByteSize(t, &bytes);
      if (t.storage == plan::Storage::Parameter) {
        ++summary->parameters;
        summary->parameterBytes += bytes;
      }
    }
    summary->constantBytes = built.constants.size();
    for (const plan::EntryPoint &e : built.entries)
      summary->maxArenaBytes = std::max(summary->maxArenaBytes, e.arenaBytes);
  }
  return success();
}

FailureOr<std::vector<uint8_t>> mpt::emitPlan(ModuleOp module,
                                              PlanSummary *summary) {
  PlanBuilder builder;
  if (failed(buildPlan(module, builder, summary)))
    return failure();
  return plan::serializePlan(builder.result());
}

LogicalResult mpt::writePlan(ModuleOp module, llvm::raw_ostream &os,
                             PlanSummary *summary) {
  PlanBuilder builder;
  if (failed(buildPlan(module, builder, summary)))
    return failure();
  plan::writePlan(builder.result(), [&](const uint8_t *data, size_t n) {
    os.write(reinterpret_cast<const char *>(data), n);
  });
  return success();
}
