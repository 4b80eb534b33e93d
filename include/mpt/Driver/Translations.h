//===- Translations.h - mpt-translate's translations ------------*- C++ -*-===//
#ifndef MPT_DRIVER_TRANSLATIONS_H
#define MPT_DRIVER_TRANSLATIONS_H

namespace mpt {

/// Registers the translations of mpt-translate: --import-onnx with the
/// importer's flags (ImportFlags.h), in a build with the importer, and
/// --mlir-to-plan. Call once, before the command line is parsed.
void registerAllTranslations();

/// Whether an --import-onnx translation failed only for unsupported
/// features (mpt-translate then exits with 2).
bool importSawOnlyUnsupported();

} // namespace mpt

#endif // MPT_DRIVER_TRANSLATIONS_H
