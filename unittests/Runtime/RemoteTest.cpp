//===- RemoteTest.cpp - Shards downloaded into a local cache --------------===//
//
// ShardCache over a directory remote: one download per file, checks that
// retry and then fail naming the URL, no partial file left, and a cache
// limit that evicts the least recently used files no reader holds. The HTTP
// downloader is tested against Python's http.server in
// test/tools/composer-train/remote-shards.test.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Remote.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

using namespace composer::runtime;
namespace fs = std::filesystem;

namespace {

std::string makeRemote(int files, size_t bytes) {
  std::string remote = testutils::makeTempDir("remote");
  for (int i = 0; i < files; ++i)
    testutils::writeFile(remote + "f" + std::to_string(i),
                         std::string(bytes, char('a' + i)));
  return remote;
}

int countFiles(const std::string &dir) {
  int n = 0;
  for (const auto &entry : fs::directory_iterator(dir))
    n += entry.is_regular_file();
  return n;
}

} // namespace

TEST(RemoteTest, DownloadsEachFileOnce) {
  std::string remote = makeRemote(2, 100);
  std::string local = testutils::makeTempDir("local");
  ShardCache cache("file://" + remote, local, {});
  std::string path = cache.fetch("f0", nullptr);
  EXPECT_EQ(path, local + "f0");
  EXPECT_EQ(fs::file_size(path), 100u);
  cache.fetch("f0", nullptr);
  EXPECT_EQ(cache.downloads(), 1);
  // Another process's cache object over the same directory finds it too.
  ShardCache other(remote, local, {});
  other.fetch("f0", nullptr);
  EXPECT_EQ(other.downloads(), 0);
}

TEST(RemoteTest, AFailedCheckRetriesThenNamesTheUrlAndLeavesNothing) {
  std::string remote = makeRemote(1, 100);
  std::string local = testutils::makeTempDir("local");
  RemoteOptions options;
  options.retry = 2;
  ShardCache cache(remote, local, options);
  int attempts = 0;
  try {
    cache.fetch("f0", [&](const std::string &downloaded) {
      ++attempts;
      EXPECT_EQ(fs::file_size(downloaded), 100u);
      throw std::runtime_error("wrong hash");
    });
    FAIL() << "the check's failure was not raised";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()), cache.url("f0") + " (for " + local +
                                         "f0): wrong hash (after 3 "
                                         "attempts)");
  }
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(countFiles(local), 0); // no temporary or partial file
  EXPECT_THROW(cache.fetch("absent", nullptr), std::runtime_error);
}

TEST(RemoteTest, CacheLimitEvictsLeastRecentlyUsedFilesNoReaderHolds) {
  std::string remote = makeRemote(4, 1000);
  std::string local = testutils::makeTempDir("local");
  RemoteOptions options;
  options.cacheLimit = 2500; // two files and a half
  ShardCache cache(remote, local, options);
  auto pause = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  ShardCache::Lease held;
  cache.fetch("f0", nullptr);
  pause();
  cache.fetch("f1", nullptr, &held); // read, and still held
  pause();
  cache.fetch("f2", nullptr);
  // f0, the least recently used, made room.
  EXPECT_FALSE(fs::exists(local + "f0"));
  EXPECT_TRUE(fs::exists(local + "f1"));
  pause();
  cache.fetch("f3", nullptr);
  // f1 is older than f2 but held: f2 goes.
  EXPECT_TRUE(fs::exists(local + "f1"));
  EXPECT_FALSE(fs::exists(local + "f2"));
  EXPECT_TRUE(fs::exists(local + "f3"));
  held = ShardCache::Lease();
  pause();
  cache.fetch("f0", nullptr); // downloaded again; f1 is now free to go
  EXPECT_FALSE(fs::exists(local + "f1"));
  EXPECT_EQ(cache.downloads(), 5);
}

TEST(RemoteTest, RefusesSchemesWithoutADownloader) {
  for (const char *url : {"s3://bucket/x", "gs://bucket/x", "oci://b/x"}) {
    try {
      downloaderFor(url);
      FAIL() << url;
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find("supported: a directory, "
                                           "file://, http://, https://"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(RemoteTest, PrefetchDownloadsInTheBackground) {
  std::string remote = makeRemote(3, 100);
  std::string local = testutils::makeTempDir("local");
  ShardCache cache(remote, local, {});
  std::atomic<int> checked{0};
  for (const char *name : {"f0", "f1", "f2"})
    cache.prefetch(name, [&](const std::string &) { ++checked; });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cache.downloads() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(cache.downloads(), 3);
  EXPECT_EQ(checked.load(), 3);
  // The reader's own fetch finds them cached.
  cache.fetch("f2", nullptr);
  EXPECT_EQ(cache.downloads(), 3);
  cache.cancelPrefetches();
}
