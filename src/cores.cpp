#include "bagel/cores.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace bagel {

namespace {

std::optional<std::string> read_small_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "max 100000" (no limit) or "QUOTA PERIOD", in microseconds.
std::optional<double> parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  if (end == quota.c_str() || q <= 0) return std::nullopt;
  return q / period;
}

std::optional<double> smaller(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// cgroup v2: "0::/path". The limit may sit on any ancestor.
std::optional<double> quota_v2(const std::filesystem::path& root, const std::string& path) {
  std::optional<double> best;
  std::filesystem::path dir = std::filesystem::path(path).relative_path();
  for (;;) {
    if (const auto text = read_small_file(root / dir / "cpu.max")) best = smaller(best, parse_cpu_max(*text));
    if (dir.empty()) break;
    dir = dir.parent_path();
  }
  return best;
}

// cgroup v1: "N:cpu,cpuacct:/path". Inside a container the group's own
// folder is usually mounted as the controller's root, so try both.
std::optional<double> quota_v1(const std::filesystem::path& root, const std::string& controllers,
                               const std::string& path) {
  const std::filesystem::path rel = std::filesystem::path(path).relative_path();
  for (const std::filesystem::path& dir :
       {root / controllers / rel, root / controllers, root / "cpu" / rel, root / "cpu"}) {
    const auto quota = read_small_file(dir / "cpu.cfs_quota_us");
    const auto period = read_small_file(dir / "cpu.cfs_period_us");
    if (!quota || !period) continue;
    const double q = std::strtod(quota->c_str(), nullptr);
    const double p = std::strtod(period->c_str(), nullptr);
    return q > 0 && p > 0 ? std::optional<double>(q / p) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> cgroup_cpu_quota(const std::filesystem::path& root,
                                       const std::string& proc_self_cgroup) {
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  std::optional<double> quota;  // hybrid hierarchies list both versions
  while (std::getline(lines, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) quota = smaller(quota, quota_v2(root, path));
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ','))
      if (name == "cpu") quota = smaller(quota, quota_v1(root, controllers, path));
  }
  return quota;
}

namespace {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
}

}  // namespace

int usable_cores() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);  // "4" or "4,2" (nested levels): the first
    if (end != env && n > 0) return static_cast<int>(std::min<long>(n, 1024));
  }
  int cpus = affinity_cpus();
  const auto cgroup = read_small_file("/proc/self/cgroup");
  if (cgroup) {
    if (const auto quota = cgroup_cpu_quota("/sys/fs/cgroup", *cgroup))
      cpus = std::min(cpus, std::max(1, static_cast<int>(std::ceil(*quota - 1e-9))));
  }
  return cpus;
}

void limit_default_threads() { omp_set_num_threads(std::min(usable_cores(), affinity_cpus())); }

int resolve_threads(int requested) { return requested > 0 ? requested : usable_cores(); }

}  // namespace bagel
