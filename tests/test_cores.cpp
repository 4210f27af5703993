#include "bagel/cores.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "temp_dir.h"

namespace bagel {
namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(CgroupQuota, V2ReadsTheSmallestLimitOfTheGroupAndItsAncestors) {
  TempDir dir;
  write(dir.path() / "cpu.max", "max 100000\n");
  write(dir.path() / "user.slice/cpu.max", "400000 100000\n");
  write(dir.path() / "user.slice/job/cpu.max", "250000 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(dir.path(), "0::/user.slice/job\n"), 2.5);
  write(dir.path() / "user.slice/job/cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(dir.path(), "0::/user.slice/job\n"), 4.0);
}

TEST(CgroupQuota, V2WithoutALimitIsNone) {
  TempDir dir;
  write(dir.path() / "cpu.max", "max 100000\n");
  EXPECT_FALSE(cgroup_cpu_quota(dir.path(), "0::/\n").has_value());
  EXPECT_FALSE(cgroup_cpu_quota(dir.path() / "missing", "0::/a/b\n").has_value());
}

TEST(CgroupQuota, V1ReadsTheCpuControllersQuotaAndPeriod) {
  TempDir dir;
  write(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
  write(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::string cgroup = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(dir.path(), cgroup), 1.5);
  write(dir.path() / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");  // unlimited
  EXPECT_FALSE(cgroup_cpu_quota(dir.path(), cgroup).has_value());
}

TEST(CgroupQuota, V1InsideAContainerFindsTheGroupMountedAsTheRoot) {
  TempDir dir;  // the container sees its own group at the controller's root
  write(dir.path() / "cpu/cpu.cfs_quota_us", "300000\n");
  write(dir.path() / "cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota(dir.path(), "3:cpu:/kubepods/pod1\n"), 3.0);
}

TEST(UsableCores, OmpNumThreadsWinsAndZeroMeansAllCores) {
  const char* old = std::getenv("OMP_NUM_THREADS");
  const std::string saved = old ? old : "";
  ::setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(usable_cores(), 3);
  EXPECT_EQ(resolve_threads(0), 3);
  EXPECT_EQ(resolve_threads(5), 5);
  ::unsetenv("OMP_NUM_THREADS");
  EXPECT_GE(usable_cores(), 1);
  if (old) ::setenv("OMP_NUM_THREADS", saved.c_str(), 1);
}

}  // namespace
}  // namespace bagel
