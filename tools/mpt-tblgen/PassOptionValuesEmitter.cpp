//===- PassOptionValuesEmitter.cpp - -gen-pass-option-values --------------===//
//
// Writes, for each pass with options, a member function that returns the
// values of the pass's options as its generated options struct:
//
//   #define GEN_PASS_OPTION_VALUES_BuildTrainingStepPass
//   #include "mpt/Transforms/PassOptionValues.h.inc"
//
// inside the pass's class gives it `BuildTrainingStepPassOptions
// optionValues() const`. A check that takes the options struct (for
// example mpt::verifyTrainingStepOptions, which the pipelines call before
// they run) is then the same check the pass runs, with no list of the
// options written by hand.
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;

bool mpt::tblgen::emitPassOptionValues(const RecordKeeper &records,
                                       raw_ostream &os) {
  emitSourceFileHeader("Each pass's option values as its options struct", os,
                       records);
  for (const Record *pass : records.getAllDerivedDefinitions("PassBase")) {
    std::vector<const Record *> options = pass->getValueAsListOfDefs("options");
    if (options.empty())
      continue;
    StringRef name = pass->getName();
    os << "#ifdef GEN_PASS_OPTION_VALUES_" << name << "\n"
       << "/// The values of this pass's options.\n"
       << name << "Options optionValues() const {\n"
       << "  " << name << "Options values;\n";
    for (const Record *option : options) {
      StringRef field = option->getValueAsString("cppName");
      if (option->isSubClassOf("ListOption"))
        os << "  values." << field << ".assign(" << field << ".begin(), "
           << field << ".end());\n";
      else
        os << "  values." << field << " = " << field << ";\n";
    }
    os << "  return values;\n}\n"
       << "#undef GEN_PASS_OPTION_VALUES_" << name << "\n"
       << "#endif // GEN_PASS_OPTION_VALUES_" << name << "\n\n";
  }
  return false;
}
