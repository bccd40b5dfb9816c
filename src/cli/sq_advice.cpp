#include "cli/sq_advice.hpp"

#include <fmt/format.h>

#include "common/units.hpp"

namespace ioacct {

std::string sq_thread_warning(const SqThreadStat& sq, double submit_gap_ns, uint32_t sq_idle_ms) {
  if (!sq.work_s || !(sq.cpu_s > 0.05) || *sq.work_s >= 0.5 * sq.cpu_s) return "";
  std::string s = fmt::format(
      "warning: SQ thread {} spent {:.0f}% of its {:.2f} CPU-seconds outside the loops SqWorkTime counts (those that "
      "had SQEs to submit; loops that found none or only ran completions are left out)",
      sq.tid, 100.0 * (1 - *sq.work_s / sq.cpu_s), sq.cpu_s);
  const double idle_ns = (sq_idle_ms ? sq_idle_ms : 1000) * 1e6, shortest_ns = 1e6;
  // A shorter idle helps only where the gaps are longer than the shortest
  // idle there is, with room for the thread to sleep in them.
  if (submit_gap_ns >= 2 * shortest_ns && idle_ns > shortest_ns)
    return s + fmt::format("; its rings went quiet for about {} between bursts, so a --sq-idle under that (at least "
                           "1ms) lets it sleep there, or leave --sqpoll off\n",
                           format_duration_ns(submit_gap_ns));
  if (submit_gap_ns > 0 && submit_gap_ns < 2 * shortest_ns)
    return s + fmt::format("; its rings had new SQEs about every {}, too close for it ever to sleep (the shortest "
                           "--sq-idle is 1ms), so a shorter --sq-idle gives nothing back: leave --sqpoll off if this "
                           "CPU matters more than the submission syscalls it saves\n",
                           format_duration_ns(submit_gap_ns));
  return s + "; leave --sqpoll off if this CPU matters more than the submission syscalls it saves\n";
}

}  // namespace ioacct
