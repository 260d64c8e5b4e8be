//===- StreamingResumeTest.cpp - Resuming Streaming's order elsewhere -----===//
//
// A run in Streaming's order, stopped mid-epoch and resumed with another
// global batch (as at another world size), reads every sample of the epoch
// that it had not read, once: the trainer hands the loader the samples
// already read (sample_in_epoch), and ends the epoch when the loader does.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Trainer.h"

#include "StreamingTestUtils.h"
#include "TrainerTestUtils.h"

#include <gtest/gtest.h>

#include <set>

using namespace composer::runtime;
using namespace composer::runtime::testutils;

namespace {

/// 423 samples in nine shards; each batch carries its samples' ids.
TrainerConfig streamingConfig(int64_t batchSize, const std::string &folder) {
  torch::manual_seed(1);
  auto dataset = std::make_shared<TensorDataset>(
      torch::randn({423, 4}), torch::randint(0, 3, {423}, torch::kLong),
      std::nullopt,
      std::vector<std::pair<std::string, torch::Tensor>>{
          {"id", torch::arange(423, torch::kLong)}});
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.streaming = nineShardOrder();
  TrainerConfig config;
  config.model = linearModel(4, 3, 4);
  config.trainLoader = std::make_shared<DataLoader>(dataset, options);
  config.optimizer.lr = 0.1;
  config.maxDuration = parseTime("1ep");
  config.saveFolder = folder;
  config.saveInterval = parseTime("6ba");
  return config;
}

std::vector<int64_t> batchIds(State &state) {
  torch::Tensor ids = state.batch.columns.at("id").contiguous();
  return std::vector<int64_t>(ids.data_ptr<int64_t>(),
                              ids.data_ptr<int64_t>() + ids.numel());
}

/// The ids of the batches logged before `batches` batches had been trained
/// (AfterDataloader comes before the batch is counted).
std::multiset<int64_t>
idsBefore(const std::map<int64_t, std::vector<int64_t>> &log, int64_t batches) {
  std::multiset<int64_t> ids;
  for (const auto &[batch, batchIds] : log)
    if (batch < batches)
      ids.insert(batchIds.begin(), batchIds.end());
  return ids;
}

} // namespace

TEST(StreamingResumeTest, AnotherGlobalBatchReadsTheRestOfTheEpochOnce) {
  std::string folder = tempDir("streaming-resume");
  // 6 batches of 16 (96 samples, checkpointed), then a crash.
  std::map<int64_t, std::vector<int64_t>> before, after, whole;
  TrainerConfig first = streamingConfig(16, folder);
  first.callbacks.push_back(
      recordByBatch(Event::AfterDataloader, before, batchIds));
  crashAfterBatch(std::move(first), 8);

  // Resumed with batches of 8: 96 samples are 12 of them, not 6.
  TrainerConfig resumed = streamingConfig(8, folder);
  resumed.autoresume = true;
  resumed.callbacks.push_back(
      recordByBatch(Event::AfterDataloader, after, batchIds));
  Trainer trainer(std::move(resumed));
  trainer.fit();
  EXPECT_EQ(trainer.state().timestamp.epoch, 1);

  TrainerConfig straight = streamingConfig(8, "");
  straight.callbacks.push_back(
      recordByBatch(Event::AfterDataloader, whole, batchIds));
  Trainer(std::move(straight)).fit();

  std::multiset<int64_t> seen = idsBefore(before, 6);
  ASSERT_EQ(seen.size(), 96u);
  std::multiset<int64_t> rest = idsBefore(after, INT64_MAX);
  seen.insert(rest.begin(), rest.end());
  // The same samples as the epoch read straight through: none skipped, none
  // read twice beyond Streaming's own padding.
  EXPECT_EQ(seen, idsBefore(whole, INT64_MAX));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 423u);
}
