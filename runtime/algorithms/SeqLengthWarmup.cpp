//===- SeqLengthWarmup.cpp - Short sequences early (Li et al. 2021) -------===//
//
// The sequence length grows from `min_seq_length` to `max_seq_length` in
// steps of `step_size` over the first `duration` of the run, by Composer's
// schedule; token batches ([B, T] inputs and targets) are truncated to it, or
// reshaped into more sequences of that length (dropping the remainder).
// With preserve_end_of_sequence, a truncated sequence ends with its last
// token (and target).
// Time in tokens counts the tokens trained on (State::batchTokens); samples
// count those loaded.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct SeqLengthWarmupOptions {
  double duration = 0.3;
  int64_t minSeqLength = 8;
  int64_t maxSeqLength = 1024;
  int64_t stepSize = 8;
  bool truncate = true;
  bool preserveEndOfSequence = false;
};

class SeqLengthWarmup final : public Algorithm {
public:
  explicit SeqLengthWarmup(const SeqLengthWarmupOptions &options)
      : duration_(options.duration), min_(options.minSeqLength),
        max_(options.maxSeqLength), step_(options.stepSize),
        truncate_(options.truncate),
        preserveEnd_(options.preserveEndOfSequence) {
    auto fail = [](const char *option, const std::string &problem,
                   std::vector<std::string> related = {}) {
      throwInvalidOption("seq_length_warmup", option, problem,
                         std::move(related));
    };
    checkOptionInterval("seq_length_warmup", "duration", duration_, 0, 1);
    if (min_ < 1)
      fail("min_seq_length", "must be >= 1, got " + std::to_string(min_));
    if (max_ < min_)
      fail("max_seq_length",
           "(" + std::to_string(max_) + ") must be >= min_seq_length (" +
               std::to_string(min_) + ")",
           {"min_seq_length"});
    if (step_ < 1)
      fail("step_size", "must be >= 1, got " + std::to_string(step_));
  }

  std::string name() const override { return "seq_length_warmup"; }

  bool match(Event event, const State &state) const override {
    return event == Event::AfterDataloader && state.batch.size() > 0 &&
           state.batch.input.dim() == 2;
  }

  void apply(Event, State &state, Logger &logger) override {
    Batch &batch = state.batch;
    int64_t length = lengthAt(state);
    int64_t rows = batch.input.size(0), columns = batch.input.size(1);
    if (length < columns) {
      if (truncate_) {
        batch.input = truncated(batch.input, length);
        if (batch.target.dim() >= 2)
          batch.target = truncated(batch.target, length);
        // Per-token columns (attention masks) are cut alike.
        for (auto &[name, values] : batch.columns)
          if (values.dim() >= 2 && values.size(1) == columns)
            values = truncated(values, length);
        state.batchTokens = state.batchTokens / columns * length;
      } else {
        if (batch.target.sizes() != batch.input.sizes())
          throw std::runtime_error(
              "seq_length_warmup: truncate=false needs targets shaped as the "
              "inputs ([B, T])");
        for (const auto &[name, values] : batch.columns)
          if (values.sizes() != batch.input.sizes())
            throw std::runtime_error(
                "seq_length_warmup: truncate=false needs every column shaped "
                "as the inputs ([B, T]); '" +
                name + "' is not");
        int64_t kept = rows * columns / length * length;
        auto reshape = [&](const torch::Tensor &t) {
          return t.reshape({-1}).narrow(0, 0, kept).view({-1, length});
        };
        batch.input = reshape(batch.input);
        batch.target = reshape(batch.target);
        for (auto &[name, values] : batch.columns)
          values = reshape(values);
        state.batchTokens -= rows * columns - kept;
      }
    }
    logger.logMetrics(
        {{"seq_length_warmup/curr_seq_len", double(std::min(length, columns))},
         {"seq_length_warmup/curr_bs", double(batch.input.size(0))}},
        state.timestamp.batch + 1);
  }

  /// The first `length` positions of [B, T, ...] `sequences`; with
  /// preserve_end_of_sequence, the last one is the sequence's last (Composer
  /// finds it from the attention mask; our token batches have none, so every
  /// sequence is full length).
  torch::Tensor truncated(const torch::Tensor &sequences,
                          int64_t length) const {
    torch::Tensor kept =
        sequences.narrow(1, 0, length).clone(torch::MemoryFormat::Contiguous);
    if (preserveEnd_)
      kept.select(1, length - 1).copy_(sequences.select(1, -1));
    return kept;
  }

  /// Composer's schedule: + step_size every (warmup / updates) batches.
  int64_t lengthAt(const State &state) const {
    auto steps = int64_t(state.time.maxBatches());
    auto warmup = int64_t(double(steps) * duration_);
    int64_t updates = (max_ - min_) / step_;
    if (updates <= 0 || warmup <= 0)
      return max_;
    int64_t every = warmup / updates;
    int64_t batch = state.timestamp.batch;
    // Composer divides by zero when the warmup has fewer batches than
    // updates; grow linearly over it instead.
    int64_t done = every > 0 ? batch / every : batch * updates / warmup;
    return std::clamp(min_ + step_ * done, min_, max_);
  }

private:
  double duration_;
  int64_t min_, max_, step_;
  bool truncate_, preserveEnd_;
};

const AlgorithmRegistration<SeqLengthWarmup, SeqLengthWarmupOptions>
    seqLengthWarmupRegistration(
        "seq_length_warmup",
        {{"duration", &SeqLengthWarmupOptions::duration,
          "fraction of the run over which the length grows"},
         {"min_seq_length", &SeqLengthWarmupOptions::minSeqLength,
          "the first length"},
         {"max_seq_length", &SeqLengthWarmupOptions::maxSeqLength,
          "the length after warmup"},
         {"step_size", &SeqLengthWarmupOptions::stepSize,
          "the length grows in these steps"},
         {"truncate", &SeqLengthWarmupOptions::truncate,
          "truncate sequences; false: reshape them into more, shorter ones"},
         {"preserve_end_of_sequence",
          &SeqLengthWarmupOptions::preserveEndOfSequence,
          "a truncated sequence ends with its last token; ignored unless "
          "truncate"}});

} // namespace
} // namespace composer::runtime
