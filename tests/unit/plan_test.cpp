// make_plans: how threads split targets, depth, --ios and --verify's blocks.
#include <gtest/gtest.h>

#include <set>

#include "runner/plan.hpp"

namespace ioacct {
namespace {

std::vector<Target> targets_of(std::initializer_list<uint64_t> ranges) {
  std::vector<Target> out;
  for (uint64_t r : ranges) out.push_back({.path = "t", .range = r});
  return out;
}

JobSpec job_with(unsigned threads, unsigned iodepth) {
  JobSpec j;
  j.threads = threads;
  j.iodepth = iodepth;
  j.bs = 4096;
  return j;
}

TEST(Plans, FewerThreadsThanTargetsStripeTheTargetsOverThreads) {
  const JobSpec job = job_with(2, 8);
  const auto plans = make_plans(job, targets_of({1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20}));
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].files, (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(plans[1].files, (std::vector<uint32_t>{1, 3}));
  for (unsigned i = 0; i < 2; ++i) {
    const Plan& p = plans[i];
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.depth, 4u);  // 8 over two threads
    EXPECT_EQ(p.cpu, -1);
    EXPECT_EQ(p.quota, UINT64_MAX);  // no --ios: no quota
    ASSERT_EQ(p.start_block.size(), p.files.size());
    ASSERT_EQ(p.stride.size(), p.files.size());
    ASSERT_EQ(p.phase.size(), p.files.size());
    for (size_t k = 0; k < p.files.size(); ++k) {
      EXPECT_EQ(p.start_block[k], 0u);
      EXPECT_EQ(p.stride[k], 1u);
      EXPECT_EQ(p.phase[k], 0u);
    }
  }
}

TEST(Plans, EveryTargetIsUsedByExactlyOneThreadWhenThereAreEnough) {
  for (unsigned threads = 1; threads <= 6; ++threads) {
    const auto plans = make_plans(job_with(threads, 32), targets_of({1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20}));
    std::multiset<uint32_t> used;
    for (const Plan& p : plans) used.insert(p.files.begin(), p.files.end());
    EXPECT_EQ(used, (std::multiset<uint32_t>{0, 1, 2, 3, 4, 5})) << threads << " threads";
  }
}

TEST(Plans, ThreadsSharingATargetStartAtEvenlySpacedBlocks) {
  // 5 threads on 2 targets: target 0 has threads 0, 2, 4; target 1 has 1, 3.
  const JobSpec job = job_with(5, 5);
  const auto plans = make_plans(job, targets_of({300 * 4096, 100 * 4096}));
  ASSERT_EQ(plans.size(), 5u);
  const uint32_t file[] = {0, 1, 0, 1, 0};
  const uint64_t start[] = {0, 0, 100, 50, 200};  // blocks * k / sharers
  for (unsigned i = 0; i < 5; ++i) {
    ASSERT_EQ(plans[i].files, std::vector<uint32_t>{file[i]}) << i;
    EXPECT_EQ(plans[i].start_block, std::vector<uint64_t>{start[i]}) << i;
    EXPECT_EQ(plans[i].stride, std::vector<uint64_t>{1}) << i;
    EXPECT_EQ(plans[i].phase, std::vector<uint64_t>{0}) << i;
    EXPECT_EQ(plans[i].depth, 1u);
  }
}

TEST(Plans, WithVerifySharersOwnDisjointSlicesOfBlocks) {
  JobSpec job = job_with(5, 5);
  job.verify = true;
  const auto plans = make_plans(job, targets_of({300 * 4096, 100 * 4096}));
  const uint64_t stride[] = {3, 2, 3, 2, 3};  // sharers of its target
  const uint64_t phase[] = {0, 0, 1, 1, 2};   // its place among them
  for (unsigned i = 0; i < 5; ++i) {
    EXPECT_EQ(plans[i].start_block, std::vector<uint64_t>{0}) << i;
    EXPECT_EQ(plans[i].stride, std::vector<uint64_t>{stride[i]}) << i;
    EXPECT_EQ(plans[i].phase, std::vector<uint64_t>{phase[i]}) << i;
  }
  // Every block of each target belongs to exactly one thread.
  for (uint32_t t = 0; t < 2; ++t) {
    const uint64_t blocks = t == 0 ? 300 : 100;
    for (uint64_t b = 0; b < blocks; ++b) {
      int owners = 0;
      for (const Plan& p : plans)
        if (p.files[0] == t && b % p.stride[0] == p.phase[0]) ++owners;
      EXPECT_EQ(owners, 1) << "target " << t << " block " << b;
    }
  }
}

TEST(Plans, IosAreSplitEvenlyWithTheRemainderToTheFirstThreads) {
  JobSpec job = job_with(3, 3);
  job.ios = 10;
  const auto plans = make_plans(job, targets_of({1 << 20}));
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].quota, 4u);
  EXPECT_EQ(plans[1].quota, 3u);
  EXPECT_EQ(plans[2].quota, 3u);

  job.ios = 2;  // fewer I/Os than threads: the last has nothing to do
  const auto few = make_plans(job, targets_of({1 << 20}));
  EXPECT_EQ(few[0].quota, 1u);
  EXPECT_EQ(few[1].quota, 1u);
  EXPECT_EQ(few[2].quota, 0u);
}

TEST(Plans, CpusAreTakenInTurnAndPsyncHasDepthOne) {
  JobSpec job = job_with(5, 10);
  job.cpus = {3, 1};
  job.engine = EngineKind::Psync;
  const auto plans = make_plans(job, targets_of({1 << 20}));
  const int cpu[] = {3, 1, 3, 1, 3};
  for (unsigned i = 0; i < 5; ++i) {
    EXPECT_EQ(plans[i].cpu, cpu[i]) << i;
    EXPECT_EQ(plans[i].depth, 1u) << i;
  }
}

}  // namespace
}  // namespace ioacct
