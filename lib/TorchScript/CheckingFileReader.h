//===- CheckingFileReader.h - a file reader that checks CRC-32s -*- C++ -*-===//
//
// LibTorch reads a model's tensor records once, whole, as it loads them. This
// reader checks their CRC-32 on those bytes, so that an archive's largest
// records are not read a second time just to be checked, and reads them into
// huge pages where the kernel offers them.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_CHECKINGFILEREADER_H
#define COMPOSER_LIB_TORCHSCRIPT_CHECKINGFILEREADER_H

#include "Archive.h"

#include <caffe2/serialize/read_adapter_interface.h>

#include <memory>

namespace composer {

/// Reads a file for caffe2::serialize::PyTorchStreamReader, and computes
/// the CRC-32 of each deferred record from the reads that cover its bytes in
/// order.
class CheckingFileReader final
    : public caffe2::serialize::ReadAdapterInterface {
public:
  static llvm::Expected<std::shared_ptr<CheckingFileReader>>
  open(llvm::StringRef path, std::vector<DeferredRecord> records);
  CheckingFileReader(const CheckingFileReader &) = delete;
  CheckingFileReader &operator=(const CheckingFileReader &) = delete;
  ~CheckingFileReader() override; ///< closes the file

  size_t size() const override { return fileSize; }
  size_t read(uint64_t pos, void *buf, size_t n,
              const char *what = "") const override;

  /// Checks every deferred record: with the CRC-32 of the bytes read, or,
  /// for a record not read whole and in order, by reading it now.
  llvm::Error checkRecords() const;

private:
  CheckingFileReader(llvm::sys::fs::file_t file, uint64_t fileSize,
                     std::vector<DeferredRecord> records);

  /// How much of a record has been read in order, and its CRC-32 so far.
  struct Progress {
    unsigned long crc;
    uint64_t done = 0;
  };

  llvm::sys::fs::file_t file;
  uint64_t fileSize;
  std::vector<DeferredRecord> records; ///< by offset
  mutable std::vector<Progress> progress;
};

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_CHECKINGFILEREADER_H
