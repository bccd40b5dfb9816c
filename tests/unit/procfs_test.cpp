// The kernel-text parsers, on fixed lines from real kernels and on lines they
// must refuse.
#include <gtest/gtest.h>

#include "acct/procfs.hpp"

namespace ioacct {
namespace {

TEST(Mountinfo, ReadsTheManPageExample) {
  auto m = parse_mountinfo_line("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->major, 98u);
  EXPECT_EQ(m->minor, 0u);
  EXPECT_EQ(m->mount_point, "/mnt2");
  EXPECT_EQ(m->fs_type, "ext3");
  EXPECT_EQ(m->source, "/dev/root");
}

TEST(Mountinfo, NoOptionalFieldsAndEscapedSpaces) {
  auto m = parse_mountinfo_line("29 1 7:3 / /mnt/with\\040space rw,relatime - ext4 /dev/loop3 rw");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mount_point, "/mnt/with space");
  EXPECT_EQ(m->major, 7u);
  EXPECT_EQ(m->minor, 3u);
  EXPECT_EQ(m->fs_type, "ext4");
}

TEST(Mountinfo, RefusesBrokenLines) {
  EXPECT_FALSE(parse_mountinfo_line(""));
  EXPECT_FALSE(parse_mountinfo_line("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw"));  // no "-"
  EXPECT_FALSE(parse_mountinfo_line("36 35 98-0 /mnt1 /mnt2 rw - ext3 /dev/root rw x"));              // no ':'
  EXPECT_FALSE(parse_mountinfo_line("36 35 98:x /mnt1 /mnt2 rw - ext3 /dev/root rw x"));
  const auto all = parse_mountinfo("garbage\n29 1 7:3 / /m rw - ext4 /dev/loop3 rw\n\n");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].mount_point, "/m");
}

TEST(Swaps, SkipsTheHeader) {
  const auto s = parse_swaps("Filename\tType\tSize\tUsed\tPriority\n/dev/loop0 partition 65532 0 -2\n/swap\\040file file 1 0 -3\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], "/dev/loop0");
  EXPECT_EQ(s[1], "/swap file");
  EXPECT_TRUE(parse_swaps("Filename\tType\tSize\tUsed\tPriority\n").empty());
}

TEST(Diskstats, ReadsEachKernelGeneration) {
  auto d17 = parse_diskstats_line(" 254       0 vda 6271 2113 512018 2400 36590 31402 4215392 56830 0 38060 62160 0 0 0 0 1817 2930");
  ASSERT_TRUE(d17);
  EXPECT_EQ(d17->fields, 17);
  EXPECT_EQ(d17->name, "vda");
  EXPECT_EQ(d17->reads, 6271u);
  EXPECT_EQ(d17->sectors_written, 4215392u);
  EXPECT_EQ(d17->io_ms, 38060u);
  EXPECT_EQ(d17->flush_ms, 2930u);
  auto d11 = parse_diskstats_line("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11");
  ASSERT_TRUE(d11);
  EXPECT_EQ(d11->fields, 11);
  EXPECT_EQ(d11->weighted_ms, 11u);
  EXPECT_EQ(d11->discards, 0u);
  auto d15 = parse_diskstats_line("8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15");
  ASSERT_TRUE(d15);
  EXPECT_EQ(d15->fields, 15);
  EXPECT_EQ(d15->discard_ms, 15u);
}

TEST(Diskstats, RefusesShortOrNonNumericLines) {
  EXPECT_FALSE(parse_diskstats_line("8 0 sda 1 2 3"));
  EXPECT_FALSE(parse_diskstats_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 x"));
  EXPECT_FALSE(parse_diskstats_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 -11"));
  EXPECT_FALSE(parse_diskstats_line(""));
}

TEST(Fdinfo, KeepsEveryFieldAndSkipsEntryDumps) {
  const auto f = parse_fdinfo(
      "pos:\t0\nSqMask:\t0x1f\nSqHead:\t4160\nSqThread:\t1234\nSqTotalTime:\t123456\n"
      "SqWorkTime:\t2345\nUserBufs:\t2\n\t0: 0x7f0000000000/4096\n 1: 0x7f0000001000/4096\n"
      "PollList:\nNewFieldFromAFutureKernel:\t7\n");
  EXPECT_EQ(fdinfo_number(f, "SqTotalTime"), 123456u);
  EXPECT_EQ(fdinfo_number(f, "SqWorkTime"), 2345u);
  EXPECT_EQ(fdinfo_number(f, "NewFieldFromAFutureKernel"), 7u);
  EXPECT_EQ(f.at("SqMask"), "0x1f");
  EXPECT_FALSE(fdinfo_number(f, "SqMask")) << "hex is kept as text, not misread as 0";
  EXPECT_FALSE(fdinfo_number(f, "PollList"));
  EXPECT_FALSE(fdinfo_number(f, "Missing"));
  EXPECT_EQ(f.count("0"), 0u);
  EXPECT_EQ(f.count("1"), 0u);
}

TEST(Fdinfo, ReadsHexMasksAndCountsEntryLines) {
  const std::string text =
      "SqMask:\t0x1f\nCqMask:\t0x3F\nSqHead:\t12\nUserFiles:\t2\n    0: /tmp/a\n    1: /tmp/b\n"
      "UserBufs:\t0\nPollList:\n  op=1, task_works=0\nCqOverflowList:\n  user_data=1, res=0, flags=0\n"
      "  user_data=2, res=0, flags=0\n  user_data=3, res=0, flags=0\nNAPI:\tdisabled\n";
  const auto f = parse_fdinfo(text);
  EXPECT_EQ(fdinfo_hex(f, "SqMask"), 31u);
  EXPECT_EQ(fdinfo_hex(f, "CqMask"), 63u);
  EXPECT_FALSE(fdinfo_hex(f, "SqHead")) << "decimal is not hex";
  EXPECT_FALSE(fdinfo_hex(f, "NAPI"));
  EXPECT_FALSE(fdinfo_hex(f, "Missing"));
  EXPECT_EQ(fdinfo_entries(text, "CqOverflowList"), 3u);
  EXPECT_EQ(fdinfo_entries(text, "UserFiles"), 2u);
  EXPECT_EQ(fdinfo_entries(text, "PollList"), 1u);
  EXPECT_EQ(fdinfo_entries(text, "UserBufs"), 0u);
  EXPECT_EQ(fdinfo_entries(text, "Missing"), 0u);
  EXPECT_EQ(fdinfo_entries("CqOverflowList:\n", "CqOverflowList"), 0u) << "the last line, no entries";
}

}  // namespace
}  // namespace ioacct
