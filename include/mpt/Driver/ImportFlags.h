//===- ImportFlags.h - the ONNX importer's command-line flags --*- C++ -*-===//
//
// mpt-translate --import-onnx and mpt-compile take the same importer flags;
// they are declared once, here, and turned into OnnxImportOptions (the C
// API takes the same bindings from a string, through the same parsers).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DRIVER_IMPORTFLAGS_H
#define MPT_DRIVER_IMPORTFLAGS_H

#include "mpt/Import/ONNX/Importer.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mpt::driver {

/// Registers --input-shape, --bind-constant, --entry-name, --embed-weights,
/// --untie-initializers and --train-scalar-initializers (in `category` when
/// given). Call once, before the command line is parsed.
void registerImportFlags(llvm::cl::OptionCategory *category = nullptr);

/// The options the flags ask for; "" on success, else the message of a
/// malformed binding, starting with the flag ("--input-shape: ...").
std::string importOptionsFromFlags(OnnxImportOptions &options);

/// Whether --input-shape or --bind-constant was given (they apply to ONNX
/// inputs only).
bool inputBindingsGiven();

} // namespace mpt::driver

#endif // MPT_DRIVER_IMPORTFLAGS_H
