//===- MergeIndex.h - composer-data merge-index -----------------*- C++ -*-===//
#ifndef COMPOSER_DATA_MERGEINDEX_H
#define COMPOSER_DATA_MERGEINDEX_H

#include <string>
#include <vector>

namespace composer::data {

/// merge-index ROOT: Streaming's merge_index for shards written by several
/// processes into subdirectories of ROOT. Writes ROOT/index.json listing
/// every subdirectory's shards (in sorted order), their file names
/// prefixed by the subdirectory, as streaming.base.util.merge_index does.
/// The index appears whole or not at all. Throws std::runtime_error naming
/// the file at fault.
int mergeIndex(const std::vector<std::string> &args);

} // namespace composer::data

#endif // COMPOSER_DATA_MERGEINDEX_H
