#pragma once
// Every IORING_SETUP_* flag ioacct knows, in bit order, with the release that
// added it: one table for the names the start-up line and the JSON print
// (setup_flag_names) and for `ioacct probe`, which tries each one.
#include <cstdint>

#include "engine/probe_uapi.hpp"

namespace ioacct {

struct SetupFlag {
  uint32_t bit;
  const char* name;   // without the IORING_SETUP_ prefix
  const char* since;  // the Linux release that added it
};

inline constexpr SetupFlag kSetupFlags[] = {
    {IORING_SETUP_IOPOLL, "IOPOLL", "5.1"},
    {IORING_SETUP_SQPOLL, "SQPOLL", "5.1"},
    {IORING_SETUP_SQ_AFF, "SQ_AFF", "5.1"},
    {IORING_SETUP_CQSIZE, "CQSIZE", "5.5"},
    {IORING_SETUP_CLAMP, "CLAMP", "5.6"},
    {IORING_SETUP_ATTACH_WQ, "ATTACH_WQ", "5.6"},
    {IORING_SETUP_R_DISABLED, "R_DISABLED", "5.10"},
    {IORING_SETUP_SUBMIT_ALL, "SUBMIT_ALL", "5.18"},
    {IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN", "5.19"},
    {IORING_SETUP_TASKRUN_FLAG, "TASKRUN_FLAG", "5.19"},
    {IORING_SETUP_SQE128, "SQE128", "5.19"},
    {IORING_SETUP_CQE32, "CQE32", "5.19"},
    {IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER", "6.0"},
    {IORING_SETUP_DEFER_TASKRUN, "DEFER_TASKRUN", "6.1"},
    {IORING_SETUP_NO_MMAP, "NO_MMAP", "6.5"},
    {IORING_SETUP_REGISTERED_FD_ONLY, "REGISTERED_FD_ONLY", "6.5"},
    {IORING_SETUP_NO_SQARRAY, "NO_SQARRAY", "6.6"},
    {IORING_SETUP_HYBRID_IOPOLL, "HYBRID_IOPOLL", "6.13"},
    {IORING_SETUP_CQE_MIXED, "CQE_MIXED", "6.18"},
    {IORING_SETUP_SQE_MIXED, "SQE_MIXED", "6.19"},
};
// Bits from here up are newer than ioacct: probe tries them unnamed.
inline constexpr unsigned kFirstUnknownSetupBit = 20;

}  // namespace ioacct
