// Who is using the disk: the cgroup path parser and the window's rows.
#include <gtest/gtest.h>

#include "monitor/who.hpp"

namespace ioacct {
namespace {

TEST(CgroupPath, KubernetesWithTheCgroupfsDriver) {
  const CgroupNames n = parse_cgroup_path(
      "/kubepods/burstable/pod8d3e2f1a-5b6c-4d7e-8f90-a1b2c3d4e5f6/"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(n.pod_uid, "8d3e2f1a-5b6c-4d7e-8f90-a1b2c3d4e5f6");
  EXPECT_EQ(n.qos, "burstable");
  EXPECT_EQ(n.container_id, "0123456789ab");
  EXPECT_EQ(n.unit, "");
}

TEST(CgroupPath, KubernetesWithTheSystemdDriver) {
  const CgroupNames n = parse_cgroup_path(
      "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8d3e2f1a_5b6c_4d7e_8f90_a1b2c3d4e5f6.slice/"
      "cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope");
  EXPECT_EQ(n.pod_uid, "8d3e2f1a-5b6c-4d7e-8f90-a1b2c3d4e5f6");
  EXPECT_EQ(n.qos, "besteffort");
  EXPECT_EQ(n.container_id, "fedcba987654");
  EXPECT_EQ(n.runtime, "cri-containerd");
  EXPECT_EQ(n.unit, "") << "a container's scope is not a unit to name";
}

TEST(CgroupPath, AGuaranteedPodHasNoQosLevel) {
  const CgroupNames n =
      parse_cgroup_path("/kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice/"
                        "crio-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.scope");
  EXPECT_EQ(n.pod_uid, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(n.qos, "guaranteed");
  EXPECT_EQ(n.runtime, "crio");
  EXPECT_EQ(n.container_id, "aaaaaaaaaaaa");
}

TEST(CgroupPath, DockerAndSystemdUnits) {
  EXPECT_EQ(parse_cgroup_path("/system.slice/postgresql.service").unit, "postgresql.service");
  EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/session-4.scope").unit, "session-4.scope");
  const CgroupNames d = parse_cgroup_path("/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope");
  EXPECT_EQ(d.runtime, "docker");
  EXPECT_EQ(d.container_id, "0123456789ab");
  EXPECT_EQ(d.unit, "");
  const CgroupNames c = parse_cgroup_path("/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(c.runtime, "docker");
  EXPECT_EQ(c.container_id, "0123456789ab");
}

TEST(CgroupPath, PlainPathsSayNothing) {
  for (const char* p : {"/", "", "/ioacct-test/reader", "/pod-not-a-uid/x", "/kubepods/burstable/podxyz"}) {
    const CgroupNames n = parse_cgroup_path(p);
    EXPECT_EQ(n.pod_uid, "") << p;
    EXPECT_EQ(n.container_id, "") << p;
    EXPECT_EQ(n.unit, "") << p;
  }
}

BusyWho who(uint64_t cgroup, uint64_t reads, uint64_t share) {
  BusyWho w;
  w.cgroup = cgroup;
  w.ios[BusyWho::kRead] = reads;
  w.bytes[BusyWho::kRead] = reads * 4096;
  w.share_ns = share;
  w.inflight_ns = share;
  return w;
}

TEST(WhoRows, AWindowIsSortedByShareAndNamed) {
  BusyCounters a, b;
  a.stamp_ns = 1'000'000'000;
  b.stamp_ns = 2'000'000'000;
  a.busy_ns = 0;
  b.busy_ns = 300'000'000;
  a.who = {who(7, 10, 0)};
  // A cgroup idle in the window has no row; one new since the last read does.
  b.who = {who(7, 110, 100'000'000), who(8, 0, 0), who(9, 50, 200'000'000)};
  WhoNames names;
  names.cgroups[7] = "/a";
  names.cgroups[9] = "/system.slice/b.service";
  const auto rows = who_rows(a, b, BusyBy::Cgroup, names);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cgroup, "/system.slice/b.service");
  EXPECT_EQ(rows[0].names.unit, "b.service");
  EXPECT_EQ(rows[0].reads, 50u);
  EXPECT_DOUBLE_EQ(rows[0].busy_share_pct, 20.0);
  EXPECT_NEAR(*rows[0].share_of_busy_pct, 66.667, 0.001);
  EXPECT_EQ(rows[1].cgroup, "/a");
  EXPECT_EQ(rows[1].reads, 100u);
  EXPECT_EQ(rows[1].read_bytes, 100u * 4096);
  EXPECT_FALSE(rows[1].pid) << "by cgroup: no pid";
}

TEST(WhoRows, ARemovedCgroupKeepsItsIdWithoutAPath) {
  BusyCounters a, b;
  b.stamp_ns = 1000;
  b.busy_ns = 10;
  b.who = {who(42, 1, 10)};
  const auto rows = who_rows(a, b, BusyBy::Cgroup, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cgroup_id, 42u);
  EXPECT_FALSE(rows[0].cgroup);
}

}  // namespace
}  // namespace ioacct
