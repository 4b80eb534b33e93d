//===- MPTEnums.cpp - the closed sets both dialects share -----------------===//
#include "mpt/IR/MPTEnums.h"

#include "llvm/ADT/StringSwitch.h"

#include "mpt/IR/MPTEnums.cpp.inc"

#include "mpt/IR/MPTEnumAttrInterface.cpp.inc"
