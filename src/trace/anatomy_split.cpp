#include "trace/anatomy_split.hpp"

namespace ioacct {

AnatomyStageName anatomy_stage_name(AnatomyStage s, AnatomyFlavor f) {
  const bool u = f == AnatomyFlavor::Uring;
  switch (s) {
    case AnatomyStage::Submit:
      return {u ? "submit" : "syscall entry", "user submit stamp", u ? "io_uring_submit_req" : "sys_enter"};
    case AnatomyStage::Issue: return {"issue", u ? "io_uring_submit_req" : "sys_enter", "block_io_start"};
    case AnatomyStage::Queue: return {"queue", "block_io_start", "block_rq_issue"};
    case AnatomyStage::Device: return {"device", "block_rq_issue", "block_rq_complete"};
    case AnatomyStage::Completion: return {"completion", "block_rq_complete", u ? "io_uring_complete" : "sys_exit"};
    case AnatomyStage::Kernel:
      return {"in kernel", u ? "io_uring_submit_req" : "sys_enter", u ? "io_uring_complete" : "sys_exit"};
    case AnatomyStage::Reaping: return {u ? "reaping" : "return", u ? "io_uring_complete" : "sys_exit", "user reap stamp"};
  }
  return {"?", "?", "?"};
}

AnatomySplit split_io(const AnatomyStamps& s, AnatomyBlockLink link) noexcept {
  AnatomySplit r;
  r.e2e = s.user_reap - s.user_submit;
  if (!s.submit || s.submit < s.user_submit || s.submit > s.user_reap) {
    r.unlinked = AnatomyUnlinked::NoSubmit;
    return r;
  }
  if (!s.post || s.post < s.submit || s.post > s.user_reap) {
    r.unlinked = AnatomyUnlinked::NoPost;
    return r;
  }
  r.had_request = s.nreq > 0;
  r.end_unseen = s.nreq > 0 && s.io_start && s.rq_issue && !s.rq_complete;
  const bool req_whole = s.nreq > 0 && s.io_start && s.rq_issue && s.rq_complete && s.io_start <= s.rq_issue &&
                         s.rq_issue <= s.rq_complete;
  if (req_whole) {
    r.req_queue = s.rq_issue - s.io_start;
    r.req_device = s.rq_complete - s.rq_issue;
  }
  // Linked per I/O: its only request, wholly inside its kernel time.
  r.block_linked = link != AnatomyBlockLink::None && req_whole && s.nreq == 1 && s.submit <= s.io_start && s.rq_complete <= s.post;
  auto set = [&](AnatomyStage st, uint64_t from, uint64_t to) { r.stage[static_cast<int>(st)] = to - from; };
  set(AnatomyStage::Submit, s.user_submit, s.submit);
  uint64_t back = s.submit;  // where the stage that ends at `post` begins
  if (r.block_linked) {
    set(AnatomyStage::Issue, s.submit, s.io_start);
    set(AnatomyStage::Queue, s.io_start, s.rq_issue);
    set(AnatomyStage::Device, s.rq_issue, s.rq_complete);
    set(AnatomyStage::Completion, s.rq_complete, s.post);
    back = s.rq_complete;
  } else {
    set(AnatomyStage::Kernel, s.submit, s.post);
  }
  set(AnatomyStage::Reaping, s.post, s.user_reap);
  // With more than one I/O in flight the thread wakes for whichever completes.
  if (link == AnatomyBlockLink::Order && s.wake && s.run && back <= s.wake && s.wake <= s.run && s.run <= s.post) r.wakeup = s.run - s.wake;
  uint64_t sum = 0;
  for (const auto& v : r.stage)
    if (v) sum += *v;
  r.residual = static_cast<int64_t>(r.e2e) - static_cast<int64_t>(sum);
  return r;
}

}  // namespace ioacct
