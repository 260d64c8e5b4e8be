//===- CheckingFileReader.cpp - a file reader that checks CRC-32s ---------===//

#include "CheckingFileReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <sys/mman.h>
#include <zlib.h>

using namespace llvm;
using namespace composer;

Expected<std::shared_ptr<CheckingFileReader>>
CheckingFileReader::open(StringRef path, std::vector<DeferredRecord> records) {
  Expected<sys::fs::file_t> file = sys::fs::openNativeFileForRead(path);
  if (!file)
    return file.takeError();
  sys::fs::file_status status;
  if (std::error_code error = sys::fs::status(*file, status)) {
    sys::fs::closeFile(*file);
    return createStringError(error, "cannot read: " + error.message());
  }
  return std::shared_ptr<CheckingFileReader>(
      new CheckingFileReader(*file, status.getSize(), std::move(records)));
}

CheckingFileReader::CheckingFileReader(sys::fs::file_t file, uint64_t fileSize,
                                       std::vector<DeferredRecord> records)
    : file(file), fileSize(fileSize), records(std::move(records)) {
  llvm::sort(this->records,
             [](const DeferredRecord &a, const DeferredRecord &b) {
               return a.offset < b.offset;
             });
  progress.assign(this->records.size(), Progress{crc32(0, nullptr, 0)});
}

CheckingFileReader::~CheckingFileReader() { sys::fs::closeFile(file); }

namespace {
/// Asks for the whole huge pages inside `[buf, buf + n)` to be transparent
/// huge pages, so that no other allocation's memory is affected. A tensor's
/// bytes are read into memory nothing has touched yet: in small pages, every
/// page costs a fault as the read fills it and a TLB miss whenever it is read
/// (on this project's virtual machines, reading and checking resnet50's
/// 100 MB took about 2.5x as long). Advice only: where the kernel declines,
/// nothing changes.
void adviseHugePages(void *buf, size_t n) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHugePage = 2u << 20;
  uintptr_t begin = llvm::alignTo(reinterpret_cast<uintptr_t>(buf), kHugePage);
  uintptr_t end =
      llvm::alignDown(reinterpret_cast<uintptr_t>(buf) + n, kHugePage);
  if (begin < end)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#endif
}
} // namespace

size_t CheckingFileReader::read(uint64_t pos, void *buf, size_t n,
                                const char *) const {
  adviseHugePages(buf, n);
  size_t got = 0;
  while (got < n) {
    Expected<size_t> read = sys::fs::readNativeFileSlice(
        file, MutableArrayRef<char>(static_cast<char *>(buf) + got, n - got),
        pos + got);
    if (!read) {
      consumeError(read.takeError());
      break;
    }
    if (*read == 0)
      break;
    got += *read;
  }
  // The record these bytes continue, if they lie within it.
  auto next = llvm::upper_bound(records, pos,
                                [](uint64_t pos, const DeferredRecord &record) {
                                  return pos < record.offset;
                                });
  if (next == records.begin())
    return got;
  size_t index = std::prev(next) - records.begin();
  const DeferredRecord &record = records[index];
  Progress &seen = progress[index];
  if (pos == record.offset + seen.done && seen.done + got <= record.size) {
    seen.crc = crc32_z(seen.crc, static_cast<const Bytef *>(buf), got);
    seen.done += got;
  }
  return got;
}

Error CheckingFileReader::checkRecords() const {
  for (auto [record, seen] : llvm::zip_equal(records, progress)) {
    std::optional<uint32_t> crc;
    if (seen.done == record.size)
      crc = uint32_t(seen.crc);
    if (Error error = checkDeferredRecord(record, crc, file))
      return error;
  }
  return Error::success();
}
