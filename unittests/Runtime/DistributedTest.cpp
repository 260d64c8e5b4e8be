//===- DistributedTest.cpp - The torchrun environment and c10d ------------===//

#include "composer/Runtime/Distributed.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <future>

using namespace composer::runtime;

namespace {

/// Sets the torchrun variables for one test and clears them after.
class EnvTest : public testing::Test {
protected:
  void TearDown() override {
    for (const char *name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"})
      unsetenv(name);
  }
  void set(const char *rank, const char *world, const char *address,
           const char *port) {
    for (auto [name, value] : {std::pair{"RANK", rank},
                               {"WORLD_SIZE", world},
                               {"MASTER_ADDR", address},
                               {"MASTER_PORT", port}})
      value ? setenv(name, value, 1) : unsetenv(name);
  }
  std::string error() {
    try {
      DistributedEnv::fromEnvironment();
    } catch (const std::invalid_argument &e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(EnvTest, AbsentMeansOneProcess) {
  DistributedEnv env = DistributedEnv::fromEnvironment();
  EXPECT_FALSE(env.distributed());
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.worldSize, 1);
}

TEST_F(EnvTest, ReadsTheTorchrunContract) {
  set("2", "4", "10.0.0.7", "29555");
  setenv("LOCAL_RANK", "0", 1);
  DistributedEnv env = DistributedEnv::fromEnvironment();
  EXPECT_TRUE(env.distributed());
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.worldSize, 4);
  EXPECT_EQ(env.localRank, 0);
  EXPECT_EQ(env.masterAddr, "10.0.0.7");
  EXPECT_EQ(env.masterPort, 29555);
}

TEST_F(EnvTest, NamesWhatIsWrong) {
  set("1", nullptr, nullptr, nullptr);
  EXPECT_NE(error().find("WORLD_SIZE is not set"), std::string::npos);
  set("4", "4", "127.0.0.1", "29500");
  EXPECT_NE(error().find("RANK='4': expected an integer in [0, 3]"),
            std::string::npos)
      << error();
  set("0", "2", nullptr, "29500");
  EXPECT_NE(error().find("MASTER_ADDR is not set"), std::string::npos);
  set("0", "2", "127.0.0.1", "http");
  EXPECT_NE(error().find("MASTER_PORT='http'"), std::string::npos);
}

/// Two ranks as two threads of this process, over loopback Gloo.
TEST(CommunicatorTest, TwoRanksBroadcastReduceAndAverageGradients) {
  int port = 29000 + int(::getpid() % 1000);
  auto rankMain = [port](int rank) {
    DistributedEnv env;
    env.rank = rank;
    env.worldSize = 2;
    env.masterPort = port;
    auto communicator =
        createCommunicator(env, torch::kCPU, std::chrono::seconds(30));
    torch::Tensor weight = torch::full({3}, double(rank + 1)).requires_grad_();
    torch::Tensor counter = torch::full({1}, rank * 10, torch::kLong);
    // Gloo has no bool or bfloat16 collectives: a causal mask buffer and a
    // bf16 weight still reach every rank.
    torch::Tensor mask = torch::full({2, 2}, rank == 0, torch::kBool);
    torch::Tensor half = torch::full({2}, 0.5 * (rank + 1), torch::kBFloat16);
    communicator->broadcast({weight, counter, mask, half});
    torch::Tensor sum = torch::tensor({double(rank + 1)});
    communicator->allReduceSum(sum);
    communicator->averageGradients({weight}, /*findUnused=*/false);
    // Rank r's loss gives gradient (r + 1) * 2 per element.
    torch::Tensor loss = (weight * double(rank + 1) * 2).sum();
    communicator->prepareForBackward(loss);
    loss.backward();
    communicator->finishBackward();
    communicator->barrier();
    EXPECT_TRUE(mask.all().item<bool>());
    EXPECT_TRUE(torch::equal(half, torch::full({2}, 0.5, torch::kBFloat16)));
    return std::make_tuple(weight.detach().clone(), counter.clone(),
                           sum.item<double>(), weight.grad().clone());
  };
  auto first = std::async(std::launch::async, rankMain, 0);
  auto second = std::async(std::launch::async, rankMain, 1);
  for (auto *future : {&first, &second}) {
    auto [weight, counter, sum, grad] = future->get();
    EXPECT_TRUE(torch::equal(weight, torch::full({3}, 1.0))); // rank 0's
    EXPECT_EQ(counter.item<int64_t>(), 0);
    EXPECT_EQ(sum, 3.0);
    EXPECT_TRUE(torch::allclose(grad, torch::full({3}, 3.0))); // (2 + 4) / 2
  }
}

/// Runs `rankMain(rank, communicator)` on `worldSize` ranks (threads) of one
/// Gloo group; the results in rank order.
template <typename RankMain> auto runRanks(int worldSize, RankMain rankMain) {
  int port = 29000 + int(::getpid() % 1000) + 1;
  using Result = decltype(rankMain(0, std::declval<Communicator &>()));
  std::vector<std::future<Result>> ranks;
  for (int rank = 0; rank < worldSize; ++rank)
    ranks.push_back(std::async(std::launch::async, [=] {
      DistributedEnv env;
      env.rank = rank;
      env.worldSize = worldSize;
      env.masterPort = port;
      auto communicator =
          createCommunicator(env, torch::kCPU, std::chrono::seconds(30));
      Result result = rankMain(rank, *communicator);
      communicator->barrier();
      return result;
    }));
  std::vector<Result> results;
  for (auto &rank : ranks)
    results.push_back(rank.get());
  return results;
}

TEST(CommunicatorTest, ReduceScatterAndAllGatherOnThreeRanks) {
  constexpr int kRanks = 3;
  auto results = runRanks(kRanks, [](int rank, Communicator &communicator) {
    // Rank r contributes (r + 1) * [0, 1, ..., 11].
    torch::Tensor input = torch::arange(12, torch::kFloat) * float(rank + 1);
    torch::Tensor chunk = torch::empty({2, 2});
    communicator.reduceScatterSum(input, chunk);
    // A non-contiguous destination is filled as a contiguous one would be.
    torch::Tensor gathered = torch::empty({3, 2}).t();
    communicator.allGather(torch::full({2}, float(rank)), gathered);
    // Gloo has neither for bfloat16; they move bytes and sum here.
    torch::Tensor halfChunk = torch::empty({4}, torch::kBFloat16);
    communicator.reduceScatterSum(input.to(torch::kBFloat16), halfChunk);
    torch::Tensor halfGathered = torch::empty({6}, torch::kBFloat16);
    communicator.allGather(torch::full({2}, float(rank), torch::kBFloat16),
                           halfGathered);
    bool refused = false;
    try {
      torch::Tensor wrong = torch::empty({5});
      communicator.allGather(torch::ones({2}), wrong);
    } catch (const std::invalid_argument &) {
      refused = true;
    }
    return std::make_tuple(chunk, gathered.contiguous(), refused,
                           communicator.bytesSent(), halfChunk, halfGathered);
  });
  torch::Tensor sum = torch::arange(12, torch::kFloat) * 6; // 1 + 2 + 3
  for (int rank = 0; rank < kRanks; ++rank) {
    auto [chunk, gathered, refused, sent, halfChunk, halfGathered] =
        results[rank];
    EXPECT_TRUE(torch::equal(chunk.reshape({-1}), sum.narrow(0, 4 * rank, 4)))
        << "rank " << rank << ": " << chunk;
    torch::Tensor expected = torch::tensor({0.f, 0.f, 1.f, 1.f, 2.f, 2.f});
    EXPECT_TRUE(torch::equal(gathered.reshape({-1}), expected));
    EXPECT_TRUE(
        torch::equal(halfChunk.to(torch::kFloat), sum.narrow(0, 4 * rank, 4)));
    EXPECT_TRUE(torch::equal(halfGathered.to(torch::kFloat), expected));
    EXPECT_TRUE(refused);
    // A ring moves (N-1)/N of the data: of 48 + 24 bytes in, of 24 + 12
    // bytes out.
    EXPECT_EQ(sent.reduceScatter, 48);
    EXPECT_EQ(sent.allGather, 24);
    EXPECT_EQ(sent.allReduce, 0);
  }
}

} // namespace
