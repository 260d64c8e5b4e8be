//===- ZipIntegrity.cpp - The CRC-32 of every entry of a zip archive ------===//
//
// The zip layout (PKWARE APPNOTE 6.3): end of central directory record,
// its zip64 locator and record when counts or offsets overflow 32 bits,
// central directory headers, local file headers.
//
//===----------------------------------------------------------------------===//

#include "ZipIntegrity.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace composer::runtime {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

/// Little-endian reads within [0, size), throwing on any read past the end.
struct Bytes {
  const unsigned char *data;
  size_t size;

  void need(uint64_t at, uint64_t count, const char *what) const {
    if (at > size || count > size - at)
      throw std::runtime_error(std::string("truncated archive: ") + what +
                               " past the end of the file");
  }
  uint64_t read(uint64_t at, int bytes, const char *what) const {
    need(at, uint64_t(bytes), what);
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i)
      value = value << 8 | data[at + i];
    return value;
  }
  uint16_t u16(uint64_t at, const char *what) const {
    return uint16_t(read(at, 2, what));
  }
  uint32_t u32(uint64_t at, const char *what) const {
    return uint32_t(read(at, 4, what));
  }
  uint64_t u64(uint64_t at, const char *what) const {
    return read(at, 8, what);
  }
};

uint32_t crc32Of(const unsigned char *data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt chunk = uInt(std::min<uint64_t>(size, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return uint32_t(crc);
}

std::string hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", value);
  return text;
}

struct Directory {
  uint64_t entries = 0, offset = 0, size = 0;
};

Directory findDirectory(const Bytes &zip) {
  // The end record is 22 bytes plus a comment of at most 65,535.
  if (zip.size < 22)
    throw std::runtime_error("truncated archive: too short for a zip file");
  uint64_t end = zip.size - 22;
  const uint64_t lowest = zip.size > 22 + 65535 ? zip.size - 22 - 65535 : 0;
  while (zip.u32(end, "end record") != kEndOfDirectory) {
    if (end == lowest)
      throw std::runtime_error(
          "truncated archive: no end of central directory record");
    --end;
  }
  Directory dir;
  dir.entries = zip.u16(end + 10, "end record");
  dir.size = zip.u32(end + 12, "end record");
  dir.offset = zip.u32(end + 16, "end record");
  if (dir.entries == 0xFFFF || dir.size == 0xFFFFFFFF ||
      dir.offset == 0xFFFFFFFF) {
    if (end < 20 || zip.u32(end - 20, "zip64 locator") != kZip64Locator)
      throw std::runtime_error("malformed archive: no zip64 locator before "
                               "an overflowing end record");
    uint64_t record = zip.u64(end - 20 + 8, "zip64 locator");
    if (zip.u32(record, "zip64 end record") != kZip64EndOfDirectory)
      throw std::runtime_error("malformed archive: no zip64 end record");
    dir.entries = zip.u64(record + 32, "zip64 end record");
    dir.size = zip.u64(record + 40, "zip64 end record");
    dir.offset = zip.u64(record + 48, "zip64 end record");
  }
  zip.need(dir.offset, dir.size, "central directory");
  return dir;
}

} // namespace

size_t checkZipEntries(const char *data, size_t size) {
  const Bytes zip{reinterpret_cast<const unsigned char *>(data), size};
  const Directory dir = findDirectory(zip);
  uint64_t at = dir.offset;
  for (uint64_t e = 0; e < dir.entries; ++e) {
    if (zip.u32(at, "central directory") != kDirectoryEntry)
      throw std::runtime_error("malformed archive: central directory entry " +
                               std::to_string(e) + " is damaged");
    const uint16_t method = zip.u16(at + 10, "central directory");
    const uint32_t crc = zip.u32(at + 16, "central directory");
    uint64_t compressed = zip.u32(at + 20, "central directory");
    uint64_t uncompressed = zip.u32(at + 24, "central directory");
    const uint16_t nameLength = zip.u16(at + 28, "central directory");
    const uint16_t extraLength = zip.u16(at + 30, "central directory");
    const uint16_t commentLength = zip.u16(at + 32, "central directory");
    uint64_t local = zip.u32(at + 42, "central directory");
    zip.need(at + 46, uint64_t(nameLength) + extraLength + commentLength,
             "central directory");
    const std::string name(reinterpret_cast<const char *>(zip.data + at + 46),
                           nameLength);
    // Sizes and offsets that overflow 32 bits are in the zip64 extra field,
    // in this order.
    for (uint64_t x = at + 46 + nameLength;
         x + 4 <= at + 46 + nameLength + extraLength;) {
      uint16_t id = zip.u16(x, "extra field"),
               length = zip.u16(x + 2, "extra field");
      if (id == 0x0001) {
        uint64_t field = x + 4;
        for (uint64_t *value : {&uncompressed, &compressed, &local})
          if (*value == 0xFFFFFFFF) {
            *value = zip.u64(field, "zip64 extra field");
            field += 8;
          }
      }
      x += 4 + uint64_t(length);
    }
    if (method != 0)
      throw std::runtime_error("entry '" + name + "' is compressed (method " +
                               std::to_string(method) +
                               "); PyTorch stores entries uncompressed");
    if (compressed != uncompressed)
      throw std::runtime_error("entry '" + name + "': stored sizes disagree (" +
                               std::to_string(compressed) + " and " +
                               std::to_string(uncompressed) + ")");
    if (zip.u32(local, "local header") != kLocalHeader)
      throw std::runtime_error("entry '" + name +
                               "': its local header is damaged");
    const uint64_t begin = local + 30 + zip.u16(local + 26, "local header") +
                           zip.u16(local + 28, "local header");
    zip.need(begin, uncompressed, ("entry '" + name + "'").c_str());
    const uint32_t actual = crc32Of(zip.data + begin, uncompressed);
    if (actual != crc)
      throw std::runtime_error(
          "entry '" + name + "' fails its CRC-32 check (the archive says " +
          hex32(crc) + ", its bytes give " + hex32(actual) + ")");
    at += 46 + uint64_t(nameLength) + extraLength + commentLength;
  }
  return size_t(dir.entries);
}

} // namespace composer::runtime
