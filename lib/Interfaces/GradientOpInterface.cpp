//===- GradientOpInterface.cpp - per-op gradient rules --------------------===//
#include "mpt/Interfaces/GradientOpInterface.h"

#include "mpt/Interfaces/GradientOpInterface.cpp.inc"
