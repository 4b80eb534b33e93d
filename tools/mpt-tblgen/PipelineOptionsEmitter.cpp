//===- PipelineOptionsEmitter.cpp - -gen-pipeline-options -----------------===//
//
// Writes, for each MPT_PipelineOptions record
// (include/mpt/Pipelines/PipelineOptions.td), the options of its pass as
// members of a pipeline options struct, and a member function that copies
// their values into the pass's generated options struct. The name, type,
// default, help text and extra flags of each option are the pass's own
// (its Option / ListOption in Passes.td); the record only picks the pass,
// the help category, the options left out and the ones renamed.
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <string>
#include <vector>

using namespace llvm;

namespace {

/// One option of the pass as the pipeline takes it.
struct PipelineOption {
  StringRef passCppName;    // the field of the pass's options struct
  StringRef cppName;        // the member of the pipeline's struct
  StringRef argument;       // the pipeline's name for it
  StringRef type;           // the C++ value type
  StringRef defaultValue;   // a C++ expression, or "" for none
  StringRef description;    // the help text
  StringRef additionalOpts; // further llvm::cl flags, or ""
  bool list;
};

/// A pipeline struct's share of one pass's options.
struct PipelineOptions {
  const Record *record;
  const Record *pass;
  StringRef category;
  std::vector<PipelineOption> options;
};

/// The record's options, checked: every option of the pass, in the pass's
/// order, but the excluded ones, with the renames applied.
PipelineOptions readPipelineOptions(const Record *record) {
  PipelineOptions result{record,
                         record->getValueAsDef("pass"),
                         record->getValueAsString("category"),
                         {}};
  if (!result.pass->isSubClassOf("PassBase"))
    PrintFatalError(record, "'pass' must be a Pass record");
  if (result.category.empty())
    PrintFatalError(record, "'category' must name the help category");

  StringSet<> excluded;
  for (StringRef argument : record->getValueAsListOfStrings("excluded"))
    excluded.insert(argument);
  StringMap<const Record *> renamed;
  for (const Record *rename : record->getValueAsListOfDefs("renamed"))
    if (!renamed.try_emplace(rename->getValueAsString("passArgument"), rename)
             .second)
      PrintFatalError(record, "option '" +
                                  rename->getValueAsString("passArgument") +
                                  "' is renamed twice");

  StringSet<> seen;
  for (const Record *option : result.pass->getValueAsListOfDefs("options")) {
    StringRef argument = option->getValueAsString("argument");
    seen.insert(argument);
    if (excluded.contains(argument))
      continue;
    PipelineOption o{option->getValueAsString("cppName"),
                     option->getValueAsString("cppName"),
                     argument,
                     option->getValueAsString("type"),
                     option->getValueAsString("defaultValue"),
                     option->getValueAsString("description"),
                     option->getValueAsString("additionalOptFlags"),
                     option->isSubClassOf("ListOption")};
    if (const Record *rename = renamed.lookup(argument)) {
      o.argument = rename->getValueAsString("argument");
      o.cppName = rename->getValueAsString("cppName");
    }
    if (o.description.contains(")PO\""))
      PrintFatalError(option, "the description of '" + argument +
                                  "' cannot hold ')PO\"'");
    result.options.push_back(o);
  }
  for (const auto &entry : excluded)
    if (!seen.contains(entry.getKey()))
      PrintFatalError(record, "excluded option '" + entry.getKey() +
                                  "' is not an option of " +
                                  result.pass->getName());
  for (const auto &entry : renamed)
    if (!seen.contains(entry.getKey()) || excluded.contains(entry.getKey()))
      PrintFatalError(record, "renamed option '" + entry.getKey() +
                                  "' is not a taken option of " +
                                  result.pass->getName());
  return result;
}

/// `SomeName` as `someName`.
std::string lowerFirst(StringRef name) {
  std::string result = name.str();
  if (!result.empty())
    result[0] = toLower(result[0]);
  return result;
}

void emitSection(const PipelineOptions &p, raw_ostream &os) {
  StringRef passName = p.pass->getName();
  std::string passOptions = (passName + "Options").str();
  StringRef passArgument = p.pass->getValueAsString("argument");
  os << "#ifdef GEN_PIPELINE_OPTIONS_" << p.record->getName() << "\n"
     << "// " << p.record->getName() << ": the options of --" << passArgument
     << " (" << passName << ")\n";
  for (const PipelineOption &o : p.options) {
    os << (o.list ? "ListOption<" : "Option<") << o.type << "> " << o.cppName
       << "{*this, \"" << o.argument << "\", llvm::cl::desc(R\"PO("
       << o.description << ")PO\")";
    if (!o.list && !o.defaultValue.empty())
      os << ", llvm::cl::init(" << o.defaultValue << ")";
    if (!o.additionalOpts.empty())
      os << ", " << o.additionalOpts;
    os << ", llvm::cl::cat(" << p.category << ")};\n";
  }
  os << "\n/// --" << passArgument
     << "'s options, those above with their values here.\n"
     << passOptions << " " << lowerFirst(passOptions) << "() const {\n"
     << "  " << passOptions << " pass;\n";
  for (const PipelineOption &o : p.options) {
    if (o.list)
      os << "  pass." << o.passCppName << ".assign(" << o.cppName
         << ".begin(), " << o.cppName << ".end());\n";
    else
      os << "  pass." << o.passCppName << " = " << o.cppName << ";\n";
  }
  os << "  return pass;\n}\n"
     << "#undef GEN_PIPELINE_OPTIONS_" << p.record->getName() << "\n"
     << "#endif // GEN_PIPELINE_OPTIONS_" << p.record->getName() << "\n\n";
}

} // namespace

bool mpt::tblgen::emitPipelineOptions(const RecordKeeper &records,
                                      raw_ostream &os) {
  emitSourceFileHeader("The pass options the pipelines take", os, records);
  os << "// Each section is the body of a pipeline options struct (a\n"
        "// mlir::PassPipelineOptions) in the help category the record "
        "names.\n\n";
  for (const Record *record :
       records.getAllDerivedDefinitions("MPT_PipelineOptions"))
    emitSection(readPipelineOptions(record), os);
  return false;
}
