// bench's option table (cli/bench_options.hpp): one row per option, every
// visible one with its help, and to_job reading the rows in --help's order.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cli/bench_cmd.hpp"
#include "cli/bench_options.hpp"
#include "common/errors.hpp"

// A namespace of its own: unit tests are built in batches (a unity build).
namespace ioacct::bench_options_test {
namespace {

TEST(BenchOptions, EveryNameIsInOneRowAndEveryVisibleRowHasItsHelp) {
  std::set<std::string> names;
  for (const BenchOption& r : bench_options()) {
    EXPECT_TRUE(names.insert(std::string(long_name(r.names))).second) << r.names << " is in two rows";
    const bool hidden = r.tune == hidden_option;
    EXPECT_EQ(r.help.empty(), hidden) << r.names;
    // A value has a type name in --help; a flag has none.
    if (!hidden) {
      EXPECT_EQ(r.type_name.empty(), std::holds_alternative<bool BenchArgs::*>(r.field)) << r.names;
    }
  }
  EXPECT_TRUE(names.count("--iodepth") && names.count("--rate-iops") && names.count("--sqpoll") && names.count("--tag"));
}

std::string usage_error(const BenchArgs& a) {
  try {
    to_job(a);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchOptions, ToJobStopsAtTheFirstWrongOptionInHelpsOrder) {
  BenchArgs a;
  a.startdelay = "x";
  a.bs = "x";  // listed before --startdelay
  EXPECT_EQ(usage_error(a), "--bs: cannot read 'x' as a size (sizes are IEC: 4k = 4096 bytes, 64KiB, 1m, 2g)");
  a.bs = "4k";
  EXPECT_EQ(usage_error(a), "--startdelay: cannot read 'x' as a duration (give a unit: 10s, 500ms, 2m, 250us)");
}

TEST(BenchOptions, PlainValuesGoIntoTheirMembersAndDefaultsStay) {
  BenchArgs a;
  a.size = "1m";
  a.ramp = "2s";
  a.no_fixed_bufs = true;
  const JobSpec j = to_job(a);
  EXPECT_EQ(j.size, 1u << 20);
  EXPECT_EQ(j.ramp, std::chrono::seconds(2));
  EXPECT_EQ(j.uring.fixed_bufs, FlagWish::Off);
  EXPECT_EQ(j.uring.fixed_files, FlagWish::Default);
  EXPECT_EQ(j.iodepth, 32u);              // BenchArgs' default, decoded as if given
  EXPECT_EQ(j.acct, AcctLevel::Latency);  // --acct not given: JobSpec's own default
}

TEST(BenchOptions, NestedMembersAndChecksAcrossOptions) {
  BenchArgs a;
  a.engine = "pvsync2";
  a.hipri_percentage = "30";
  EXPECT_EQ(usage_error(a), "--hipri-percentage: only applies with --hipri");
  a.hipri = true;
  const JobSpec j = to_job(a);
  EXPECT_EQ(j.sync.call, SyncCall::Preadv2);
  EXPECT_TRUE(j.sync.hipri);
  EXPECT_EQ(j.sync.hipri_pct, 30u);
}

}  // namespace
}  // namespace ioacct::bench_options_test
