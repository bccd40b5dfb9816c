// The anatomy's pure core: how one I/O's stamps become stages, and when an
// I/O is not linked.
#include <gtest/gtest.h>

#include "trace/anatomy_split.hpp"

namespace ioacct {
namespace {

constexpr int idx(AnatomyStage s) { return static_cast<int>(s); }

// A depth-1 read on a device: every stamp, in order, with a wake-up.
AnatomyStamps device_read() {
  AnatomyStamps s;
  s.user_submit = 1000;
  s.submit = 2000;
  s.io_start = 3500;
  s.rq_issue = 4000;
  s.rq_complete = 54000;
  s.wake = 56000;
  s.run = 60000;
  s.post = 61000;
  s.user_reap = 62500;
  s.nreq = 1;
  return s;
}

// device_read() linked whole: every stage from its stamps, summing exactly.
void expect_device_read_linked(const AnatomySplit& x) {
  ASSERT_EQ(x.unlinked, AnatomyUnlinked::None);
  EXPECT_TRUE(x.block_linked);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Submit)], 1000u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Issue)], 1500u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Queue)], 500u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Device)], 50000u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Completion)], 7000u);
  EXPECT_FALSE(x.stage[idx(AnatomyStage::Kernel)]);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Reaping)], 1500u);
  EXPECT_EQ(x.e2e, 61500u);
  EXPECT_EQ(x.residual, 0);
  EXPECT_EQ(x.req_queue, 500u);
  EXPECT_EQ(x.req_device, 50000u);
}

TEST(AnatomySplit, DeviceReadAtDepthOneIsLinkedWholeAndSumsExactly) {
  const AnatomySplit x = split_io(device_read(), AnatomyBlockLink::Order);
  expect_device_read_linked(x);
  EXPECT_EQ(x.wakeup, 4000u);
}

TEST(AnatomySplit, DeeperWithDirectIoLinksTheRequestButNotTheWakeUp) {
  const AnatomySplit x = split_io(device_read(), AnatomyBlockLink::Submission);
  expect_device_read_linked(x);
  EXPECT_FALSE(x.wakeup);  // the thread wakes for whichever I/O completes
  AnatomyStamps s = device_read();
  s.nreq = 2;  // two requests (split, or the file system read its extent tree first)
  EXPECT_FALSE(split_io(s, AnatomyBlockLink::Submission).block_linked);
}

TEST(AnatomySplit, DeeperBufferedKeepsBlockStagesPerRequestOnly) {
  const AnatomySplit x = split_io(device_read(), AnatomyBlockLink::None);
  ASSERT_EQ(x.unlinked, AnatomyUnlinked::None);
  EXPECT_FALSE(x.block_linked);
  EXPECT_FALSE(x.stage[idx(AnatomyStage::Device)]);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Kernel)], 59000u);
  EXPECT_EQ(x.req_device, 50000u);  // still a per-request figure
  EXPECT_FALSE(x.wakeup);           // the thread wakes for whichever I/O completes
  EXPECT_EQ(x.residual, 0);
}

TEST(AnatomySplit, NoBlockRequestIsOneKernelStage) {  // nop, page-cache hits
  AnatomyStamps s;
  s.user_submit = 100;
  s.submit = 900;
  s.post = 1100;
  s.user_reap = 1700;
  const AnatomySplit x = split_io(s, AnatomyBlockLink::Order);
  ASSERT_EQ(x.unlinked, AnatomyUnlinked::None);
  EXPECT_FALSE(x.had_request);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Submit)], 800u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Kernel)], 200u);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Reaping)], 600u);
  EXPECT_FALSE(x.stage[idx(AnatomyStage::Issue)]);
  EXPECT_EQ(x.residual, 0);
}

TEST(AnatomySplit, StampsOutsideTheWindowUnlinkTheIo) {
  AnatomyStamps s = device_read();
  s.submit = 500;  // before the user stamp: an earlier I/O's slot
  EXPECT_EQ(split_io(s, AnatomyBlockLink::Order).unlinked, AnatomyUnlinked::NoSubmit);
  s = device_read();
  s.submit = 0;
  EXPECT_EQ(split_io(s, AnatomyBlockLink::Order).unlinked, AnatomyUnlinked::NoSubmit);
  s = device_read();
  s.post = 0;
  EXPECT_EQ(split_io(s, AnatomyBlockLink::Order).unlinked, AnatomyUnlinked::NoPost);
  s = device_read();
  s.post = 70000;  // after the reap stamp
  EXPECT_EQ(split_io(s, AnatomyBlockLink::Order).unlinked, AnatomyUnlinked::NoPost);
}

TEST(AnatomySplit, ASplitOrPartialRequestIsNotLinkedPerIo) {
  AnatomyStamps s = device_read();
  s.nreq = 2;  // the I/O was split: only the first request was followed
  AnatomySplit x = split_io(s, AnatomyBlockLink::Order);
  EXPECT_FALSE(x.block_linked);
  EXPECT_TRUE(x.stage[idx(AnatomyStage::Kernel)]);
  EXPECT_EQ(x.residual, 0);
  s = device_read();
  EXPECT_FALSE(x.end_unseen);
  s = device_read();
  s.rq_complete = 0;  // its completion was not seen
  x = split_io(s, AnatomyBlockLink::Order);
  EXPECT_FALSE(x.block_linked);
  EXPECT_FALSE(x.req_device);
  EXPECT_TRUE(x.end_unseen);
  EXPECT_EQ(x.stage[idx(AnatomyStage::Kernel)], 59000u);
  s.rq_issue = 0;  // never issued either: merged into another request, not unseen
  EXPECT_FALSE(split_io(s, AnatomyBlockLink::Order).end_unseen);
  s = device_read();
  s.rq_issue = 3000;  // before block_io_start: out of order
  x = split_io(s, AnatomyBlockLink::Order);
  EXPECT_FALSE(x.block_linked);
  EXPECT_EQ(x.residual, 0);
}

TEST(AnatomySplit, AWakeUpOutsideTheCompletionIsNotCounted) {
  AnatomyStamps s = device_read();
  s.wake = 2500;  // woke during submission, then ran through: no sleep for the completion
  s.run = 2600;
  EXPECT_FALSE(split_io(s, AnatomyBlockLink::Order).wakeup);
  s = device_read();
  s.run = 61500;  // went on CPU after the completion was posted: not this wake-up
  EXPECT_FALSE(split_io(s, AnatomyBlockLink::Order).wakeup);
}

TEST(AnatomySplit, NamesFollowTheFlavor) {
  EXPECT_EQ(anatomy_stage_name(AnatomyStage::Submit, AnatomyFlavor::Uring).to, "io_uring_submit_req");
  EXPECT_EQ(anatomy_stage_name(AnatomyStage::Submit, AnatomyFlavor::Syscall).to, "sys_enter");
  EXPECT_EQ(anatomy_stage_name(AnatomyStage::Reaping, AnatomyFlavor::Syscall).name, "return");
}

}  // namespace
}  // namespace ioacct
