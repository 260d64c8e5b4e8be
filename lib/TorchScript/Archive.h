//===- Archive.h - integrity check of TorchScript archives ------*- C++ -*-===//
//
// LibTorch (1.13) reads zip records without checking their CRC-32, and a
// corrupt debug-info record then makes torch::jit::ErrorReport::what() throw
// through a noexcept function: the process aborts, in composer-opt as in
// Python's torch.jit.load (docs/fuzzing.md). Archives are checked before
// LibTorch parses them; the records it only copies (tensors) may be checked
// as it reads them (CheckingFileReader.h).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H
#define COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <optional>
#include <string>
#include <vector>

namespace composer {

/// A stored record whose CRC-32 is left to the reader of its bytes.
struct DeferredRecord {
  std::string name;
  uint64_t offset; ///< of its bytes in the file
  uint64_t size;
  uint32_t crc; ///< as the central directory records it
};

/// Checks that `path` is a whole zip archive whose every record has the
/// CRC-32 its central directory records (stored and deflated records, zip64
/// included). The error says what is wrong and with which record.
///
/// The stored records whose name `defer` accepts are checked for where they
/// lie only, and returned: their CRC-32 is for the caller to check, on the
/// bytes it reads anyway (checkDeferredRecord).
llvm::Expected<std::vector<DeferredRecord>>
checkZipArchive(llvm::StringRef path,
                llvm::function_ref<bool(llvm::StringRef name)> defer = nullptr);

/// Whether `crc` is `record`'s CRC-32; if it is none (an empty optional,
/// the caller did not see all its bytes), its bytes are read from `file`.
llvm::Error checkDeferredRecord(const DeferredRecord &record,
                                std::optional<uint32_t> crc,
                                llvm::sys::fs::file_t file);

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H
