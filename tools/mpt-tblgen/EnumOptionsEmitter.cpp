//===- EnumOptionsEmitter.cpp - -gen-enum-options -------------------------===//
//
// Writes, for each MPT_OptionEnum record (include/mpt/IR/MPTEnums.td), the
// enum's cases as the values of an option (mpt::EnumOptionCases<E>: the
// enumerator, the name the option takes, its help text) and the llvm::cl
// parser of options of that type (mpt::EnumOptionParser<E>, in
// mpt/IR/MPTEnumOptions.h). A pass or pipeline option of type E thus takes
// the enum's cases, with their help texts, and no list is written by hand.
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;

namespace {

/// `text` as a C++ string literal.
void emitStringLiteral(StringRef text, raw_ostream &os) {
  os << '"';
  os.write_escaped(text);
  os << '"';
}

} // namespace

bool mpt::tblgen::emitEnumOptions(const RecordKeeper &records,
                                  raw_ostream &os) {
  emitSourceFileHeader("The option enums' cases and llvm::cl parsers", os,
                       records);
  for (const Record *e : records.getAllDerivedDefinitions("MPT_OptionEnum")) {
    std::string type = (e->getValueAsString("cppNamespace") +
                        "::" + e->getValueAsString("className"))
                           .str();
    std::vector<const Record *> cases = e->getValueAsListOfDefs("optionCases");
    if (cases.empty())
      PrintFatalError(e, "an option enum needs at least one case");
    os << "// " << e->getName() << "\n"
       << "namespace mpt {\n"
       << "template <> struct EnumOptionCases<" << type << "> {\n"
       << "  static constexpr EnumOptionCase<" << type << "> cases[] = {\n";
    for (const Record *c : cases) {
      os << "      {" << type << "::" << c->getValueAsString("symbol") << ", ";
      emitStringLiteral(c->getValueAsString("str"), os);
      os << ",\n       ";
      emitStringLiteral(c->getValueAsString("help"), os);
      os << "},\n";
    }
    os << "  };\n};\n} // namespace mpt\n"
       << "template <>\nclass llvm::cl::parser<" << type
       << "> : public ::mpt::EnumOptionParser<" << type << "> {\n"
       << "public:\n  using EnumOptionParser::EnumOptionParser;\n};\n\n";
  }
  return false;
}
