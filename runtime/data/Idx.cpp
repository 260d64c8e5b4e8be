//===- Idx.cpp - IDX datasets ---------------------------------------------===//
//
// MNIST-style IDX files: a big-endian header (magic, then one uint32 per
// dimension) followed by raw uint8 data. zlib's gz* functions read gzip and
// plain files alike, so one code path serves both.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Dataset.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <stdexcept>

namespace composer::runtime {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803; // uint8, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801; // uint8, 1 dimension

std::string hex(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08X", value);
  return buf;
}

/// An open IDX file whose reads fail with messages naming it.
class IdxReader {
public:
  explicit IdxReader(const std::string &path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (!file_)
      fail("cannot open file");
    // A large buffer keeps inflate running in big strides.
    gzbuffer(file_, 1 << 20);
  }
  ~IdxReader() {
    if (file_)
      gzclose(file_);
  }
  IdxReader(const IdxReader &) = delete;
  IdxReader &operator=(const IdxReader &) = delete;

  [[noreturn]] void fail(const std::string &what) const {
    throw std::runtime_error(path_ + ": " + what);
  }

  /// Reads up to `size` bytes; returns how many were read.
  size_t read(void *data, size_t size) {
    auto *out = static_cast<char *>(data);
    size_t done = 0;
    while (done < size) {
      // gzread counts in unsigned but returns int: read in < 2 GiB chunks.
      unsigned chunk =
          static_cast<unsigned>(std::min<size_t>(size - done, size_t(1) << 30));
      int got = gzread(file_, out + done, chunk);
      if (got < 0) {
        int code = 0;
        const char *msg = gzerror(file_, &code);
        fail(std::string("read error: ") + (msg ? msg : "unknown"));
      }
      if (got == 0)
        break;
      done += static_cast<size_t>(got);
    }
    return done;
  }

  uint32_t readBigEndian32(const char *what) {
    std::array<unsigned char, 4> b{};
    if (read(b.data(), 4) != 4)
      fail(std::string("truncated header: missing ") + what);
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) |
           (uint32_t(b[2]) << 8) | uint32_t(b[3]);
  }

  void expectMagic(uint32_t expected, const char *kind) {
    uint32_t magic = readBigEndian32("magic number");
    if (magic != expected)
      fail("bad magic number " + hex(magic) + ", expected " + hex(expected) +
           " (" + kind + ")");
  }

  /// Fills `tensor` (contiguous uint8) from the rest of the file.
  void readData(torch::Tensor &tensor, const char *what) {
    size_t want = static_cast<size_t>(tensor.numel());
    size_t got = read(tensor.data_ptr<uint8_t>(), want);
    if (got != want)
      fail("truncated: expected " + std::to_string(want) + " bytes of " + what +
           ", got " + std::to_string(got));
  }

private:
  std::string path_;
  gzFile file_ = nullptr;
};

} // namespace

std::shared_ptr<TensorDataset> loadIdx(const std::string &imagesPath,
                                       const std::string &labelsPath) {
  torch::Tensor inputs, targets;
  int64_t numImages = 0;
  {
    IdxReader images(imagesPath);
    images.expectMagic(kImagesMagic, "IDX uint8 images with 3 dimensions");
    uint32_t n = images.readBigEndian32("image count");
    uint32_t rows = images.readBigEndian32("row count");
    uint32_t cols = images.readBigEndian32("column count");
    if (rows == 0 || cols == 0)
      images.fail("bad image size " + std::to_string(rows) + "x" +
                  std::to_string(cols) + ", expected nonzero rows and columns");
    // Each count is below 2^32, so the product of two fits; guard the third.
    uint64_t pixels = uint64_t(rows) * cols;
    if (n != 0 && pixels > uint64_t(INT64_MAX) / n)
      images.fail("image dimensions overflow");
    numImages = n;
    inputs = torch::empty({int64_t(n), 1, int64_t(rows), int64_t(cols)},
                          torch::kUInt8);
    images.readData(inputs, "image data");
  }
  {
    IdxReader labels(labelsPath);
    labels.expectMagic(kLabelsMagic, "IDX uint8 labels with 1 dimension");
    uint32_t n = labels.readBigEndian32("label count");
    if (int64_t(n) != numImages)
      labels.fail("label count " + std::to_string(n) +
                  " does not match the image count " +
                  std::to_string(numImages) + " of " + imagesPath);
    torch::Tensor raw = torch::empty({int64_t(n)}, torch::kUInt8);
    labels.readData(raw, "label data");
    targets = raw.to(torch::kLong);
  }
  return std::make_shared<TensorDataset>(inputs, targets, SampleKind::Image);
}

} // namespace composer::runtime
