//===- ProgressBar.cpp - Training progress on the console -----------------===//
//
//   [epoch 1][batch 120/469]  25% |█████               | loss 0.4321 |
//   812.3 sp/s | ETA 0:01:23
//
// (one line). Speed and ETA come from the time spent training so far, which
// leaves out evaluation and checkpointing; the ETA is that average batch time
// times the batches left in the run.
//
//===----------------------------------------------------------------------===//

#include "BatchTimer.h"
#include "composer/Runtime/Callbacks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

namespace composer::runtime {

namespace {

using Clock = std::chrono::steady_clock;

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?:??:??";
  auto total = static_cast<int64_t>(std::llround(seconds));
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld",
                static_cast<long long>(total / 3600),
                static_cast<long long>(total / 60 % 60),
                static_cast<long long>(total % 60));
  return buffer;
}

/// Terminal columns of UTF-8 text (every code point is one column here).
size_t columns(const std::string &text) {
  return std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

class ProgressBar : public Callback {
public:
  ProgressBar(std::ostream &out, bool interactive)
      : out_(out), interactive_(interactive) {}

  void runEvent(Event event, State &state, Logger & /*logger*/) override {
    std::optional<TimedBatch> batch = timer_.observe(event, state);
    switch (event) {
    case Event::EvalEnd:
      printEval(state);
      break;
    case Event::BatchEnd:
      batchEnd(state, batch);
      break;
    case Event::EpochEnd:
      // A line for the epoch's last batch, unless one is up already.
      if (!interactive_ && !lastLine_.empty() && !lastLinePrinted_)
        printLine(lastLine_);
      endLine();
      break;
    case Event::FitEnd:
      endLine();
      if (batchesTimed_ > 0)
        out_ << "trained " << batchesTimed_ << " batches in "
             << formatDuration(trainSeconds_) << speed() << '\n';
      out_.flush();
      break;
    default:
      break;
    }
  }

private:
  void printEval(const State &state) {
    if (state.evalMetrics.empty())
      return;
    endLine();
    out_ << "[" << (state.evalLabel.empty() ? "eval" : state.evalLabel)
         << "][batch " << state.timestamp.batch << "]";
    char buffer[64];
    for (const auto &[name, value] : state.evalMetrics) {
      std::snprintf(buffer, sizeof(buffer), " %s %.4f", name.c_str(), value);
      out_ << buffer;
    }
    out_ << '\n';
    out_.flush();
  }

  void batchEnd(State &state, const std::optional<TimedBatch> &batch) {
    Clock::time_point now = Clock::now();
    if (batch) {
      trainSeconds_ += batch->seconds;
      ++batchesTimed_;
      samplesTimed_ += batch->samples;
    }

    const Timestamp &t = state.timestamp;
    int64_t perEpoch = std::max<int64_t>(state.time.batchesPerEpoch, 1);
    // The loop counts the batch before BATCH_END: 1..perEpoch.
    int64_t inEpoch = std::clamp<int64_t>(t.batchInEpoch, 0, perEpoch);
    double remaining = std::max(0.0, state.time.maxBatches() - double(t.batch));
    bool epochDone = inEpoch == perEpoch;
    bool runDone = remaining <= 0;

    if (t.epoch != epoch_) {
      epoch_ = t.epoch;
      printedTenths_ = -1;
    }
    int64_t tenths = inEpoch * 10 / perEpoch;
    bool due;
    if (interactive_)
      due = epochDone || runDone || !lastDraw_ ||
            now - *lastDraw_ >= std::chrono::milliseconds(100);
    else
      due = tenths > printedTenths_ || runDone;

    lastLine_ = line(state, inEpoch, perEpoch, remaining);
    lastLinePrinted_ = false;
    if (!due)
      return;
    printedTenths_ = tenths;
    lastDraw_ = now;
    printLine(lastLine_);
  }

  std::string line(const State &state, int64_t inEpoch, int64_t perEpoch,
                   double remaining) const {
    constexpr int width = 20;
    int filled = int(inEpoch * width / perEpoch);
    std::string bar;
    for (int i = 0; i < width; ++i)
      bar += i < filled ? "\u2588" : " ";
    char buffer[128];
    std::snprintf(
        buffer, sizeof(buffer), "[epoch %lld][batch %lld/%lld] %3d%% |",
        static_cast<long long>(state.timestamp.epoch + 1),
        static_cast<long long>(inEpoch), static_cast<long long>(perEpoch),
        int(inEpoch * 100 / perEpoch));
    std::string text = buffer + bar + "|";
    if (state.loss.defined() && state.loss.numel() > 0) {
      torch::Tensor loss = state.loss.detach();
      double value = (loss.numel() == 1 ? loss : loss.mean()).item<double>();
      std::snprintf(buffer, sizeof(buffer), " loss %.4f |", value);
      text += buffer;
    }
    text += speed();
    if (batchesTimed_ > 0)
      text += " | ETA " +
              formatDuration(trainSeconds_ / double(batchesTimed_) * remaining);
    return text;
  }

  std::string speed() const {
    if (trainSeconds_ <= 0)
      return "";
    char buffer[48];
    std::snprintf(buffer, sizeof(buffer), " %.1f sp/s",
                  double(samplesTimed_) / trainSeconds_);
    return buffer;
  }

  void printLine(const std::string &text) {
    if (interactive_) {
      // Blank out what is left of a longer previous line.
      size_t width = columns(text);
      size_t pad = drawnLength_ > width ? drawnLength_ - width : 0;
      out_ << '\r' << text << std::string(pad, ' ');
      drawnLength_ = width;
      lineOpen_ = true;
    } else {
      out_ << text << '\n';
    }
    out_.flush();
    lastLinePrinted_ = true;
  }

  /// Moves past a redrawn line so the next output starts on its own.
  void endLine() {
    if (lineOpen_)
      out_ << '\n';
    lineOpen_ = false;
    drawnLength_ = 0;
  }

  std::ostream &out_;
  bool interactive_;
  BatchTimer timer_;
  std::optional<Clock::time_point> lastDraw_;
  double trainSeconds_ = 0;
  int64_t batchesTimed_ = 0, samplesTimed_ = 0;
  int64_t epoch_ = -1, printedTenths_ = -1;
  std::string lastLine_;
  bool lastLinePrinted_ = false;
  bool lineOpen_ = false;
  size_t drawnLength_ = 0;
};

} // namespace

std::unique_ptr<Callback> createProgressBar(std::ostream &out,
                                            bool interactive) {
  return std::make_unique<ProgressBar>(out, interactive);
}

} // namespace composer::runtime
