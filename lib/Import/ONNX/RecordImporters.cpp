//===- RecordImporters.cpp - the rows the ops' records declare ------------===//
//
// The importer's rows that are facts of an op's record rather than code of
// a family: the ONNX operators that the mpt ops declare with MPT_OnnxImport
// (generated MPTOnnxImports.h.inc) and the unary functions' ONNX rows
// (MPTUnaryFunctions.td, through mptrt/generated/UnaryKinds.def). Each row
// instantiates a generic importer (GenericImporters.h) on its op.
//
//===----------------------------------------------------------------------===//
#include "GenericImporters.h"

#include "mpt/Dialect/MPT/IR/MPTOps.h"

namespace mpt::onnx_import {

void registerRecordImporters(OpImporterTable &t) {
#define MPT_ONNX_IMPORT(importer, onnxName, sinceOpset, Op)                    \
  t.add(onnxName, {sinceOpset, importer<Op>});
#include "mpt/Dialect/MPT/IR/MPTOnnxImports.h.inc"
#undef MPT_ONNX_IMPORT

#define MPTRT_UNARY_IMPORT(Name, OnnxName, sinceOpset)                         \
  t.add(#OnnxName, {sinceOpset, importUnary<Name##Op>});
#include "mptrt/generated/UnaryKinds.def"
}

} // namespace mpt::onnx_import
