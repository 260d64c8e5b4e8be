//===- TokenFile.cpp - Memory-mapped token streams ------------------------===//
//
// A flat file of little-endian uint16 or uint32 tokens cut into samples of a
// fixed length, whose targets are the next tokens. The file is mapped, never
// read whole: a sample reads its own tokens (plus one) when asked for, so a
// stream of any size costs only the pages the loader touches.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Dataset.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace composer::runtime {
namespace {

class TokenFile final : public Dataset {
public:
  TokenFile(const std::string &path, int64_t sequenceLength, int tokenBytes)
      : path_(path), length_(sequenceLength), tokenBytes_(tokenBytes) {
    if (sequenceLength <= 0)
      throw std::invalid_argument(path +
                                  ": sequence length must be positive, got " +
                                  std::to_string(sequenceLength));
    if (tokenBytes != 2 && tokenBytes != 4)
      throw std::invalid_argument(path + ": tokens must be 2 or 4 bytes, got " +
                                  std::to_string(tokenBytes));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error(path +
                               ": cannot open file: " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw std::runtime_error(path + ": not a regular file");
    }
    bytes_ = size_t(st.st_size);
    const char *type = tokenBytes == 2 ? "uint16" : "uint32";
    if (bytes_ % size_t(tokenBytes) != 0) {
      ::close(fd);
      throw std::runtime_error(path + ": size " + std::to_string(bytes_) +
                               " bytes is not a multiple of " +
                               std::to_string(tokenBytes) + " (" + type +
                               " tokens)");
    }
    int64_t numTokens = int64_t(bytes_ / size_t(tokenBytes));
    if (numTokens < sequenceLength + 1) {
      ::close(fd);
      throw std::runtime_error(
          path + ": too short: " + std::to_string(numTokens) + " " + type +
          " tokens, expected at least " + std::to_string(sequenceLength + 1) +
          " for one sample of " + std::to_string(sequenceLength));
    }
    void *map = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
      throw std::runtime_error(path +
                               ": cannot map file: " + std::strerror(errno));
    data_ = static_cast<const unsigned char *>(map);
    numSamples_ = (numTokens - 1) / sequenceLength;
    spec_.kind = SampleKind::Tokens;
    spec_.inputShape = {sequenceLength};
    spec_.inputType = torch::kLong;
    spec_.targetShape = {sequenceLength};
    spec_.targetType = torch::kLong;
  }
  ~TokenFile() override {
    ::munmap(const_cast<unsigned char *>(data_), bytes_);
  }

  int64_t size() const override { return numSamples_; }
  const SampleSpec &spec() const override { return spec_; }

  /// Inputs and targets are two views of one buffer of length + 1 tokens.
  Sample get(int64_t index) const override {
    if (index < 0 || index >= numSamples_)
      throw std::out_of_range(describe(index) + ": outside the file");
    torch::Tensor tokens = torch::empty({length_ + 1}, torch::kLong);
    int64_t *out = tokens.data_ptr<int64_t>();
    const unsigned char *in =
        data_ + size_t(index * length_) * size_t(tokenBytes_);
    // Assemble each token from its bytes: correct on any host byte order.
    for (int64_t i = 0; i <= length_; ++i, in += tokenBytes_) {
      uint64_t token = uint64_t(in[0]) | (uint64_t(in[1]) << 8);
      if (tokenBytes_ == 4)
        token |= (uint64_t(in[2]) << 16) | (uint64_t(in[3]) << 24);
      out[i] = int64_t(token);
    }
    return {tokens.narrow(0, 0, length_), tokens.narrow(0, 1, length_)};
  }

  std::string describe(int64_t index) const override {
    return path_ + ": sample " + std::to_string(index);
  }

private:
  std::string path_;
  int64_t length_;
  int tokenBytes_;
  size_t bytes_ = 0;
  const unsigned char *data_ = nullptr;
  int64_t numSamples_ = 0;
  SampleSpec spec_;
};

} // namespace

std::shared_ptr<const Dataset>
openTokenFile(const std::string &path, int64_t sequenceLength, int tokenBytes) {
  return std::make_shared<TokenFile>(path, sequenceLength, tokenBytes);
}

} // namespace composer::runtime
