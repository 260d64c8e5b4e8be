//===- Remote.h - Shards downloaded into a local cache ----------*- C++ -*-===//
//
// A StreamingDataset's `remote` and `local`: files are copied from the
// remote into the local directory when first needed, each into a temporary
// name, checked, then renamed, so a killed process never leaves a partial
// file that looks whole. Processes sharing one local directory (ranks,
// workers) download each file once: a lock file per file serializes them.
// A `cache_limit` evicts the least recently used whole files that no reader
// holds.
//
// One Downloader per URL scheme: a directory path or file:// URL, and
// http(s):// through libcurl. Another scheme is refused, naming these.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_REMOTE_H
#define COMPOSER_RUNTIME_REMOTE_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace composer::runtime {

/// Copies one remote file to a local path.
class Downloader {
public:
  virtual ~Downloader();
  /// Writes the file at `url` to `path` (created or truncated). Throws
  /// std::runtime_error saying why (HTTP status, timeout, missing file).
  virtual void fetch(const std::string &url, const std::string &path,
                     double timeoutSeconds) const = 0;
};

/// The schemes a remote may use: "a directory", file://, http://, https://.
const std::vector<std::string> &supportedRemoteSchemes();
/// The downloader for `remote`'s scheme. Throws std::invalid_argument for
/// another scheme (s3://, gs://, oci:// ...), listing the supported ones.
std::unique_ptr<Downloader> downloaderFor(const std::string &remote);

/// Streaming's download_retry, download_timeout and cache_limit.
struct RemoteOptions {
  /// Attempts after the first.
  int retry = 2;
  double timeoutSeconds = 60;
  /// Bytes the local directory's downloaded files may take; 0: no limit.
  int64_t cacheLimit = 0;
};

/// A local directory filled from a remote on demand.
class ShardCache {
public:
  /// A file held for reading: eviction (by any process) skips it until the
  /// lease is released.
  class Lease {
  public:
    Lease() = default;
    explicit Lease(int fd) : fd_(fd) {}
    ~Lease();
    Lease(Lease &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Lease &operator=(Lease &&other) noexcept;
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
  };

  /// Throws std::invalid_argument for an unsupported remote scheme.
  ShardCache(std::string remote, std::string local, RemoteOptions options);

  const std::string &remote() const { return remote_; }
  const std::string &local() const { return local_; }
  /// "REMOTE/NAME" for messages and downloads.
  std::string url(const std::string &name) const;

  /// LOCAL/NAME, downloaded first unless present. `check`, given the
  /// downloaded file's temporary path, throws when it is wrong (size,
  /// hash); the download is then retried, and after the last attempt the
  /// error names the URL and the file. The file is leased to the caller.
  std::string fetch(const std::string &name,
                    const std::function<void(const std::string &)> &check,
                    Lease *lease = nullptr);
  /// Downloads done by this object (for tests and benchmarks).
  int64_t downloads() const;

  /// Queues `name` for fetch() on a background thread (Streaming's
  /// predownload). Its errors are dropped: the reader's own fetch reports
  /// them. `check` must stay callable until cancelPrefetches() returns.
  void prefetch(const std::string &name,
                std::function<void(const std::string &)> check);
  /// Drops queued prefetches and waits for the one in progress.
  void cancelPrefetches();
  ~ShardCache();

private:
  void prefetchLoop();
  void download(const std::string &name, const std::string &path,
                const std::function<void(const std::string &)> &check);
  void makeRoom(int64_t bytes, const std::string &keep);
  std::string remote_, local_, locks_;
  RemoteOptions options_;
  std::unique_ptr<Downloader> downloader_;
  mutable std::mutex mutex_;
  int64_t downloads_ = 0;
  std::condition_variable queued_;
  std::deque<std::pair<std::string, std::function<void(const std::string &)>>>
      queue_;
  bool busy_ = false, stopping_ = false;
  std::thread prefetcher_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_REMOTE_H
