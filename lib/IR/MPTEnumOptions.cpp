//===- MPTEnumOptions.cpp - MPTEnums.td's enums as option types -----------===//
#include "mpt/IR/MPTEnumOptions.h"

#include "llvm/Support/raw_ostream.h"

using namespace mpt;

std::string mpt::notOneOf(llvm::ArrayRef<std::string> names,
                          llvm::StringRef value) {
  std::string text = "must be ";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text + "; got '" + value.str() + "'";
}

namespace {
thread_local OptionErrorCapture *innermost = nullptr;
} // namespace

OptionErrorCapture::OptionErrorCapture() : outer(innermost) {
  innermost = this;
}

OptionErrorCapture::~OptionErrorCapture() { innermost = outer; }

bool OptionErrorCapture::report(llvm::cl::Option &option,
                                llvm::StringRef argName,
                                const llvm::Twine &message) {
  if (!innermost)
    return option.error(message, argName);
  llvm::raw_string_ostream os(innermost->captured);
  os << "for the --" << (argName.empty() ? option.ArgStr : argName)
     << " option: " << message << "\n";
  return true;
}
