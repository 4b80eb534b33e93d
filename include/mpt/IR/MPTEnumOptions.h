//===- MPTEnumOptions.h - MPTEnums.td's enums as option types ---*- C++ -*-===//
//
// A pass or pipeline option whose type is one of MPTEnums.td's option enums
// (MPT_OptionEnum: mpt::Optimizer, mpt::PrecisionMode, ...) takes the
// enum's cases by their names, with their help texts: its llvm::cl parser
// is mpt::EnumOptionParser<E>, over the cases `mpt-tblgen
// -gen-enum-options` writes from the records (MPTEnumOptions.h.inc). No
// option lists its values by hand, and a value outside the set is an error
// that lists the set:
//
//   for the --optimizer option: must be sgd, momentum or adamw; got 'lion'
//
// llvm::cl writes such errors on stderr; a front end that returns its
// errors instead (the C API) collects them with an OptionErrorCapture.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_IR_MPTENUMOPTIONS_H
#define MPT_IR_MPTENUMOPTIONS_H

#include "mpt/IR/MPTEnums.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace mpt {

/// A case of an option enum: the enumerator, its name as the option takes
/// it, and its help text.
template <typename E> struct EnumOptionCase {
  E value;
  const char *name;
  const char *help;
};

/// `cases`, the option enum E's cases in MPTEnums.td's order (generated).
template <typename E> struct EnumOptionCases;

/// "must be a, b or c; got 'x'": the message for the value `value` of an
/// option that takes `names`.
std::string notOneOf(llvm::ArrayRef<std::string> names, llvm::StringRef value);

/// While one lives, the errors that the option parsers of this header (and
/// mpt::LossScale's) report on this thread are appended to it instead of
/// being written to stderr. Captures nest; the innermost one collects.
class OptionErrorCapture {
public:
  OptionErrorCapture();
  ~OptionErrorCapture();
  OptionErrorCapture(const OptionErrorCapture &) = delete;
  OptionErrorCapture &operator=(const OptionErrorCapture &) = delete;

  /// The errors reported, one a line, each as llvm::cl words it
  /// ("for the --optimizer option: must be ...").
  const std::string &text() const { return captured; }

  /// Reports `message` about the value of `option`: to this thread's
  /// innermost capture, or else on stderr as llvm::cl does. Returns true,
  /// a parser's failure.
  static bool report(llvm::cl::Option &option, llvm::StringRef argName,
                     const llvm::Twine &message);

private:
  std::string captured;
  OptionErrorCapture *outer;
};

/// The llvm::cl parser of options of the option enum E: the values are E's
/// cases (less those an option drops with mpt::withoutValue).
template <typename E>
class EnumOptionParser : public llvm::cl::generic_parser_base {
protected:
  struct OptionInfo : public GenericOptionInfo {
    OptionInfo(llvm::StringRef name, E value, llvm::StringRef help)
        : GenericOptionInfo(name, help), V(value) {}
    llvm::cl::OptionValue<E> V;
  };
  // Named as llvm::cl::parser names it: mlir's pass options read it to
  // print a value (mlir::detail::PassOptions::GenericOptionParser).
  llvm::SmallVector<OptionInfo, 8> Values;

public:
  using parser_data_type = E;

  /// The options of this parser always have a name (`optimizer=`), so the
  /// values are not registered as flags of their own.
  explicit EnumOptionParser(llvm::cl::Option &owner)
      : generic_parser_base(owner) {
    for (const EnumOptionCase<E> &c : EnumOptionCases<E>::cases)
      Values.emplace_back(c.name, c.value, c.help);
  }

  unsigned getNumOptions() const override { return Values.size(); }
  llvm::StringRef getOption(unsigned n) const override {
    return Values[n].Name;
  }
  llvm::StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// The names of the values the option takes, in order.
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const OptionInfo &info : Values)
      result.push_back(info.Name.str());
    return result;
  }

  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, E &value) {
    for (const OptionInfo &info : Values)
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
    return OptionErrorCapture::report(option, argName, notOneOf(names(), arg));
  }

  /// Drops the case `value` from the values the option takes.
  void removeValue(E value) {
    llvm::erase_if(
        Values, [&](const OptionInfo &info) { return info.V.compare(value); });
  }
};

/// An option modifier: the option takes every case of its enum but `value`
/// (--assign-precision's mode takes no `none`).
template <typename E> struct WithoutValue {
  E value;
  template <class Opt> void apply(Opt &option) const {
    option.getParser().removeValue(value);
  }
};
template <typename E> WithoutValue<E> withoutValue(E value) { return {value}; }

} // namespace mpt

#include "mpt/IR/MPTEnumOptions.h.inc"

#endif // MPT_IR_MPTENUMOPTIONS_H
