//===- TensorBoardLogger.cpp - Scalars in a TensorBoard event file --------===//
//
// An event file is a sequence of TFRecords, each holding one serialized
// tensorflow.Event protobuf. The few messages needed are encoded by hand:
//
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3;
//             Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
//
// and each record is framed as
//   uint64 length, uint32 masked_crc(length), data, uint32 masked_crc(data)
// all little-endian, with CRC-32C (Castagnoli).
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Logger.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace composer::runtime {

namespace {

std::array<uint32_t, 256> makeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
    table[i] = crc;
  }
  return table;
}

uint32_t crc32c(const char *data, size_t size) {
  static const std::array<uint32_t, 256> table = makeCrc32cTable();
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ static_cast<uint8_t>(data[i])) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

/// Protobuf wire types.
enum WireType : uint32_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// Little-endian, whatever the host.
template <typename T> void appendLittleEndian(std::string &out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out += static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF);
}

void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void appendKey(std::string &out, uint32_t field, WireType type) {
  appendVarint(out, (uint64_t(field) << 3) | type);
}

void appendDouble(std::string &out, uint32_t field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  appendKey(out, field, Fixed64);
  appendLittleEndian(out, bits);
}

void appendFloat(std::string &out, uint32_t field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  appendKey(out, field, Fixed32);
  appendLittleEndian(out, bits);
}

void appendBytes(std::string &out, uint32_t field, const std::string &bytes) {
  appendKey(out, field, Bytes);
  appendVarint(out, bytes.size());
  out += bytes;
}

double wallTime() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0 || buffer[0] == 0)
    return "localhost";
  return buffer;
}

class TensorBoardLogger : public LoggerDestination {
public:
  explicit TensorBoardLogger(const std::string &dir) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error)
      throw std::runtime_error("cannot create TensorBoard log directory '" +
                               dir + "': " + error.message());
    double now = wallTime();
    std::string base =
        (std::filesystem::path(dir) /
         ("events.out.tfevents." + std::to_string(static_cast<int64_t>(now)) +
          "." + hostName()))
            .string();
    // Never append to another writer's file (two runs in the same second).
    path_ = base;
    for (int n = 1; std::filesystem::exists(path_); ++n)
      path_ = base + "." + std::to_string(n);
    out_.open(path_, std::ios::out | std::ios::binary);
    if (!out_)
      throw std::runtime_error("cannot open TensorBoard event file '" + path_ +
                               "'");
    std::string event;
    appendDouble(event, 1, now);
    appendBytes(event, 3, "brain.Event:2");
    writeRecord(event);
  }

  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override {
    if (metrics.empty())
      return;
    std::string summary;
    for (const auto &[tag, value] : metrics) {
      std::string entry;
      appendBytes(entry, 1, tag);
      appendFloat(entry, 2, static_cast<float>(value));
      appendBytes(summary, 1, entry);
    }
    std::string event;
    appendDouble(event, 1, wallTime());
    appendKey(event, 2, Varint);
    appendVarint(event, static_cast<uint64_t>(step)); // int64: two's complement
    appendBytes(event, 5, summary);
    writeRecord(event);
  }

  void flush() override { out_.flush(); }

private:
  void writeRecord(const std::string &data) {
    std::string header;
    appendLittleEndian(header, static_cast<uint64_t>(data.size()));
    std::string record = header;
    appendLittleEndian(record, maskedCrc32c(header.data(), header.size()));
    record += data;
    appendLittleEndian(record, maskedCrc32c(data.data(), data.size()));
    out_.write(record.data(), static_cast<std::streamsize>(record.size()));
    // A reader (TensorBoard, a killed run) only ever sees whole records.
    out_.flush();
    if (!out_)
      throw std::runtime_error("cannot write to TensorBoard event file '" +
                               path_ + "'");
  }

  std::string path_;
  std::ofstream out_;
};

} // namespace

uint32_t maskedCrc32c(const char *data, size_t size) {
  uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::unique_ptr<LoggerDestination>
createTensorBoardLogger(const std::string &dir) {
  return std::make_unique<TensorBoardLogger>(dir);
}

} // namespace composer::runtime
