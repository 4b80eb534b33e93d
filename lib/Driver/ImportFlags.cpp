//===- ImportFlags.cpp - the ONNX importer's command-line flags -----------===//
#include "mpt/Driver/ImportFlags.h"

#include <memory>

using namespace llvm;

namespace mpt::driver {
namespace {

struct Flags {
  explicit Flags(cl::OptionCategory &cat)
      : inputShapes("input-shape",
                    cl::desc("Bind the shape of a graph input: name=d0,d1,... "
                             "(repeatable; required for dynamic dimensions)"),
                    cl::cat(cat)),
        constantBindings("bind-constant",
                         cl::desc("Import a graph input as a constant read "
                                  "from an ONNX TensorProto file: "
                                  "name=file.pb (repeatable)"),
                         cl::cat(cat)),
        entryName("entry-name", cl::desc("Name of the imported function"),
                  cl::init("forward"), cl::cat(cat)),
        embedWeights("embed-weights",
                     cl::desc("Attach each parameter's initializer as its "
                              "initial value (default: true; false leaves "
                              "them out: every parameter is then bound at "
                              "run time)"),
                     cl::init(true), cl::cat(cat)),
        untieInitializers(
            "untie-initializers",
            cl::desc("Give each parameter that the exporter stored once and "
                     "copied through an Identity node its own master copy "
                     "and optimizer state, as PyTorch trains them (default: "
                     "true; false keeps them tied)"),
            cl::init(true), cl::cat(cat)),
        frozenInitializers(
            "freeze-initializer",
            cl::desc("Import a float initializer as a constant, not a "
                     "trainable parameter: name[,name...] (repeatable; a "
                     "buffer the exporter stored like a weight, or a weight "
                     "to keep fixed)"),
            cl::CommaSeparated, cl::cat(cat)),
        batchNormTraining(
            "batch-norm-training",
            cl::desc("Import BatchNormalization in inference mode in "
                     "training mode (batch statistics, running statistics "
                     "updated), as PyTorch trains a module in train mode; "
                     "the dynamo exporter writes inference-mode batch norm"),
            cl::init(false), cl::cat(cat)),
        trainScalarInitializers(
            "train-scalar-initializers",
            cl::desc("Import 0-d float initializers as trainable parameters "
                     "(default: false, they are constants, as the dynamo "
                     "exporter's GELU and attention scalars are)"),
            cl::init(false), cl::cat(cat)) {}

  cl::list<std::string> inputShapes, constantBindings, frozenInitializers;
  cl::opt<std::string> entryName;
  cl::opt<bool> embedWeights, untieInitializers, batchNormTraining,
      trainScalarInitializers;
};

std::unique_ptr<Flags> &flags() {
  static std::unique_ptr<Flags> instance;
  return instance;
}

} // namespace

void registerImportFlags(cl::OptionCategory *category) {
  if (!flags())
    flags() = std::make_unique<Flags>(category ? *category
                                               : cl::getGeneralCategory());
}

std::string importOptionsFromFlags(OnnxImportOptions &options) {
  const Flags &f = *flags();
  options.entryName = f.entryName;
  options.embedWeights = f.embedWeights;
  options.untieDeduplicatedInitializers = f.untieInitializers;
  options.trainScalarInitializers = f.trainScalarInitializers;
  options.batchNormTraining = f.batchNormTraining;
  options.frozenInitializers.assign(f.frozenInitializers.begin(),
                                    f.frozenInitializers.end());
  for (const std::string &binding : f.inputShapes)
    if (std::string error = parseInputShapeBinding(binding, options);
        !error.empty())
      return "--input-shape: " + error;
  for (const std::string &binding : f.constantBindings)
    if (std::string error = parseConstantBinding(binding, options);
        !error.empty())
      return "--bind-constant: " + error;
  return "";
}

bool inputBindingsGiven() {
  return !flags()->inputShapes.empty() || !flags()->constantBindings.empty();
}

} // namespace mpt::driver
