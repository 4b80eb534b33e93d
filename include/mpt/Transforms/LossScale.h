//===- LossScale.h - the typed value of `loss-scale` ------------*- C++ -*-===//
//
// --build-training-step's `loss-scale` (and the training pipeline's) is a
// mode of MPTEnums.td's LossScaleMode, which `static` extends with its
// scale: none, dynamic, auto, or static:S with S > 0. mpt::LossScale is that
// value, and llvm::cl::parser<mpt::LossScale> the option's parser, the one
// place the text is read; a bad value is an error that lists the forms
// (mpt/IR/MPTEnumOptions.h).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TRANSFORMS_LOSSSCALE_H
#define MPT_TRANSFORMS_LOSSSCALE_H

#include "mpt/IR/MPTEnumOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mpt {

/// The value of `loss-scale`.
struct LossScale {
  LossScaleMode mode = LossScaleMode::Auto;
  /// The scale S of `static:S` (> 0); 0 for the other modes.
  double scale = 0;

  /// `text` as a loss scaling, or none when it is not one.
  static std::optional<LossScale> parse(llvm::StringRef text);
  /// The forms a value takes, as an error lists them ("static:S (S > 0)").
  static std::vector<std::string> forms();

  bool operator==(const LossScale &other) const {
    return mode == other.mode && scale == other.scale;
  }
  bool operator!=(const LossScale &other) const { return !(*this == other); }
};

/// The value as the option spells it (`static:1024`).
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const LossScale &value);

} // namespace mpt

/// The parser of `loss-scale` options.
template <>
class llvm::cl::parser<mpt::LossScale>
    : public llvm::cl::basic_parser<mpt::LossScale> {
public:
  explicit parser(Option &owner) : basic_parser(owner) {}

  bool parse(Option &option, StringRef argName, StringRef arg,
             mpt::LossScale &value);
  StringRef getValueName() const override { return "mode"; }
  void printOptionDiff(const Option &option, const mpt::LossScale &value,
                       const OptionValue<mpt::LossScale> &defaultValue,
                       size_t globalWidth) const;
};

#endif // MPT_TRANSFORMS_LOSSSCALE_H
