//===- LossScale.cpp - the typed value of `loss-scale` --------------------===//
#include "mpt/Transforms/LossScale.h"

#include "llvm/Support/Format.h"

using namespace mpt;

std::optional<LossScale> LossScale::parse(llvm::StringRef text) {
  llvm::StringRef name = text.take_until([](char c) { return c == ':'; });
  std::optional<LossScaleMode> mode = symbolizeLossScaleMode(name);
  if (!mode)
    return std::nullopt;
  if (*mode != LossScaleMode::Static)
    return name == text ? std::optional<LossScale>(LossScale{*mode})
                        : std::nullopt;
  double scale;
  if (!text.consume_front("static:") || text.getAsDouble(scale) || !(scale > 0))
    return std::nullopt;
  return LossScale{*mode, scale};
}

std::vector<std::string> LossScale::forms() {
  std::vector<std::string> result;
  for (const EnumOptionCase<LossScaleMode> &c :
       EnumOptionCases<LossScaleMode>::cases)
    result.push_back(c.value == LossScaleMode::Static
                         ? std::string(c.name) + ":S (S > 0)"
                         : std::string(c.name));
  return result;
}

llvm::raw_ostream &mpt::operator<<(llvm::raw_ostream &os,
                                   const LossScale &value) {
  os << stringifyLossScaleMode(value.mode);
  if (value.mode == LossScaleMode::Static)
    os << ':' << llvm::format("%.17g", value.scale);
  return os;
}

bool llvm::cl::parser<LossScale>::parse(Option &option, StringRef argName,
                                        StringRef arg, LossScale &value) {
  if (std::optional<LossScale> parsed = LossScale::parse(arg)) {
    value = *parsed;
    return false;
  }
  return OptionErrorCapture::report(option, argName,
                                    notOneOf(LossScale::forms(), arg));
}

void llvm::cl::parser<LossScale>::printOptionDiff(
    const Option &option, const LossScale &value,
    const OptionValue<LossScale> &, size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value << "\n";
}
