//===- MemoryMonitor.cpp - The process's memory after each batch ----------===//

#include "composer/Runtime/Callbacks.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace composer::runtime {
namespace {

struct MemoryMonitorOptions {};

class MemoryMonitor final : public Callback {
public:
  explicit MemoryMonitor(const MemoryMonitorOptions &) {}

  void runEvent(Event event, State &state, Logger &logger) override {
    if (event != Event::BatchEnd)
      return;
    std::map<std::string, double> metrics;
    // statm: total and resident pages.
    std::ifstream statm("/proc/self/statm");
    long long total = 0, resident = 0;
    if (statm >> total >> resident)
      metrics["memory/rss_bytes"] =
          double(resident) * double(sysconf(_SC_PAGESIZE));
    // The kernel's high-water mark trails the current size by a little.
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0)
      metrics["memory/peak_rss_bytes"] = std::max(
          double(usage.ru_maxrss) * 1024.0, metrics["memory/rss_bytes"]);
    logger.logMetrics(metrics, state.timestamp.batch);
  }
};

const CallbackRegistration<MemoryMonitor, MemoryMonitorOptions>
    memoryMonitorRegistration("memory_monitor", {});

} // namespace

std::unique_ptr<Callback> createMemoryMonitor() {
  return std::make_unique<MemoryMonitor>(MemoryMonitorOptions{});
}

} // namespace composer::runtime
