//===- PeakFlops.h - This machine's peak FLOP rate --------------*- C++ -*-===//
//
// The one peak table of the project: `composer-opt --report-costs` divides
// by it, and composer-train's speed monitor computes MFU with it. Standard
// C++ only (no LLVM, no LibTorch, no exceptions), so both layers include it.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_SUPPORT_PEAKFLOPS_H
#define COMPOSER_SUPPORT_PEAKFLOPS_H

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace composer::support {

/// Peak throughput in GFLOP/s, and how it was found.
struct PeakFlops {
  double fp32 = 0, bf16 = 0;
  std::string how;
};

/// Peak throughput of one core per instruction set, best first: fp32 lanes
/// of a vector register times FMA units (an FMA is 2 FLOPs). `avx` without
/// FMA has a multiply and an add port, counted as one FMA unit. Real parts
/// vary (some AVX-512 parts have one 512-bit FMA unit, Zen 4 splits 512-bit
/// ops in two): both tools take an override.
struct IsaPeak {
  const char *flag;
  int lanes;
  int fmaUnits;
};
inline constexpr IsaPeak kIsaPeaks[] = {
    {"avx512f", 16, 2},
    {"fma", 8, 2},
    {"avx", 8, 1},
    {"sse2", 4, 1},
};
/// bf16 throughput relative to fp32: AMX tiles do 1024 bf16 FLOPs a cycle
/// (16x AVX-512 fp32); AVX-512 BF16's dot product does two bf16 products
/// per fp32 lane; otherwise bf16 runs converted, at the fp32 rate.
struct Bf16Peak {
  const char *flag;
  int factor;
};
inline constexpr Bf16Peak kBf16Peaks[] = {{"amx_bf16", 16}, {"avx512_bf16", 2}};

/// Cores LibTorch computes on: OMP_NUM_THREADS when set, else the CPUs this
/// process may run on.
inline int computeCores() {
  if (const char *threads = std::getenv("OMP_NUM_THREADS")) {
    int count = std::atoi(threads);
    if (count > 0)
      return count;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return 1;
}

/// The CPU's peak from /proc/cpuinfo's flags, the rated clock (cpufreq's
/// maximum, else cpuinfo's current MHz, else 2 GHz, said so) and the cores.
inline PeakFlops detectPeakFlops() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flagsLine, mhzText;
  bool readable = bool(cpuinfo);
  auto trim = [](std::string text) {
    size_t begin = text.find_first_not_of(" \t");
    size_t end = text.find_last_not_of(" \t\r");
    return begin == std::string::npos ? std::string()
                                      : text.substr(begin, end - begin + 1);
  };
  while (std::getline(cpuinfo, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string key = trim(line.substr(0, colon));
    if (flagsLine.empty() && key == "flags")
      flagsLine = line.substr(colon + 1);
    if (mhzText.empty() && key == "cpu MHz")
      mhzText = trim(line.substr(colon + 1));
  }
  std::set<std::string> flags;
  std::istringstream words(flagsLine);
  for (std::string flag; words >> flag;)
    flags.insert(flag);

  double ghz = 0;
  std::ifstream maxFreq(
      "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (maxFreq >> khz && khz > 0)
    ghz = khz / 1e6;
  if (ghz == 0 && !mhzText.empty())
    ghz = std::atof(mhzText.c_str()) / 1e3;
  if (ghz <= 0)
    ghz = 2.0; // Unknown: a typical server clock, said so below.

  IsaPeak isa{"scalar", 1, 1};
  for (const IsaPeak &candidate : kIsaPeaks)
    if (flags.count(candidate.flag)) {
      isa = candidate;
      break;
    }
  int bf16Factor = 1;
  const char *bf16Flag = nullptr;
  for (const Bf16Peak &candidate : kBf16Peaks)
    if (flags.count(candidate.flag)) {
      bf16Factor = candidate.factor;
      bf16Flag = candidate.flag;
      break;
    }
  int cores = computeCores();
  PeakFlops peak;
  peak.fp32 = cores * isa.lanes * isa.fmaUnits * 2 * ghz;
  peak.bf16 = peak.fp32 * bf16Factor;
  char clock[32];
  std::snprintf(clock, sizeof(clock), "%.2f", ghz);
  peak.how = std::to_string(cores) + " cores x " + std::to_string(isa.lanes) +
             " fp32 lanes x " + std::to_string(isa.fmaUnits) +
             " FMA units x 2 FLOPs x " + clock + " GHz (" + isa.flag;
  if (bf16Flag)
    peak.how += "; bf16 x" + std::to_string(bf16Factor) + " by " + bf16Flag;
  if (!readable)
    peak.how += "; /proc/cpuinfo unreadable, clock assumed";
  peak.how += ")";
  return peak;
}

} // namespace composer::support

#endif // COMPOSER_SUPPORT_PEAKFLOPS_H
