//===- Archive.cpp - integrity check of TorchScript archives --------------===//

#include "Archive.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <zlib.h>

using namespace llvm;

namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64EndLocator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kStored = 0, kDeflated = 8;

/// Little-endian reads that fail, rather than read past the end.
class Reader {
public:
  explicit Reader(StringRef bytes) : bytes(bytes) {}

  bool has(uint64_t offset, uint64_t size) const {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  }
  template <typename T> T read(uint64_t offset) const {
    return support::endian::read<T, llvm::endianness::little>(bytes.data() +
                                                              offset);
  }
  StringRef slice(uint64_t offset, uint64_t size) const {
    return bytes.substr(offset, size);
  }
  uint64_t size() const { return bytes.size(); }

private:
  StringRef bytes;
};

Error corrupt(const Twine &what) {
  return createStringError(inconvertibleErrorCode(),
                           "corrupt archive: " + what);
}

/// The CRC-32 of the `size` bytes at `offset` of `file`, read through one
/// buffer: a first pass over a mapped archive pays a page fault per few
/// pages, about twice what reading the same bytes costs.
Expected<uint32_t> crcOfStoredBytes(sys::fs::file_t file, uint64_t offset,
                                    uint64_t size, StringRef name) {
  std::vector<char> buffer(std::min<uint64_t>(size, 1u << 20));
  uLong crc = crc32(0, nullptr, 0);
  for (uint64_t done = 0; done < size;) {
    MutableArrayRef<char> chunk(buffer.data(),
                                std::min<uint64_t>(buffer.size(), size - done));
    Expected<size_t> got =
        sys::fs::readNativeFileSlice(file, chunk, offset + done);
    if (!got)
      return got.takeError();
    if (*got == 0)
      return corrupt("record '" + name + "' lies outside the file");
    crc = crc32(crc, reinterpret_cast<const Bytef *>(chunk.data()), uInt(*got));
    done += *got;
  }
  return uint32_t(crc);
}

Error crcMismatch(StringRef name) {
  return corrupt("record '" + name + "' fails its CRC-32 check");
}

/// The CRC-32 of a compressed record's inflated bytes, inflated in chunks
/// so that a claimed size costs no memory; only deflate is expected.
Expected<uint32_t> crcOfCompressedRecord(StringRef data, uint16_t method,
                                         uint64_t uncompressedSize,
                                         StringRef name) {
  if (method != kDeflated)
    return corrupt("record '" + name + "' uses compression method " +
                   Twine(method) + " (expected stored or deflated)");
  z_stream stream = {};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return corrupt("cannot inflate record '" + name + "'");
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  stream.avail_in = uInt(std::min<uint64_t>(data.size(), UINT32_MAX));
  uLong crc = crc32(0, nullptr, 0);
  uint64_t produced = 0;
  unsigned char buffer[1 << 16];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = buffer;
    stream.avail_out = sizeof(buffer);
    status = inflate(&stream, Z_NO_FLUSH);
    uInt got = sizeof(buffer) - stream.avail_out;
    crc = crc32(crc, buffer, got);
    produced += got;
    if (produced > uncompressedSize)
      break;
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != uncompressedSize)
    return corrupt("record '" + name + "' does not inflate to its size");
  return uint32_t(crc);
}

} // namespace

Expected<std::vector<composer::DeferredRecord>>
composer::checkZipArchive(StringRef path,
                          function_ref<bool(StringRef name)> defer) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!file)
    return createStringError(file.getError(),
                             "cannot read: " + file.getError().message());
  Reader zip((*file)->getBuffer());
  // The records' bytes are read, not touched through the mapping.
  Expected<sys::fs::file_t> handle = sys::fs::openNativeFileForRead(path);
  if (!handle)
    return handle.takeError();
  auto closeHandle = make_scope_exit([&] { sys::fs::closeFile(*handle); });

  // The end-of-central-directory record: the last 22 bytes, or earlier by
  // the length of a trailing comment.
  uint64_t end = UINT64_MAX;
  for (uint64_t back = 22; back <= std::min<uint64_t>(zip.size(), 22 + 65535);
       ++back)
    if (zip.read<uint32_t>(zip.size() - back) == kEndOfCentralDirectory) {
      end = zip.size() - back;
      break;
    }
  if (end == UINT64_MAX)
    return corrupt("no zip end record (truncated, or not a zip archive)");
  uint64_t numEntries = zip.read<uint16_t>(end + 10);
  uint64_t directorySize = zip.read<uint32_t>(end + 12);
  uint64_t directory = zip.read<uint32_t>(end + 16);
  if (end >= 20 && zip.read<uint32_t>(end - 20) == kZip64EndLocator) {
    uint64_t zip64End = zip.read<uint64_t>(end - 20 + 8);
    if (!zip.has(zip64End, 56) || zip.read<uint32_t>(zip64End) != kZip64End)
      return corrupt("bad zip64 end record");
    numEntries = zip.read<uint64_t>(zip64End + 32);
    directorySize = zip.read<uint64_t>(zip64End + 40);
    directory = zip.read<uint64_t>(zip64End + 48);
  }
  if (!zip.has(directory, directorySize))
    return corrupt("the central directory lies outside the file");

  std::vector<DeferredRecord> deferred;
  uint64_t offset = directory;
  for (uint64_t i = 0; i < numEntries; ++i) {
    if (!zip.has(offset, 46) || zip.read<uint32_t>(offset) != kCentralHeader)
      return corrupt("bad central directory entry " + Twine(i));
    uint16_t method = zip.read<uint16_t>(offset + 10);
    uint32_t crc = zip.read<uint32_t>(offset + 16);
    uint64_t compressedSize = zip.read<uint32_t>(offset + 20);
    uint64_t uncompressedSize = zip.read<uint32_t>(offset + 24);
    uint16_t nameSize = zip.read<uint16_t>(offset + 28);
    uint16_t extraSize = zip.read<uint16_t>(offset + 30);
    uint16_t commentSize = zip.read<uint16_t>(offset + 32);
    uint64_t localHeader = zip.read<uint32_t>(offset + 42);
    if (!zip.has(offset + 46, uint64_t(nameSize) + extraSize + commentSize))
      return corrupt("bad central directory entry " + Twine(i));
    StringRef name = zip.slice(offset + 46, nameSize);

    // Zip64: the fields saturated above are in the extra field, in order.
    for (uint64_t extra = offset + 46 + nameSize;
         extra + 4 <= offset + 46 + nameSize + extraSize;) {
      uint16_t id = zip.read<uint16_t>(extra);
      uint16_t size = zip.read<uint16_t>(extra + 2);
      uint64_t field = extra + 4, fieldEnd = field + size;
      if (id == kZip64ExtraId) {
        for (uint64_t *value :
             {&uncompressedSize, &compressedSize, &localHeader}) {
          if (*value != UINT32_MAX)
            continue;
          if (field + 8 > fieldEnd || !zip.has(field, 8))
            return corrupt("bad zip64 field of record '" + name + "'");
          *value = zip.read<uint64_t>(field);
          field += 8;
        }
      }
      extra = fieldEnd;
    }

    if (!zip.has(localHeader, 30) ||
        zip.read<uint32_t>(localHeader) != kLocalHeader)
      return corrupt("record '" + name + "' has no local header");
    uint64_t data = localHeader + 30 + zip.read<uint16_t>(localHeader + 26) +
                    zip.read<uint16_t>(localHeader + 28);
    if (!zip.has(data, compressedSize))
      return corrupt("record '" + name + "' lies outside the file");
    if (method == kStored && compressedSize != uncompressedSize)
      return corrupt("record '" + name + "' has inconsistent sizes");
    offset += 46 + uint64_t(nameSize) + extraSize + commentSize;
    if (method == kStored && defer && defer(name)) {
      deferred.push_back({name.str(), data, compressedSize, crc});
      continue;
    }
    Expected<uint32_t> actual =
        method == kStored
            ? crcOfStoredBytes(*handle, data, compressedSize, name)
            : crcOfCompressedRecord(zip.slice(data, compressedSize), method,
                                    uncompressedSize, name);
    if (!actual)
      return actual.takeError();
    if (*actual != crc)
      return crcMismatch(name);
  }
  return deferred;
}

Error composer::checkDeferredRecord(const DeferredRecord &record,
                                    std::optional<uint32_t> crc,
                                    sys::fs::file_t file) {
  if (!crc) {
    Expected<uint32_t> read =
        crcOfStoredBytes(file, record.offset, record.size, record.name);
    if (!read)
      return read.takeError();
    crc = *read;
  }
  if (*crc != record.crc)
    return crcMismatch(record.name);
  return Error::success();
}
