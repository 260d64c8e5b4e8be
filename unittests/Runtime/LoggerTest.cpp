//===- LoggerTest.cpp - Loggers, progress bar and speed monitor -----------===//

#include "composer/Runtime/Logger.h"
#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/State.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace composer::runtime;
namespace fs = std::filesystem;

namespace {

/// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("composer-logger-test-" + std::to_string(getpid()) + "-" +
             info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string &name) const { return path_ / name; }
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    result.push_back(line);
  return result;
}

struct Logged {
  std::map<std::string, double> metrics;
  int64_t step;
};

/// Keeps what it is given, for the test to look at.
class Capture : public LoggerDestination {
public:
  explicit Capture(std::vector<Logged> &out) : out_(out) {}
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override {
    out_.push_back({metrics, step});
  }

private:
  std::vector<Logged> &out_;
};

//===----------------------------------------------------------------------===//
// CRC-32C and fan-out
//===----------------------------------------------------------------------===//

uint32_t mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

TEST(LoggerTest, MaskedCrc32cKnownVectors) {
  // The CRC-32C check value (RFC 3720, B.4) and the empty string's CRC (0).
  EXPECT_EQ(maskedCrc32c("123456789", 9), mask(0xE3069283u));
  EXPECT_EQ(maskedCrc32c("", 0), 0xa282ead8u);
  // 32 zero bytes: RFC 3720's first iSCSI test vector, 0x8A9136AA.
  char zeros[32] = {};
  EXPECT_EQ(maskedCrc32c(zeros, sizeof(zeros)), mask(0x8A9136AAu));
}

TEST(LoggerTest, FansOutToEveryDestination) {
  std::vector<Logged> a, b;
  Logger logger;
  logger.addDestination(std::make_unique<Capture>(a));
  logger.addDestination(std::make_unique<Capture>(b));
  logger.logMetrics({{"loss/train/total", 0.5}}, 3);
  logger.logMetrics({}, 4); // nothing to log
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].step, 3);
  EXPECT_EQ(b[0].metrics.at("loss/train/total"), 0.5);
}

//===----------------------------------------------------------------------===//
// JSONL
//===----------------------------------------------------------------------===//

TEST(JsonlLoggerTest, OneObjectPerLineAppended) {
  TempDir dir;
  fs::path path = dir / "logs/metrics.jsonl"; // the folder is created
  {
    auto logger = createJsonlLogger(path.string());
    logger->logHyperparameters({{"optimizer", "sgd"}, {"note", "a \"b\"\\\n"}});
    logger->logMetrics({{"loss/train/total", 0.123}, {"lr-sgd/group0", 0.1}},
                       1);
    logger->logMetrics({{"loss/train/total", std::nan("")},
                        {"x", INFINITY},
                        {"y", -INFINITY},
                        {"z", 1.0 / 3}},
                       2);
  }
  { // A resumed run appends.
    auto logger = createJsonlLogger(path.string());
    logger->logMetrics({{"metrics/eval/Accuracy", 0.98}}, 3);
  }
  std::vector<std::string> got = lines(readFile(path));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "{\"hyperparameters\": {\"note\": \"a \\\"b\\\"\\\\\\n\", "
                    "\"optimizer\": \"sgd\"}}");
  EXPECT_EQ(
      got[1],
      "{\"step\": 1, \"loss/train/total\": 0.123, \"lr-sgd/group0\": 0.1}");
  EXPECT_EQ(got[2], "{\"step\": 2, \"loss/train/total\": \"nan\", \"x\": "
                    "\"inf\", \"y\": \"-inf\", \"z\": 0.333333333}");
  EXPECT_EQ(got[3], "{\"step\": 3, \"metrics/eval/Accuracy\": 0.98}");
}

TEST(JsonlLoggerTest, LinesAreCompleteWhileRunning) {
  TempDir dir;
  fs::path path = dir / "metrics.jsonl";
  auto logger = createJsonlLogger(path.string());
  logger->logMetrics({{"a", 1}}, 1);
  // Still open: what a killed run leaves behind.
  EXPECT_EQ(readFile(path), "{\"step\": 1, \"a\": 1}\n");
}

TEST(JsonlLoggerTest, UnopenablePathNamesIt) {
  TempDir dir;
  std::string path = dir.path().string(); // a directory
  try {
    createJsonlLogger(path);
    FAIL() << "opened a directory";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

//===----------------------------------------------------------------------===//
// TensorBoard
//===----------------------------------------------------------------------===//

fs::path onlyEventFile(const fs::path &dir) {
  std::vector<fs::path> found;
  for (const auto &entry : fs::directory_iterator(dir))
    found.push_back(entry.path());
  EXPECT_EQ(found.size(), 1u);
  if (found.empty())
    return {};
  EXPECT_EQ(found[0].filename().string().rfind("events.out.tfevents.", 0), 0u)
      << found[0];
  return found[0];
}

template <typename T> T readLittleEndian(const std::string &bytes, size_t at) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= uint64_t(uint8_t(bytes.at(at + i))) << (8 * i);
  return static_cast<T>(value);
}

/// The data of every TFRecord, after checking its framing.
std::vector<std::string> readRecords(const std::string &file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_LE(at + 12, file.size());
    uint64_t length = readLittleEndian<uint64_t>(file, at);
    EXPECT_EQ(readLittleEndian<uint32_t>(file, at + 8),
              maskedCrc32c(file.data() + at, 8));
    EXPECT_LE(at + 12 + length + 4, file.size());
    std::string data = file.substr(at + 12, length);
    EXPECT_EQ(readLittleEndian<uint32_t>(file, at + 12 + length),
              maskedCrc32c(data.data(), data.size()));
    records.push_back(data);
    at += 12 + length + 4;
  }
  return records;
}

/// A decoded protobuf field: a varint, or the raw bytes of the others.
struct Field {
  uint32_t number, wire;
  uint64_t varint = 0;
  std::string bytes;
};

uint64_t readVarint(const std::string &data, size_t &at) {
  uint64_t value = 0;
  for (int shift = 0; at < data.size(); shift += 7) {
    uint8_t byte = data[at++];
    value |= uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80))
      return value;
  }
  ADD_FAILURE() << "truncated varint";
  return value;
}

std::vector<Field> readFields(const std::string &data) {
  std::vector<Field> fields;
  size_t at = 0;
  while (at < data.size()) {
    uint64_t key = readVarint(data, at);
    Field field{uint32_t(key >> 3), uint32_t(key & 7)};
    size_t size = 0;
    switch (field.wire) {
    case 0:
      field.varint = readVarint(data, at);
      break;
    case 1:
      size = 8;
      break;
    case 2:
      size = readVarint(data, at);
      break;
    case 5:
      size = 4;
      break;
    default:
      ADD_FAILURE() << "wire type " << field.wire;
      return fields;
    }
    field.bytes = data.substr(at, size);
    at += size;
    fields.push_back(field);
  }
  return fields;
}

TEST(TensorBoardLoggerTest, ScalarEventsRoundTrip) {
  TempDir dir;
  {
    auto logger = createTensorBoardLogger((dir / "tb").string());
    logger->logMetrics({{"loss/train/total", 0.25}, {"lr-sgd/group0", -2}}, 7);
    logger->logMetrics({{"metrics/eval/Accuracy", 0.875}}, 300);
  }
  std::vector<std::string> records =
      readRecords(readFile(onlyEventFile(dir / "tb")));
  ASSERT_EQ(records.size(), 3u);

  // Event{wall_time, file_version}.
  std::vector<Field> first = readFields(records[0]);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].number, 1u);
  EXPECT_EQ(first[0].wire, 1u);
  double wallTime;
  std::memcpy(&wallTime, first[0].bytes.data(), 8);
  EXPECT_GT(wallTime, 1.6e9);
  EXPECT_EQ(first[1].number, 3u);
  EXPECT_EQ(first[1].bytes, "brain.Event:2");

  // Event{wall_time, step, summary{value{tag, simple_value}...}}.
  auto scalars = [](const std::string &record, int64_t &step) {
    std::vector<std::pair<std::string, float>> values;
    for (const Field &field : readFields(record)) {
      if (field.number == 2 && field.wire == 0)
        step = int64_t(field.varint);
      if (field.number != 5)
        continue;
      EXPECT_EQ(field.wire, 2u);
      for (const Field &value : readFields(field.bytes)) {
        EXPECT_EQ(value.number, 1u);
        std::vector<Field> parts = readFields(value.bytes);
        EXPECT_EQ(parts.size(), 2u);
        if (parts.size() != 2)
          continue;
        EXPECT_EQ(parts[0].number, 1u);
        EXPECT_EQ(parts[1].number, 2u);
        EXPECT_EQ(parts[1].wire, 5u);
        float simple;
        std::memcpy(&simple, parts[1].bytes.data(), 4);
        values.emplace_back(parts[0].bytes, simple);
      }
    }
    return values;
  };
  int64_t step = -1;
  auto values = scalars(records[1], step);
  EXPECT_EQ(step, 7);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].first, "loss/train/total");
  EXPECT_EQ(values[0].second, 0.25f);
  EXPECT_EQ(values[1].first, "lr-sgd/group0");
  EXPECT_EQ(values[1].second, -2.0f);
  values = scalars(records[2], step);
  EXPECT_EQ(step, 300); // a two-byte varint
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].second, 0.875f);
}

TEST(TensorBoardLoggerTest, TwoWritersNeverShareAFile) {
  TempDir dir;
  auto a = createTensorBoardLogger(dir.path().string());
  auto b = createTensorBoardLogger(dir.path().string());
  size_t files = std::distance(fs::directory_iterator(dir.path()),
                               fs::directory_iterator());
  EXPECT_EQ(files, 2u);
}

/// Runs read_tfevents.py on `file`; returns its exit status and output.
std::pair<int, std::string> readWithPython(const fs::path &file,
                                           const fs::path &output) {
  std::string command = std::string(COMPOSER_PYTHON) + " " +
                        COMPOSER_SOURCE_DIR +
                        "/test/e2e_lib/read_tfevents.py '" + file.string() +
                        "' > '" + output.string() + "' 2>&1";
  int status = std::system(command.c_str());
  return {status, readFile(output)};
}

TEST(TensorBoardLoggerTest, IndependentPythonReaderAgrees) {
  TempDir dir;
  {
    auto logger = createTensorBoardLogger((dir / "tb").string());
    logger->logMetrics({{"loss/train/total", 0.5}, {"lr-sgd/group0", 0.1}}, 1);
    logger->logMetrics({{"loss/train/total", 0.375}}, 129);
  }
  fs::path file = onlyEventFile(dir / "tb");
  auto [status, output] = readWithPython(file, dir / "out.txt");
  ASSERT_EQ(status, 0) << output;
  EXPECT_EQ(output, "1 loss/train/total 0.5\n"
                    "1 lr-sgd/group0 0.100000001\n" // as float32
                    "129 loss/train/total 0.375\n");

  // A flipped byte in the last record's data is caught by its CRC.
  std::string bytes = readFile(file);
  bytes[bytes.size() - 6] ^= 0x40;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  auto [badStatus, badOutput] = readWithPython(file, dir / "bad.txt");
  EXPECT_NE(badStatus, 0);
  EXPECT_NE(badOutput.find("bad data CRC"), std::string::npos) << badOutput;
}

//===----------------------------------------------------------------------===//
// Callbacks
//===----------------------------------------------------------------------===//

State stateWithBatch(int64_t batchSize) {
  State state;
  state.batch.input = torch::zeros({batchSize, 2});
  state.time.batchesPerEpoch = 20;
  state.time.samplesPerEpoch = 20 * batchSize;
  state.time.maxDuration = {2, TimeUnit::Epoch};
  return state;
}

/// What the loop does around one batch, as far as callbacks see it.
void runBatch(Callback &callback, State &state, Logger &logger,
              std::chrono::milliseconds work = {}) {
  callback.runEvent(Event::BatchStart, state, logger);
  std::this_thread::sleep_for(work);
  Timestamp &t = state.timestamp;
  ++t.batch;
  ++t.batchInEpoch;
  t.sample += state.batch.size();
  t.sampleInEpoch += state.batch.size();
  callback.runEvent(Event::BatchEnd, state, logger);
  if (t.batchInEpoch == state.time.batchesPerEpoch) {
    ++t.epoch;
    t.batchInEpoch = t.sampleInEpoch = 0;
    callback.runEvent(Event::EpochEnd, state, logger);
  }
}

TEST(SpeedMonitorTest, ThroughputOnceTheWindowIsFull) {
  std::vector<Logged> logged;
  Logger logger;
  logger.addDestination(std::make_unique<Capture>(logged));
  State state = stateWithBatch(8);
  auto monitor = createSpeedMonitor({/*windowSize=*/3});
  for (int i = 0; i < 5; ++i)
    runBatch(*monitor, state, logger, std::chrono::milliseconds(5));

  ASSERT_EQ(logged.size(), 5u);
  double lastWall = 0;
  for (size_t i = 0; i < logged.size(); ++i) {
    const auto &metrics = logged[i].metrics;
    EXPECT_EQ(logged[i].step, int64_t(i + 1));
    double wall = metrics.at("wall_clock/train");
    EXPECT_GT(wall, lastWall);
    lastWall = wall;
    bool full = i >= 2;
    EXPECT_EQ(metrics.count("throughput/batches_per_sec"), size_t(full)) << i;
    EXPECT_EQ(metrics.count("throughput/samples_per_sec"), size_t(full)) << i;
    if (!full)
      continue;
    double batches = metrics.at("throughput/batches_per_sec");
    double samples = metrics.at("throughput/samples_per_sec");
    // Every batch takes at least 5 ms.
    EXPECT_GT(batches, 0);
    EXPECT_LE(batches, 200.0);
    EXPECT_NEAR(samples, 8 * batches, 1e-9 * samples);
  }
  EXPECT_GE(lastWall, 0.025);
}

TEST(SpeedMonitorTest, EvaluationIsNotTrainingTime) {
  std::vector<Logged> logged;
  Logger logger;
  logger.addDestination(std::make_unique<Capture>(logged));
  State state = stateWithBatch(4);
  auto monitor = createSpeedMonitor({1});
  monitor->runEvent(Event::FitStart, state, logger);
  runBatch(*monitor, state, logger);
  monitor->runEvent(Event::EvalStart, state, logger);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  monitor->runEvent(Event::EvalEnd, state, logger);
  runBatch(*monitor, state, logger);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_LT(logged[1].metrics.at("wall_clock/train"), 0.15);
}

TEST(SpeedMonitorTest, MfuOfAModelWhoseFlopsAreKnown) {
  // A linear layer 6 -> 3 without bias: 2 * 18 FLOPs forward, twice that
  // backward, per sample; the model says so in its attribute.
  torch::jit::Module model("Linear");
  model.register_parameter("w", torch::randn({6, 3}), false);
  model.register_attribute("composer_flops_per_sample", c10::FloatType::get(),
                           6.0 * 18);
  for (const char *precision : {"fp32", "amp_bf16"}) {
    std::vector<Logged> logged;
    Logger logger;
    logger.addDestination(std::make_unique<Capture>(logged));
    State state = stateWithBatch(8);
    state.model = model;
    state.worldSize = 2;
    state.precision = parsePrecision(precision);
    state.timestamp.token = 0;
    auto monitor = createSpeedMonitor({/*windowSize=*/2, 0, /*peak=*/1.5});
    monitor->runEvent(Event::FitStart, state, logger);
    for (int i = 0; i < 3; ++i)
      runBatch(*monitor, state, logger, std::chrono::milliseconds(2));
    const auto &metrics = logged.back().metrics;
    double samples = metrics.at("throughput/samples_per_sec");
    double flops = metrics.at("throughput/flops_per_sec");
    EXPECT_NEAR(flops, 108 * samples, 1e-9 * flops);
    EXPECT_NEAR(metrics.at("throughput/device/flops_per_sec"), flops / 2,
                1e-9 * flops);
    EXPECT_NEAR(metrics.at("throughput/device/mfu"), flops / 2 / 1.5e9, 1e-9);
    EXPECT_EQ(metrics.count("throughput/tokens_per_sec"), 0u);
  }
  // Without a FLOP count: throughput, and no MFU.
  std::vector<Logged> logged;
  Logger logger;
  logger.addDestination(std::make_unique<Capture>(logged));
  State state = stateWithBatch(8);
  auto monitor = createSpeedMonitor({1});
  monitor->runEvent(Event::FitStart, state, logger);
  runBatch(*monitor, state, logger);
  EXPECT_EQ(logged.back().metrics.count("throughput/samples_per_sec"), 1u);
  EXPECT_EQ(logged.back().metrics.count("throughput/device/mfu"), 0u);
}

TEST(MonitorTest, MemoryAndOptimizerNorms) {
  std::vector<Logged> logged;
  Logger logger;
  logger.addDestination(std::make_unique<Capture>(logged));
  State state = stateWithBatch(4);
  torch::Tensor w = torch::tensor({3.0, 4.0}).requires_grad_();
  torch::Tensor b = torch::tensor({1.0}).requires_grad_();
  w.mutable_grad() = torch::tensor({0.0, 2.0});
  b.mutable_grad() = torch::tensor({-1.0});
  state.parameters = {{"w", w}, {"b", b}};
  auto memory = createCallback("memory_monitor");
  auto optimizer = createCallback("optimizer_monitor");
  runBatch(*memory, state, logger);
  runBatch(*optimizer, state, logger);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_GT(logged[0].metrics.at("memory/rss_bytes"), 1e6);
  EXPECT_GE(logged[0].metrics.at("memory/peak_rss_bytes"),
            logged[0].metrics.at("memory/rss_bytes"));
  const auto &norms = logged[1].metrics;
  EXPECT_DOUBLE_EQ(norms.at("l2_norm/grad/global"), std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(norms.at("l2_norm/grad/w"), 2.0);
  EXPECT_DOUBLE_EQ(norms.at("l2_norm/param/w"), 5.0);
  EXPECT_DOUBLE_EQ(norms.at("l2_norm/param/b"), 1.0);
  // Every callback the recipe can name is registered.
  std::vector<std::string> names;
  for (const CallbackInfo *info : getRegisteredCallbacks())
    names.push_back(info->name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "early_stopper", "memory_monitor", "optimizer_monitor",
                       "profiler", "speed_monitor", "threshold_stopper"}));
}

TEST(ProfilerTest, TracesTheActiveBatchesOfTheSchedule) {
  std::string folder =
      ::testing::TempDir() + "profiler-" + std::to_string(::getpid());
  std::filesystem::remove_all(folder);
  Logger logger;
  State state = stateWithBatch(4);
  auto profiler = createCallback("profiler", {{"folder", folder},
                                              {"wait", int64_t(1)},
                                              {"warmup", int64_t(1)},
                                              {"active", int64_t(2)},
                                              {"repeat", int64_t(1)}});
  profiler->runEvent(Event::FitStart, state, logger);
  for (int i = 0; i < 6; ++i) {
    profiler->runEvent(Event::BatchStart, state, logger);
    torch::mm(torch::ones({8, 8}), torch::ones({8, 8})); // batch i's work
    runBatch(*profiler, state, logger);
  }
  profiler->runEvent(Event::FitEnd, state, logger);
  // Batches 0 (wait) and 1 (warmup) are not traced; 2 and 3 are, in one
  // file; the cycle is not repeated.
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(folder))
    files.push_back(entry.path().filename().string());
  ASSERT_EQ(files, (std::vector<std::string>{"ep0-ba2-trace.json"}));
  std::ifstream in(folder + "/ep0-ba2-trace.json");
  std::string trace((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  EXPECT_NE(trace.find("aten::mm"), std::string::npos);
  EXPECT_THROW(
      createCallback("profiler", {{"folder", folder}, {"active", int64_t(0)}}),
      std::invalid_argument);
}

/// A progress bar's output and the state of batches of 8 it is shown.
class ProgressBarTest : public testing::Test {
protected:
  std::ostringstream out;
  Logger logger;
  State state = stateWithBatch(8);
};

TEST_F(ProgressBarTest, NonInteractivePrintsEveryTenthOfAnEpoch) {
  state.loss = torch::tensor(0.4321);
  auto bar = createProgressBar(out, /*interactive=*/false);
  bar->runEvent(Event::FitStart, state, logger);
  bar->runEvent(Event::EpochStart, state, logger);
  for (int i = 0; i < 20; ++i)
    runBatch(*bar, state, logger);
  state.evalMetrics = {{"Accuracy", 0.91234}, {"CrossEntropy", 0.25}};
  bar->runEvent(Event::EvalEnd, state, logger);
  bar->runEvent(Event::EpochStart, state, logger);
  for (int i = 0; i < 3; ++i)
    runBatch(*bar, state, logger);
  bar->runEvent(Event::FitEnd, state, logger);

  std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  std::vector<std::string> got = lines(text);
  // Epoch 1: its first batch, then every 2 batches; epoch 2: batches 1 and 2
  // (10%); then the summary.
  ASSERT_EQ(got.size(), 11u + 1u + 2u + 1u) << text;
  EXPECT_EQ(got[0].rfind("[epoch 1][batch 1/20]   5% |", 0), 0u) << got[0];
  EXPECT_NE(got[0].find("loss 0.4321"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("sp/s"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("ETA "), std::string::npos) << got[0];
  EXPECT_EQ(got[10].rfind("[epoch 1][batch 20/20] 100% |", 0), 0u) << got[10];
  EXPECT_EQ(got[11], "[eval][batch 20] Accuracy 0.9123 CrossEntropy 0.2500");
  EXPECT_EQ(got[13].rfind("[epoch 2][batch 2/20]  10% |", 0), 0u) << got[13];
  EXPECT_EQ(got[14].rfind("trained 23 batches in ", 0), 0u) << got[14];
}

TEST_F(ProgressBarTest, InteractiveRedrawsOneLinePerEpoch) {
  state.loss = torch::tensor(1.5);
  auto bar = createProgressBar(out, /*interactive=*/true);
  for (int i = 0; i < 20; ++i)
    runBatch(*bar, state, logger);
  std::string text = out.str();
  EXPECT_EQ(text.front(), '\r');
  EXPECT_EQ(text.back(), '\n'); // the epoch's line is closed at its end
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_NE(text.find("[epoch 1][batch 20/20] 100%"), std::string::npos);
  EXPECT_NE(text.find("loss 1.5000"), std::string::npos);
}

} // namespace
