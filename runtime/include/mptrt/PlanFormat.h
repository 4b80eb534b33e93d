//===- PlanFormat.h - MPT execution plan: everything ------------*- C++ -*-===//
//
// The whole plan format, one header per job:
//   mptrt/plan/Layout.h      constants, codes, the structs and size helpers
//   mptrt/plan/Validation.h  verifyPlan: what the structs must mean
//   mptrt/plan/Writer.h      serializePlan: structs to bytes
//   mptrt/plan/Reader.h      parsePlan: bytes to structs (then verifyPlan)
//
//   mptrt::plan::Plan plan;                 // fill tensors, kernels, entries
//   std::string error;
//   if (!mptrt::plan::verifyPlan(plan, &error)) ...
//   std::vector<uint8_t> bytes = mptrt::plan::serializePlan(plan);
//   mptrt::plan::Plan back;
//   if (!mptrt::plan::parsePlan(bytes.data(), bytes.size(), &back, &error)) ...
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLANFORMAT_H
#define MPTRT_PLANFORMAT_H

#include "mptrt/plan/Layout.h"
#include "mptrt/plan/Reader.h"
#include "mptrt/plan/Validation.h"
#include "mptrt/plan/Writer.h"

#endif // MPTRT_PLANFORMAT_H
