//===- Remote.cpp - Shards downloaded into a local cache ------------------===//

#include "composer/Runtime/Remote.h"

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace composer::runtime {
namespace {

bool startsWith(const std::string &text, const char *prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", value);
  return text;
}

/// A directory path or a file:// URL.
class FileDownloader final : public Downloader {
public:
  void fetch(const std::string &url, const std::string &path,
             double) const override {
    std::string from = startsWith(url, "file://") ? url.substr(7) : url;
    std::error_code ec;
    if (!fs::is_regular_file(from, ec))
      throw std::runtime_error("no such file");
    fs::copy_file(from, path, fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw std::runtime_error("cannot copy: " + ec.message());
  }
};

/// http:// and https:// through libcurl.
class HttpDownloader final : public Downloader {
public:
  HttpDownloader() {
    static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (init != CURLE_OK)
      throw std::runtime_error(std::string("libcurl: ") +
                               curl_easy_strerror(init));
  }

  void fetch(const std::string &url, const std::string &path,
             double timeoutSeconds) const override {
    std::unique_ptr<FILE, int (*)(FILE *)> out(std::fopen(path.c_str(), "wb"),
                                               std::fclose);
    if (!out)
      throw std::runtime_error("cannot write " + path + ": " +
                               std::strerror(errno));
    std::unique_ptr<CURL, void (*)(CURL *)> curl(curl_easy_init(),
                                                 curl_easy_cleanup);
    if (!curl)
      throw std::runtime_error("libcurl could not start a transfer");
    char error[CURL_ERROR_SIZE] = "";
    CURL *c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out.get());
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, long(timeoutSeconds * 1000));
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK && std::fflush(out.get()) != 0)
      throw std::runtime_error("cannot write " + path + ": " +
                               std::strerror(errno));
    if (rc == CURLE_OK)
      return;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_HTTP_RETURNED_ERROR)
      throw std::runtime_error("HTTP " + std::to_string(status));
    if (rc == CURLE_OPERATION_TIMEDOUT)
      throw std::runtime_error("timed out after " + seconds(timeoutSeconds));
    throw std::runtime_error(*error ? error : curl_easy_strerror(rc));
  }
};

/// The lock file's name for `name`, which may hold '/' (merged indexes).
std::string lockName(const std::string &name) {
  std::string out;
  for (char c : name)
    out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out + ".lock";
}

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Marks `path` used now: eviction takes the least recently used first.
void touch(const std::string &path) {
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
}

} // namespace

Downloader::~Downloader() = default;

const std::vector<std::string> &supportedRemoteSchemes() {
  static const std::vector<std::string> schemes{"a directory", "file://",
                                                "http://", "https://"};
  return schemes;
}

std::unique_ptr<Downloader> downloaderFor(const std::string &remote) {
  if (startsWith(remote, "http://") || startsWith(remote, "https://"))
    return std::make_unique<HttpDownloader>();
  size_t scheme = remote.find("://");
  if (startsWith(remote, "file://") || scheme == std::string::npos)
    return std::make_unique<FileDownloader>();
  std::string supported;
  for (const std::string &s : supportedRemoteSchemes())
    supported += (supported.empty() ? "" : ", ") + s;
  throw std::invalid_argument(
      "remote '" + remote + "': the " + remote.substr(0, scheme) +
      ":// scheme is not supported (supported: " + supported + ")");
}

ShardCache::Lease::~Lease() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

ShardCache::Lease &ShardCache::Lease::operator=(Lease &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ShardCache::ShardCache(std::string remote, std::string local,
                       RemoteOptions options)
    : remote_(std::move(remote)), local_(std::move(local)), options_(options),
      downloader_(downloaderFor(remote_)) {
  while (remote_.size() > 1 && remote_.back() == '/')
    remote_.pop_back();
  if (local_.empty())
    throw std::invalid_argument("remote '" + remote_ +
                                "' needs a local directory to cache it in");
  locks_ = (fs::path(local_) / ".locks").string();
  std::error_code ec;
  fs::create_directories(locks_, ec);
  if (ec)
    throw std::runtime_error(local_ +
                             ": cannot create the cache: " + ec.message());
}

std::string ShardCache::url(const std::string &name) const {
  return remote_ + "/" + name;
}

ShardCache::~ShardCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  queued_.notify_all();
  if (prefetcher_.joinable())
    prefetcher_.join();
}

void ShardCache::prefetch(const std::string &name,
                          std::function<void(const std::string &)> check) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_)
    return;
  queue_.emplace_back(name, std::move(check));
  if (!prefetcher_.joinable())
    prefetcher_ = std::thread([this] { prefetchLoop(); });
  queued_.notify_all();
}

void ShardCache::cancelPrefetches() {
  std::unique_lock<std::mutex> lock(mutex_);
  queue_.clear();
  queued_.wait(lock, [&] { return !busy_; });
}

void ShardCache::prefetchLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return;
    auto [name, check] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      fetch(name, check);
    } catch (const std::exception &) {
      // The reader's own fetch of this file reports the error.
    }
    lock.lock();
    busy_ = false;
    queued_.notify_all();
  }
}

int64_t ShardCache::downloads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return downloads_;
}

std::string
ShardCache::fetch(const std::string &name,
                  const std::function<void(const std::string &)> &check,
                  Lease *lease) {
  const std::string path = (fs::path(local_) / name).string();
  auto openLock = [&](const std::string &suffix) {
    std::string lockPath =
        (fs::path(locks_) / (lockName(name) + suffix)).string();
    int fd = ::open(lockPath.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error(lockPath +
                               ": cannot open: " + std::strerror(errno));
    return Lease(fd);
  };
  // Readers hold NAME.lock shared, and eviction takes it exclusive without
  // waiting; a download holds NAME.lock.download exclusive, so that one
  // process downloads while the others wait for its file.
  for (;;) {
    Lease reading = openLock("");
    if (isFile(path) && ::flock(reading.fd(), LOCK_SH) == 0 && isFile(path)) {
      touch(path);
      if (lease)
        *lease = std::move(reading);
      return path;
    }
    Lease downloading = openLock(".download");
    if (::flock(downloading.fd(), LOCK_EX) != 0)
      throw std::runtime_error(path + ": cannot lock: " + std::strerror(errno));
    if (!isFile(path))
      download(name, path, check);
  }
}

void ShardCache::download(
    const std::string &name, const std::string &path,
    const std::function<void(const std::string &)> &check) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string temporary =
      path + ".tmp-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  std::string why;
  for (int attempt = 0; attempt <= options_.retry; ++attempt) {
    try {
      downloader_->fetch(url(name), temporary, options_.timeoutSeconds);
      if (check)
        check(temporary);
      if (::rename(temporary.c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot rename into " + path + ": " +
                                 std::strerror(errno));
      why.clear();
      break;
    } catch (const std::exception &e) {
      why = e.what();
      ::unlink(temporary.c_str());
    }
  }
  if (!why.empty())
    throw std::runtime_error(url(name) + " (for " + path + "): " + why +
                             " (after " + std::to_string(options_.retry + 1) +
                             (options_.retry ? " attempts)" : " attempt)"));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++downloads_;
  }
  if (options_.cacheLimit > 0)
    makeRoom(0, name);
}

void ShardCache::makeRoom(int64_t bytes, const std::string &keep) {
  struct Entry {
    fs::file_time_type used;
    int64_t size;
    std::string name;
  };
  std::vector<Entry> files;
  int64_t usage = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(local_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == ".locks") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec))
      continue;
    std::string name = fs::relative(it->path(), local_, ec).string();
    int64_t size = int64_t(it->file_size(ec));
    usage += size;
    if (name != keep && name != "index.json" &&
        name.find(".tmp-") == std::string::npos)
      files.push_back({it->last_write_time(ec), size, name});
  }
  std::sort(files.begin(), files.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &file : files) {
    if (usage + bytes <= options_.cacheLimit)
      return;
    const std::string lockPath =
        (fs::path(locks_) / lockName(file.name)).string();
    int fd = ::open(lockPath.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0)
      continue;
    Lease held(fd);
    // A file some reader holds (in any process) stays.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
      continue;
    if (::unlink((fs::path(local_) / file.name).c_str()) == 0)
      usage -= file.size;
  }
}

} // namespace composer::runtime
