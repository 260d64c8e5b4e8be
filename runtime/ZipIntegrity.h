//===- ZipIntegrity.h - The CRC-32 of every entry of a zip archive -*- C++
//-*-===//
//
// Internal to the runtime. LibTorch's archive reader (PyTorch builds miniz
// without its CRC checks) takes a damaged file as whole; checkpoints are
// checked here, entry by entry, before they are unpickled.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_ZIPINTEGRITY_H
#define COMPOSER_RUNTIME_ZIPINTEGRITY_H

#include <cstddef>
#include <string>

namespace composer::runtime {

/// Checks the zip archive in data[0, size): its central directory (zip64
/// too), each entry's local header, and the CRC-32 of each entry's bytes
/// (stored entries, as PyTorch writes them). Returns the number of entries.
/// Throws std::runtime_error saying what is wrong and naming the entry;
/// the caller adds the file's name.
size_t checkZipEntries(const char *data, size_t size);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ZIPINTEGRITY_H
