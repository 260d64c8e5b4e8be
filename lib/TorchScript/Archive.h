//===- Archive.h - integrity check of TorchScript archives ------*- C++ -*-===//
//
// LibTorch (1.13) reads zip records without checking their CRC-32, and a
// corrupt debug-info record then makes torch::jit::ErrorReport::what() throw
// through a noexcept function: the process aborts, in composer-opt as in
// Python's torch.jit.load (docs/fuzzing.md). Archives are checked before
// LibTorch sees them.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H
#define COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace composer {

/// Checks that `path` is a whole zip archive whose every record has the
/// CRC-32 its central directory records (stored and deflated records, zip64
/// included). The error says what is wrong and with which record.
llvm::Error checkZipArchive(llvm::StringRef path);

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_ARCHIVE_H
