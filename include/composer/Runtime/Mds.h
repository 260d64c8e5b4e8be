//===- Mds.h - MosaicML Streaming MDS shards --------------------*- C++ -*-===//
//
// Reads and writes local directories of MosaicML Streaming's MDS format
// (index.json version 2, format "mds"), as streaming.MDSWriter lays them out:
//
//   shard file: [n: u32] [offsets: (n + 1) x u32] [config JSON] [rows]
//   row i:      bytes [offsets[i], offsets[i + 1]) of the shard:
//               [u32 size of each variable-size column, in column order]
//               [each column's data, in column order]
//
// All integers are little-endian. Columns are sorted by name. A shard may be
// zstd-compressed (zip_data); the raw file is then read from disk when it is
// there, as Streaming does, else decompressed on demand into a bounded cache.
// docs/data-formats.md lists the encodings, compressions and hashes read.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_MDS_H
#define COMPOSER_RUNTIME_MDS_H

#include "composer/Runtime/Dataset.h"
#include "composer/Runtime/Remote.h"

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// What a column's encoding lets composer make of a cell.
enum class MdsType {
  /// Fixed-size little-endian number: int (int64), int8..64, uint8..64,
  /// float16/32/64.
  Scalar,
  /// A number written as decimal digits: str_int, str_float, str_decimal.
  StrNumber,
  /// ndarray[:dtype[:shape]]: a numpy array, its dtype and shape either in
  /// the encoding or in each cell.
  NDArray,
  /// jpeg, png: the file's bytes.
  EncodedImage,
  /// pil: [width u32][height u32][mode size u32][mode][raw pixels].
  PilImage,
  /// bytes, str, json: read as bytes only (MdsReader::row).
  Bytes,
  /// Encodings Streaming knows that composer never decodes (pkl: pickle
  /// runs code; list[...], jpeg_array): the bytes can still be read.
  Opaque,
};

struct MdsColumn {
  std::string name;
  /// As the index writes it, e.g. "int", "jpeg", "ndarray:float32:3,4".
  std::string encoding;
  MdsType type = MdsType::Bytes;
  /// Bytes of every cell, or 0 when each row stores its cell's size.
  int64_t fixedSize = 0;
  /// Scalar, StrNumber, and NDArray with a dtype in the encoding: the
  /// tensor's type (uint16 widens to int32, uint32 and uint64 to int64, as
  /// LibTorch has no wider unsigned types).
  std::optional<torch::ScalarType> dtype;
  /// Scalar and NDArray: the numpy dtype's name ("uint16", "float32");
  /// NDArray without a dtype in the encoding: empty.
  std::string numpyType;
  /// NDArray with a shape in the encoding: that shape; else empty.
  std::vector<int64_t> shape;
};

/// One shard as the index describes it.
struct MdsShard {
  /// The file read: the raw shard when it is on disk, else the compressed.
  std::string path;
  bool compressed = false;
  /// Size of the raw shard (the decompressed size when compressed).
  int64_t rawBytes = 0;
  int64_t samples = 0;
  /// Index of the shard's first sample in the dataset.
  int64_t firstSample = 0;
};

struct MdsOptions {
  /// Check every hash the index lists for the files read, at open. It reads
  /// every shard file once.
  bool verifyHashes = true;
  /// Decompressed shards kept in memory at most, least recently used first
  /// out. Shards being read by a thread stay alive until it is done, so
  /// memory is bounded by (this + reading threads) x the largest raw shard.
  int64_t cachedShards = 4;
  /// Where shards come from when the directory (then a cache) lacks them
  /// (Remote.h). Shards are then downloaded and checked when first read;
  /// the last `cachedShards` read stay leased, safe from eviction.
  std::shared_ptr<ShardCache> remote;
};

class MdsReader;

/// One row's cells, valid while the row lives (it keeps its shard's bytes).
class MdsRow {
public:
  /// The cell's bytes as stored (encoded).
  std::string_view cell(size_t column) const { return cells_.at(column); }
  size_t numCells() const { return cells_.size(); }

private:
  friend class MdsReader;
  std::shared_ptr<const void> keepAlive_;
  std::vector<std::string_view> cells_;
};

/// Random access to the rows of a local MDS directory. Thread-safe.
class MdsReader {
public:
  /// Opens `dir` (with index.json) and checks it: the index's fields, every
  /// shard file present with the size and hashes the index gives, and every
  /// shard's header (sample count and first and last offsets) agreeing with
  /// the index. Throws std::runtime_error naming the file at fault.
  explicit MdsReader(const std::string &dir, const MdsOptions &options = {});
  ~MdsReader();
  MdsReader(const MdsReader &) = delete;
  MdsReader &operator=(const MdsReader &) = delete;

  const std::string &dir() const;
  int64_t size() const;
  const std::vector<MdsColumn> &columns() const;
  /// The column named `name`, or -1.
  int64_t columnIndex(const std::string &name) const;
  /// "zstd", "zstd:N", or empty when the shards are raw.
  const std::string &compression() const;
  /// The hash names the index lists.
  const std::vector<std::string> &hashes() const;
  const std::vector<MdsShard> &shards() const;
  /// The shard holding sample `index`.
  int64_t shardOf(int64_t index) const;

  /// Row `index`. Throws DataError naming the shard file and row when the
  /// row's bytes contradict the offsets or the column sizes, or a compressed
  /// shard does not decompress to its raw size.
  MdsRow row(int64_t index) const;
  /// The bytes of one cell (a copy).
  std::string cell(int64_t index, size_t column) const;
  /// "DIR/shard.00003.mds.zstd row 17", for messages.
  std::string describe(int64_t index) const;
  /// With a remote: starts downloading the shards of these samples that
  /// are not cached, in the background.
  void prefetch(const int64_t *indices, int64_t count) const;

  /// Decodes a Scalar, StrNumber or NDArray cell to a tensor (a 0-dim one for
  /// numbers). Throws DataError naming `where` on bad bytes.
  static torch::Tensor decodeTensor(const MdsColumn &column,
                                    std::string_view bytes,
                                    const std::string &where);
  /// Decodes an EncodedImage or PilImage cell to RGB uint8 [3, H, W].
  static torch::Tensor decodeImage(const MdsColumn &column,
                                   std::string_view bytes,
                                   const std::string &where);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An MDS directory as a Dataset: `inputColumn` is the sample's input and
/// `targetColumn` its target.
///   - jpeg, png or pil input: SampleKind::Image (getCut decodes only the
///     cut of a JPEG); the target must be an integer number (class index).
///   - number or ndarray input: SampleKind::Tensor of the column's dtype.
///   - integer targets are int64 scalars; other number and ndarray targets
///     keep their dtype.
/// bytes, str, json and opaque columns are not inputs or targets: open fails.
class MdsDataset final : public Dataset {
public:
  /// `columns`: further number or ndarray columns, batched by name
  /// (SampleSpec::columns), with tensor inputs only.
  MdsDataset(std::shared_ptr<const MdsReader> reader,
             const std::string &inputColumn, const std::string &targetColumn,
             const std::vector<std::string> &columns = {});

  int64_t size() const override { return reader_->size(); }
  const SampleSpec &spec() const override { return spec_; }
  Sample get(int64_t index) const override;
  Sample getCut(int64_t index, const ImageCutPlanner &plan) const override;
  std::string describe(int64_t index) const override;
  /// Compressed shards: each shard's first sample (reading in shard blocks
  /// keeps the decompression cache warm). Raw shards: empty.
  std::vector<int64_t> shardStarts() const override;
  void prefetch(const int64_t *indices, int64_t count) const override {
    reader_->prefetch(indices, count);
  }

  int64_t shardOf(int64_t index) const { return reader_->shardOf(index); }
  const MdsReader &reader() const { return *reader_; }

private:
  torch::Tensor target(const MdsRow &row, int64_t index) const;
  std::shared_ptr<const MdsReader> reader_;
  size_t input_ = 0, target_ = 0;
  std::vector<size_t> columns_;
  SampleSpec spec_;
};

std::shared_ptr<const Dataset>
openMds(const std::string &dir, const std::string &inputColumn,
        const std::string &targetColumn, const MdsOptions &options = {},
        const std::vector<std::string> &columns = {});

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Parses a column's encoding as Streaming names it ("int", "jpeg",
/// "ndarray:uint8:3,32,32"); nullopt for one Streaming does not know.
std::optional<MdsColumn> parseMdsEncoding(const std::string &name,
                                          const std::string &encoding);

/// Whether `name` is a hash Streaming and composer both compute (md5, sha1,
/// sha224/256/384/512, sha3_224/256/384/512, blake2b, blake2s, xxh32, xxh64,
/// xxh3_64, xxh128, xxh3_128).
bool isMdsHash(const std::string &name);
/// The hex digest Streaming writes (Python's hexdigest()). Throws
/// std::invalid_argument for an unsupported name.
std::string mdsHexDigest(const std::string &name, const void *data,
                         size_t size);

/// Parses a size as Streaming's bytes_to_int does: "64mb" is 64 x 1024^2,
/// "100kb", "4096b", "4096". Throws std::invalid_argument.
int64_t parseMdsSize(const std::string &text);

struct MdsWriterOptions {
  /// Column name -> encoding; written sorted by name, as Streaming does.
  /// Any encoding Streaming knows: cells are given already encoded, and
  /// only a fixed-size encoding's cell size is checked.
  std::vector<std::pair<std::string, std::string>> columns;
  /// "", "zstd" or "zstd:N" (N in 1..22).
  std::string compression;
  /// Sorted, each isMdsHash.
  std::vector<std::string> hashes;
  /// A shard is closed before a sample that would take it past this many
  /// bytes (the header, and 4 + the encoded size per sample); 0: no limit.
  int64_t sizeLimit = int64_t(1) << 26;
};

/// Writes shards and index.json into an existing directory, as
/// streaming.MDSWriter: same file names, header, index keys and order, and
/// compressed shards without their raw file. Unlike MDSWriter it never
/// writes an empty shard (for a first sample over the size limit).
class MdsWriter {
public:
  MdsWriter(const std::string &dir, MdsWriterOptions options);
  ~MdsWriter();
  /// One cell per column, in `options.columns`' order, as encoded bytes
  /// (an int column: 8 little-endian bytes). Throws std::invalid_argument
  /// when a fixed-size cell has the wrong size, std::runtime_error on I/O.
  void write(const std::vector<std::string> &cells);
  /// Writes the last shard and index.json.
  void finish();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_MDS_H
