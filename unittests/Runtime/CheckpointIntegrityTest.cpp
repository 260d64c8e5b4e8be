//===- CheckpointIntegrityTest.cpp - Damaged checkpoints are not loaded ---===//
//
// Every archive entry's CRC-32 is checked when a checkpoint is read, and
// --autoresume takes the newest checkpoint that verifies, warning about the
// newer ones it skips and keeping them on disk. A write that fails leaves
// the previous checkpoint the newest, whole.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Checkpoint.h"
#include "composer/Runtime/Trainer.h"

#include "../../runtime/ZipIntegrity.h"
#include "TrainerTestUtils.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include <sys/resource.h>

using namespace composer::runtime;
using namespace composer::runtime::testutils;
namespace fs = std::filesystem;

namespace {

/// Two epochs of 4 batches of a linear model, checkpointed every 2 batches.
TrainerConfig smallRun(const std::string &folder) {
  torch::manual_seed(3);
  auto dataset = std::make_shared<TensorDataset>(
      torch::randn({64, 4}), torch::randint(0, 3, {64}, torch::kLong));
  DataLoaderOptions options;
  options.batchSize = 16;
  TrainerConfig config;
  config.model = linearModel(4, 3, 7);
  config.trainLoader = std::make_shared<DataLoader>(dataset, options);
  config.optimizer.lr = 0.1;
  config.optimizer.momentum = 0.9;
  config.maxDuration = parseTime("2ep");
  config.saveFolder = folder;
  config.saveInterval = parseTime("2ba");
  return config;
}

/// Overwrites `count` bytes in the middle of `path` with zeros.
void zeroMiddle(const std::string &path, size_t count) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(std::streamoff(fs::file_size(path) / 2));
  std::string zeros(count, '\0');
  file.write(zeros.data(), std::streamsize(count));
}

std::string errorOf(const std::function<void()> &run) {
  try {
    run();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

std::map<std::string, torch::Tensor> parameters(Trainer &trainer) {
  std::map<std::string, torch::Tensor> result;
  for (const auto &p : trainer.state().model.named_parameters())
    result[p.name] = p.value.clone();
  return result;
}

} // namespace

TEST(CheckpointIntegrityTest, EveryEntrysCrcIsChecked) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("weights", torch::arange(1000, torch::kFloat));
  std::vector<char> bytes = torch::pickle_save(dict);
  EXPECT_GE(checkZipEntries(bytes.data(), bytes.size()), 2u);
  // The middle of the archive is the tensor's 4,000 bytes.
  std::vector<char> damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x40;
  std::string error =
      errorOf([&] { checkZipEntries(damaged.data(), damaged.size()); });
  EXPECT_NE(error.find("data/0' fails its CRC-32 check"), std::string::npos)
      << error;
  std::vector<char> truncated(bytes.begin(), bytes.end() - 30);
  error = errorOf([&] { checkZipEntries(truncated.data(), truncated.size()); });
  EXPECT_NE(error.find("truncated archive"), std::string::npos) << error;
}

TEST(CheckpointIntegrityTest, DamagedCheckpointIsRefusedNamingFileAndEntry) {
  std::string folder = tempDir("integrity-refused");
  Trainer(smallRun(folder)).fit();
  std::string newest = folder + "/ep1-ba8.ckpt";
  EXPECT_NO_THROW(verifyCheckpoint(newest));
  zeroMiddle(newest, 100);
  std::string error = errorOf([&] { verifyCheckpoint(newest); });
  EXPECT_NE(error.find(newest + ": corrupt or truncated checkpoint (entry '"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("fails its CRC-32 check"), std::string::npos) << error;
}

TEST(CheckpointIntegrityTest, AutoresumeFallsBackToTheNewestThatVerifies) {
  std::string straightDir = tempDir("integrity-straight");
  Trainer straight(smallRun(straightDir));
  straight.fit();

  // A run killed after batch 7, its newest checkpoint (batch 6) damaged.
  std::string folder = tempDir("integrity-fallback");
  crashAfterBatch(smallRun(folder), 7);
  zeroMiddle(folder + "/ep1-ba6.ckpt", 100);
  TrainerConfig again = smallRun(folder);
  again.autoresume = true;
  Trainer resumed(std::move(again));
  resumed.fit();
  ASSERT_TRUE(resumed.resumedFrom());
  EXPECT_EQ(fs::path(*resumed.resumedFrom()).filename(), "ep0-ba4.ckpt");
  ASSERT_FALSE(resumed.warnings().empty());
  EXPECT_NE(resumed.warnings()[0].find("ep1-ba6.ckpt: corrupt or truncated"),
            std::string::npos)
      << resumed.warnings()[0];
  // From batch 4 the run ends as the straight one did.
  auto a = parameters(straight), b = parameters(resumed);
  for (const auto &[name, tensor] : a)
    EXPECT_TRUE(torch::equal(tensor, b.at(name))) << name;
}

TEST(CheckpointIntegrityTest, AutoresumeListsEveryCheckpointWhenNoneVerifies) {
  std::string folder = tempDir("integrity-none");
  crashAfterBatch(smallRun(folder), 5);
  zeroMiddle(folder + "/ep0-ba4.ckpt", 100);
  fs::resize_file(folder + "/ep0-ba2.ckpt", 200);
  TrainerConfig again = smallRun(folder);
  again.autoresume = true;
  std::string error = errorOf([&] { Trainer(std::move(again)).fit(); });
  EXPECT_NE(error.find("autoresume: no checkpoint in " + folder + " verifies"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("ep0-ba4.ckpt: corrupt"), std::string::npos) << error;
  EXPECT_NE(error.find("ep0-ba2.ckpt: corrupt"), std::string::npos) << error;
  // Nothing was deleted.
  EXPECT_TRUE(fs::exists(folder + "/ep0-ba4.ckpt"));
  EXPECT_TRUE(fs::exists(folder + "/ep0-ba2.ckpt"));
}

TEST(CheckpointIntegrityTest, AFailedWriteKeepsThePreviousCheckpoint) {
  std::string folder = tempDir("integrity-full");
  Trainer(smallRun(folder)).fit();
  std::string before = folder + "/ep1-ba8.ckpt";
  // Files may grow to 2,000 bytes, as on a full disk (EFBIG instead of
  // ENOSPC; SIGXFSZ ignored so that the write fails instead of the process).
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 2000;
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  TrainerConfig longer = smallRun(folder);
  longer.autoresume = true;
  longer.maxDuration = parseTime("3ep");
  std::string error = errorOf([&] { Trainer(std::move(longer)).fit(); });
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_NE(error.find(folder + "/ep2-ba10.ckpt: cannot write checkpoint: "),
            std::string::npos)
      << error;
  // The previous checkpoint is still the newest, whole; nothing partial.
  EXPECT_FALSE(fs::exists(folder + "/ep2-ba10.ckpt"));
  EXPECT_FALSE(fs::exists(folder + "/ep2-ba10.ckpt.tmp"));
  std::ifstream latest(folder + "/latest");
  std::string name;
  std::getline(latest, name);
  EXPECT_EQ(name, "ep1-ba8.ckpt");
  EXPECT_NO_THROW(verifyCheckpoint(before));
}
