// How many threads "all cores" means: the CPUs this process may run on, not
// the host's count. A container limited with `docker --cpus 2` or a
// Kubernetes CPU limit still sees every host CPU in its affinity mask; only
// the cgroup's CPU quota says it gets two CPUs' worth of time, and 64
// threads sharing two CPUs' time run slower than two.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace bagel {

// min(CPUs in the affinity mask, the cgroup CPU quota rounded up), at least
// 1. OMP_NUM_THREADS, when set to a positive number, overrides both, as it
// does for every OpenMP program.
int usable_cores();

// Sets OpenMP's default team (the parallel regions that name no count:
// reading and converting arrays) to usable_cores(), at most one thread per
// CPU of the affinity mask: the runtime's own reading of OMP_NUM_THREADS
// has no cap, and 100000 made the first parallel loop crash. Called once
// at start.
void limit_default_threads();

// `requested` threads, 0 meaning usable_cores().
int resolve_threads(int requested);

// The cgroup CPU quota in CPUs (quota / period; 2.5 for "250000 100000"),
// or nothing when unlimited or unknown. `proc_self_cgroup` is the text of
// /proc/self/cgroup; `root` is where the cgroup file systems are mounted
// (/sys/fs/cgroup). cgroup v2 reads cpu.max of the process's group and of
// every ancestor (the smallest wins); v1 reads cpu.cfs_quota_us and
// cpu.cfs_period_us of the cpu controller's group. Parameters so that tests
// can give it a made-up tree.
std::optional<double> cgroup_cpu_quota(const std::filesystem::path& root,
                                       const std::string& proc_self_cgroup);

}  // namespace bagel
