#pragma once
// bench's advice for an SQ thread whose CPU went mostly to loops that
// fdinfo's SqWorkTime does not count. Pure, so that each case is unit-tested.
//
// SqWorkTime counts the SQ thread's loops that had SQEs to submit (or an
// iopoll list, or NAPI to poll), from that point to the loop's end; loops that
// found nothing, or only ran completions (task work), are left out. So the
// rest is not all "spinning without work". And --sq-idle (sq_thread_idle,
// whole ms, at least 1) only gives CPU back where the ring went quiet for
// longer than it between submissions: a ring fed every few µs never lets the
// thread sleep, whatever the idle time.
#include <cstdint>
#include <string>

#include "acct/accounting.hpp"

namespace ioacct {

// `submit_gap_ns`: the mean time between the bursts of SQEs of the rings the
// thread serves, over the window (0 when unknown); `sq_idle_ms`: the
// sq_thread_idle asked for (0: the kernel's default, 1 s). "" when the
// thread used little CPU (50 ms or less), has no SqWorkTime, or half of its
// CPU or more was counted as work.
std::string sq_thread_warning(const SqThreadStat& sq, double submit_gap_ns, uint32_t sq_idle_ms);

}  // namespace ioacct
