//===- Profiler.cpp - Chrome traces of scheduled training batches ---------===//
//
// LibTorch's legacy profiler (RecordProfile; Debian's LibTorch has no
// Kineto) over Composer's schedule: `skip_first` batches, then cycles of
// `wait` batches unprofiled, `warmup` profiled and discarded (the
// profiler's own start-up cost stays out of the trace), and `active`
// profiled into one trace file each, `repeat` times (0: until the end).
// Each trace is Chrome's JSON (chrome://tracing, Perfetto), written to
// <folder>/ep<E>-ba<B>-trace.json, B its first batch.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/Options.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <filesystem>
#include <memory>
#include <sstream>

namespace composer::runtime {
namespace {

struct ProfilerOptions {
  std::string folder;
  int64_t skipFirst = 0;
  int64_t wait = 0;
  int64_t warmup = 1;
  int64_t active = 4;
  int64_t repeat = 1;
};

class Profiler final : public Callback {
public:
  explicit Profiler(const ProfilerOptions &options) : options_(options) {
    for (auto [key, value] : {std::pair{"skip_first", options.skipFirst},
                              {"wait", options.wait},
                              {"warmup", options.warmup},
                              {"repeat", options.repeat}})
      if (value < 0)
        throwInvalidOption("profiler", key, "must be >= 0");
    if (options.active < 1)
      throwInvalidOption("profiler", "active", "must be >= 1");
    std::error_code error;
    std::filesystem::create_directories(options.folder, error);
    if (error || options.folder.empty())
      throwInvalidOption("profiler", "folder",
                         "cannot be created: '" + options.folder + "'");
  }

  void runEvent(Event event, State &state, Logger &) override {
    if (event == Event::BatchStart)
      start(state.timestamp);
    else if (event == Event::BatchEnd || event == Event::FitEnd)
      finish(state.timestamp, event == Event::FitEnd);
  }

private:
  /// Where a batch falls in the schedule.
  enum class Phase { Off, Warmup, Active };

  Phase phaseOf(int64_t batch, bool *lastOfPhase) const {
    *lastOfPhase = false;
    int64_t t = batch - options_.skipFirst;
    int64_t cycle = options_.wait + options_.warmup + options_.active;
    if (t < 0 || (options_.repeat > 0 && t >= cycle * options_.repeat))
      return Phase::Off;
    int64_t at = t % cycle;
    if (at < options_.wait)
      return Phase::Off;
    if (at < options_.wait + options_.warmup) {
      *lastOfPhase = at + 1 == options_.wait + options_.warmup;
      return Phase::Warmup;
    }
    *lastOfPhase = at + 1 == cycle;
    return Phase::Active;
  }

  void start(const Timestamp &now) {
    bool last = false;
    Phase phase = phaseOf(now.batch, &last);
    if (phase == Phase::Warmup && !recording_) {
      discarded_ = std::make_unique<std::ostringstream>();
      recording_ = std::make_unique<torch::autograd::profiler::RecordProfile>(
          *discarded_);
    } else if (phase == Phase::Active && !active_) {
      recording_.reset();
      std::string name = "ep" + std::to_string(now.epoch) + "-ba" +
                         std::to_string(now.batch) + "-trace.json";
      active_ = true;
      recording_ = std::make_unique<torch::autograd::profiler::RecordProfile>(
          (std::filesystem::path(options_.folder) / name).string());
    }
  }

  void finish(const Timestamp &now, bool fitEnd) {
    bool last = false;
    // BATCH_END sees the finished batch's count; its index is one less.
    Phase phase = phaseOf(now.batch - 1, &last);
    if (fitEnd || (phase == Phase::Active && last)) {
      recording_.reset(); // writes the trace
      active_ = false;
    }
  }

  ProfilerOptions options_;
  std::unique_ptr<std::ostringstream> discarded_;
  std::unique_ptr<torch::autograd::profiler::RecordProfile> recording_;
  bool active_ = false;
};

const CallbackRegistration<Profiler, ProfilerOptions> profilerRegistration(
    "profiler",
    {{"folder", &ProfilerOptions::folder, "where the trace files go", true},
     {"skip_first", &ProfilerOptions::skipFirst,
      "batches before the schedule starts"},
     {"wait", &ProfilerOptions::wait, "unprofiled batches of each cycle"},
     {"warmup", &ProfilerOptions::warmup,
      "profiled, discarded batches of each cycle"},
     {"active", &ProfilerOptions::active,
      "batches of each cycle in its trace file"},
     {"repeat", &ProfilerOptions::repeat, "cycles; 0 until the end"}});

} // namespace
} // namespace composer::runtime
