//===- Mds.cpp - Reading MosaicML Streaming MDS shards --------------------===//
//
// The index is checked whole at open, so that a dataset that cannot be read
// fails before training starts; only a row's own bytes are checked when it is
// read, and a bad row is a DataError the loader may skip.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Mds.h"
#include "composer/Runtime/ImageCodec.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <xxhash.h>
#include <zstd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <list>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

// Shards are little-endian and cells are copied into tensors as they are.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "MDS reading assumes a little-endian host");

namespace composer::runtime {

namespace {

using json = nlohmann::json;

uint32_t readU32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

/// A whole file mapped read-only; an empty file maps to no bytes.
class MappedFile {
public:
  MappedFile(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error(path + ": cannot open: " + strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": cannot stat: " + strerror(err));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void *p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        throw std::runtime_error(path + ": cannot map: " + strerror(err));
      }
      data_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_)
      ::munmap(const_cast<uint8_t *>(data_), size_);
  }
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

//===----------------------------------------------------------------------===//
// Hashes
//===----------------------------------------------------------------------===//

const char *evpName(const std::string &name) {
  static const std::pair<const char *, const char *> names[] = {
      {"md5", "MD5"},
      {"sha1", "SHA1"},
      {"sha224", "SHA224"},
      {"sha256", "SHA256"},
      {"sha384", "SHA384"},
      {"sha512", "SHA512"},
      {"sha3_224", "SHA3-224"},
      {"sha3_256", "SHA3-256"},
      {"sha3_384", "SHA3-384"},
      {"sha3_512", "SHA3-512"},
      {"blake2b", "BLAKE2b512"},
      {"blake2s", "BLAKE2s256"}};
  for (const auto &[python, evp] : names)
    if (name == python)
      return evp;
  return nullptr;
}

bool isXxhash(const std::string &name) {
  return name == "xxh32" || name == "xxh64" || name == "xxh3_64" ||
         name == "xxh128" || name == "xxh3_128";
}

std::string hex(const unsigned char *bytes, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Encodings
//===----------------------------------------------------------------------===//

struct NumpyType {
  const char *name;
  /// The dtype byte of a dynamic-dtype ndarray cell.
  int code;
  int bytes;
  torch::ScalarType torchType;
};

// uint16/32/64 widen: LibTorch 1.13 has no unsigned type wider than uint8.
const NumpyType numpyTypes[] = {
    {"uint8", 8, 1, torch::kByte},     {"int8", 9, 1, torch::kChar},
    {"uint16", 16, 2, torch::kInt},    {"int16", 17, 2, torch::kShort},
    {"float16", 18, 2, torch::kHalf},  {"uint32", 32, 4, torch::kLong},
    {"int32", 33, 4, torch::kInt},     {"float32", 34, 4, torch::kFloat},
    {"uint64", 64, 8, torch::kLong},   {"int64", 65, 8, torch::kLong},
    {"float64", 66, 8, torch::kDouble}};

const NumpyType *numpyTypeNamed(const std::string &name) {
  for (const NumpyType &t : numpyTypes)
    if (name == t.name)
      return &t;
  return nullptr;
}

const NumpyType *numpyTypeCoded(int code) {
  for (const NumpyType &t : numpyTypes)
    if (code == t.code)
      return &t;
  return nullptr;
}

/// Parses `encoding` as streaming/base/format/mds/encodings.py names it.
/// Returns nullopt for a name Streaming does not know.
std::optional<MdsColumn> parseEncoding(const std::string &name,
                                       const std::string &encoding) {
  MdsColumn column;
  column.name = name;
  column.encoding = encoding;
  std::string family = encoding.substr(0, encoding.find(':'));
  bool hasArgs = family.size() != encoding.size();
  if (hasArgs && family != "ndarray")
    return std::nullopt;
  if (family == "int") {
    column.type = MdsType::Scalar;
    column.numpyType = "int64";
  } else if (numpyTypeNamed(family)) {
    column.type = MdsType::Scalar;
    column.numpyType = family;
  } else if (family == "str_int") {
    column.type = MdsType::StrNumber;
    column.dtype = torch::kLong;
  } else if (family == "str_float" || family == "str_decimal") {
    column.type = MdsType::StrNumber;
    column.dtype = torch::kDouble;
  } else if (family == "jpeg" || family == "png") {
    column.type = MdsType::EncodedImage;
  } else if (family == "pil") {
    column.type = MdsType::PilImage;
  } else if (family == "bytes" || family == "str" || family == "json") {
    column.type = MdsType::Bytes;
  } else if (family == "pkl" || family == "jpeg_array" ||
             family == "jpegarray" || family == "list[pil]" ||
             family == "list[jpeg]" || family == "list[png]") {
    column.type = MdsType::Opaque;
  } else if (family == "ndarray") {
    column.type = MdsType::NDArray;
    // "ndarray", "ndarray:", "ndarray:DTYPE", "ndarray:DTYPE:D0,D1,...".
    std::string args = hasArgs ? encoding.substr(family.size() + 1) : "";
    std::string dtype = args.substr(0, args.find(':'));
    if (!dtype.empty()) {
      if (!numpyTypeNamed(dtype))
        return std::nullopt;
      column.numpyType = dtype;
    }
    if (dtype.size() != args.size()) {
      std::string dims = args.substr(dtype.size() + 1);
      if (dtype.empty() || dims.find(':') != std::string::npos)
        return std::nullopt;
      size_t at = 0;
      while (true) {
        size_t comma = dims.find(',', at);
        std::string dim = dims.substr(at, comma - at);
        int64_t value = 0;
        auto [end, ec] =
            std::from_chars(dim.data(), dim.data() + dim.size(), value);
        if (ec != std::errc() || end != dim.data() + dim.size() || value < 1)
          return std::nullopt;
        column.shape.push_back(value);
        if (comma == std::string::npos)
          break;
        at = comma + 1;
      }
    }
  } else {
    return std::nullopt;
  }
  if (!column.numpyType.empty()) {
    const NumpyType *t = numpyTypeNamed(column.numpyType);
    column.dtype = t->torchType;
    if (column.type == MdsType::Scalar)
      column.fixedSize = t->bytes;
    else if (!column.shape.empty()) {
      int64_t count = 1;
      for (int64_t d : column.shape)
        count *= d;
      column.fixedSize = count * t->bytes;
    }
  }
  return column;
}

/// Copies `count` numpy values of type `t` into a tensor of `shape`.
torch::Tensor numpyToTensor(const NumpyType &t, const uint8_t *data,
                            int64_t count, std::vector<int64_t> shape,
                            const std::string &where) {
  torch::Tensor out = torch::empty(shape, t.torchType);
  std::string name = t.name;
  if (name == "uint16") {
    int32_t *dst = out.data_ptr<int32_t>();
    for (int64_t i = 0; i < count; ++i) {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      dst[i] = v;
    }
  } else if (name == "uint32") {
    int64_t *dst = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) {
      uint32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      dst[i] = v;
    }
  } else if (name == "uint64") {
    int64_t *dst = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) {
      uint64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      if (v > uint64_t(INT64_MAX))
        throw DataError(where + ": uint64 value " + std::to_string(v) +
                        " does not fit int64");
      dst[i] = static_cast<int64_t>(v);
    }
  } else if (count > 0) {
    std::memcpy(out.data_ptr(), data, static_cast<size_t>(count) * t.bytes);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// zstd
//===----------------------------------------------------------------------===//

struct DctxDeleter {
  void operator()(ZSTD_DCtx *ctx) const { ZSTD_freeDCtx(ctx); }
};
using Dctx = std::unique_ptr<ZSTD_DCtx, DctxDeleter>;

/// Decompresses frames from `in` into `out` (capacity `capacity`) until it is
/// full or `in` is used up. Frames need not record their content size.
/// Returns the bytes written and whether the last frame was complete.
std::pair<size_t, bool> zstdDecompress(const uint8_t *in, size_t inSize,
                                       uint8_t *out, size_t capacity,
                                       const std::string &path) {
  Dctx ctx(ZSTD_createDCtx());
  if (!ctx)
    throw std::bad_alloc();
  ZSTD_inBuffer input{in, inSize, 0};
  ZSTD_outBuffer output{out, capacity, 0};
  // A return of 0 means a frame ended and was flushed whole; another frame
  // may follow it.
  bool complete = false;
  while (output.pos < output.size) {
    size_t before = output.pos, consumed = input.pos;
    size_t ret = ZSTD_decompressStream(ctx.get(), &output, &input);
    if (ZSTD_isError(ret))
      throw DataError(path + ": bad zstd data: " + ZSTD_getErrorName(ret));
    complete = ret == 0;
    if (input.pos == input.size &&
        (complete || (output.pos == before && input.pos == consumed)))
      break;
  }
  return {output.pos, complete};
}

/// The raw shard's bytes, wherever they live; `owner` keeps them alive.
struct ShardBytes {
  const uint8_t *data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

struct ShardEntry {
  MdsShard info;
  std::string compression; // "" or "zstd[:N]"
  std::shared_ptr<const MappedFile> file;
  /// The raw hashes to check on the first decompression (name -> digest).
  std::vector<std::pair<std::string, std::string>> rawHashes;
  mutable std::atomic<bool> rawHashesChecked{false};

  // What checkFile checks, from the index (Impl::index, kept).
  const nlohmann::json *fileInfo = nullptr, *rawInfo = nullptr;
  std::vector<std::string> hashNames;
  int64_t fileBytes = 0;
  std::string indexPath;
  /// The file read, relative to the directory (its name in a remote).
  std::string fileName;
  /// When a background download was last asked for (steady ms), or never.
  mutable std::atomic<int64_t> prefetchedAt{INT64_MIN / 2};
};

} // namespace

//===----------------------------------------------------------------------===//
// Public helpers
//===----------------------------------------------------------------------===//

std::optional<MdsColumn> parseMdsEncoding(const std::string &name,
                                          const std::string &encoding) {
  return parseEncoding(name, encoding);
}

bool isMdsHash(const std::string &name) {
  return evpName(name) || isXxhash(name);
}

std::string mdsHexDigest(const std::string &name, const void *data,
                         size_t size) {
  if (const char *evp = evpName(name)) {
    const EVP_MD *md = EVP_get_digestbyname(evp);
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx(EVP_MD_CTX_new(),
                                                            EVP_MD_CTX_free);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!md || !ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1 ||
        EVP_DigestUpdate(ctx.get(), data, size) != 1 ||
        EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1)
      throw std::runtime_error("hash " + name + ": OpenSSL failed");
    return hex(digest, length);
  }
  // Python's xxhash hexdigest() is the canonical (big-endian) form, seed 0.
  if (name == "xxh32") {
    XXH32_canonical_t c;
    XXH32_canonicalFromHash(&c, XXH32(data, size, 0));
    return hex(c.digest, sizeof(c.digest));
  }
  if (name == "xxh64") {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH64(data, size, 0));
    return hex(c.digest, sizeof(c.digest));
  }
  if (name == "xxh3_64") {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH3_64bits(data, size));
    return hex(c.digest, sizeof(c.digest));
  }
  if (name == "xxh128" || name == "xxh3_128") {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(data, size));
    return hex(c.digest, sizeof(c.digest));
  }
  throw std::invalid_argument("unsupported hash '" + name + "'");
}

//===----------------------------------------------------------------------===//
// MdsReader
//===----------------------------------------------------------------------===//

struct MdsReader::Impl {
  std::string dir;
  MdsOptions options;
  std::vector<MdsColumn> columns;
  std::string compression;
  std::vector<std::string> hashes;
  std::vector<MdsShard> shardInfos;
  std::vector<std::unique_ptr<ShardEntry>> shards;
  int64_t size = 0;
  json index;

  // Decompressed shards, most recently used first.
  using Future = std::shared_future<std::shared_ptr<const ShardBytes>>;
  struct Cached {
    Future future;
    std::list<int64_t>::iterator lru;
  };
  mutable std::mutex cacheMutex;
  mutable std::list<int64_t> lru;
  mutable std::unordered_map<int64_t, Cached> cache;

  /// Reads shard `s`'s entry in the index.
  void openShard(size_t s, const json &obj, const std::string &indexPath);
  /// Maps the shard's file and checks its size, hashes and header.
  void checkFile(ShardEntry &entry) const;
  /// The decompressed shard's hashes, checked on first decompression.
  void collectRawHashes(ShardEntry &entry) const;
  /// Maps `path` as shard `entry`'s file, checked as checkFile checks it.
  std::shared_ptr<const MappedFile> mapChecked(const ShardEntry &entry,
                                               const std::string &path) const;
  ShardBytes bytes(int64_t shard) const;
  std::shared_ptr<const ShardBytes> decompress(int64_t shard,
                                               const MappedFile &file) const;
  /// From the remote: downloads the shard unless cached, leases and maps
  /// it, decompressing it when compressed.
  std::shared_ptr<const ShardBytes> fetchRemote(int64_t shard) const;
};

namespace {

[[noreturn]] void indexError(const std::string &indexPath, size_t shard,
                             const std::string &what) {
  throw std::runtime_error(indexPath + ": shard " + std::to_string(shard) +
                           ": " + what);
}

const json &field(const json &obj, const char *key,
                  const std::string &indexPath, size_t shard) {
  auto it = obj.find(key);
  if (it == obj.end())
    indexError(indexPath, shard, std::string("missing '") + key + "'");
  return *it;
}

int64_t nonNegative(const json &value, const char *key,
                    const std::string &indexPath, size_t shard) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0)
    indexError(indexPath, shard,
               std::string("'") + key + "' must be a non-negative integer");
  return value.get<int64_t>();
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Checks the hashes the index lists that `info` records, over `data`.
void checkHashes(const std::vector<std::string> &names, const json &info,
                 const uint8_t *data, size_t size, const std::string &path) {
  const json *recorded = nullptr;
  auto it = info.find("hashes");
  if (it != info.end() && it->is_object())
    recorded = &*it;
  for (const std::string &name : names) {
    if (!isMdsHash(name))
      throw std::runtime_error(path + ": unsupported hash '" + name +
                               "' in the index");
    if (!recorded || !recorded->contains(name))
      continue;
    const json &expected = (*recorded)[name];
    std::string digest = mdsHexDigest(name, data, size);
    if (!expected.is_string() || expected.get<std::string>() != digest)
      throw std::runtime_error(path + ": " + name + " hash " + digest +
                               " differs from the index's " + expected.dump());
  }
}

/// Checks the header at the start of a raw shard: `prefix` holds its first
/// `prefixSize` bytes, at least 4 + 4 * (samples + 1) of them.
void checkCount(const uint8_t *prefix, size_t prefixSize, int64_t samples,
                const std::string &path) {
  if (prefixSize < 4)
    throw std::runtime_error(path + ": shard too short for its header");
  int64_t n = readU32(prefix);
  if (n != samples)
    throw std::runtime_error(path + ": header has " + std::to_string(n) +
                             " samples, the index " + std::to_string(samples));
}

void checkHeader(const uint8_t *prefix, size_t prefixSize, int64_t samples,
                 int64_t rawBytes, const std::string &path) {
  checkCount(prefix, prefixSize, samples, path);
  int64_t n = samples;
  size_t headerEnd = 4 + 4 * (size_t(n) + 1);
  if (prefixSize < headerEnd)
    throw std::runtime_error(path + ": shard too short for its " +
                             std::to_string(n) + " offsets");
  int64_t first = readU32(prefix + 4);
  int64_t last = readU32(prefix + 4 + 4 * n);
  if (first < int64_t(headerEnd) || first > last || last != rawBytes)
    throw std::runtime_error(
        path + ": offsets span [" + std::to_string(first) + ", " +
        std::to_string(last) + "), expected within [" +
        std::to_string(headerEnd) + ", " + std::to_string(rawBytes) +
        ") and ending at the shard's size " + std::to_string(rawBytes));
}

} // namespace

void MdsReader::Impl::openShard(size_t s, const json &obj,
                                const std::string &indexPath) {
  if (!obj.is_object())
    indexError(indexPath, s, "not an object");
  const json &version = field(obj, "version", indexPath, s);
  if (version != 2)
    indexError(indexPath, s, "unsupported version " + version.dump());
  const json &format = field(obj, "format", indexPath, s);
  if (format != "mds")
    indexError(indexPath, s,
               "format " + format.dump() + " is not read (only \"mds\")");

  // Columns: every shard must agree with the first.
  const json &names = field(obj, "column_names", indexPath, s);
  const json &encodings = field(obj, "column_encodings", indexPath, s);
  const json &sizes = field(obj, "column_sizes", indexPath, s);
  if (!names.is_array() || !encodings.is_array() || !sizes.is_array() ||
      names.size() != encodings.size() || names.size() != sizes.size())
    indexError(indexPath, s,
               "column_names, column_encodings and column_sizes must be "
               "arrays of one length");
  std::vector<MdsColumn> shardColumns;
  for (size_t c = 0; c < names.size(); ++c) {
    if (!names[c].is_string() || !encodings[c].is_string())
      indexError(indexPath, s, "column names and encodings must be strings");
    std::string name = names[c], encoding = encodings[c];
    std::optional<MdsColumn> column = parseEncoding(name, encoding);
    if (!column)
      indexError(indexPath, s,
                 "column '" + name + "' has unsupported encoding '" + encoding +
                     "'");
    // Streaming's reader treats a size of 0 like null (variable size).
    int64_t size = sizes[c].is_null()             ? 0
                   : sizes[c].is_number_integer() ? sizes[c].get<int64_t>()
                                                  : -1;
    if (size != column->fixedSize)
      indexError(indexPath, s,
                 "column '" + name + "' (" + encoding + ") has size " +
                     sizes[c].dump() + ", expected " +
                     (column->fixedSize ? std::to_string(column->fixedSize)
                                        : std::string("null")));
    shardColumns.push_back(std::move(*column));
  }
  if (s == 0) {
    columns = shardColumns;
  } else {
    bool same = shardColumns.size() == columns.size();
    for (size_t c = 0; same && c < columns.size(); ++c)
      same = shardColumns[c].name == columns[c].name &&
             shardColumns[c].encoding == columns[c].encoding;
    if (!same)
      indexError(indexPath, s, "columns differ from shard 0's");
  }

  auto entry = std::make_unique<ShardEntry>();
  MdsShard &info = entry->info;
  info.samples =
      nonNegative(field(obj, "samples", indexPath, s), "samples", indexPath, s);
  info.firstSample = size;

  // Hashes named in the index; each file's own list says which it has.
  std::vector<std::string> hashNames;
  if (auto it = obj.find("hashes"); it != obj.end() && !it->is_null()) {
    if (!it->is_array())
      indexError(indexPath, s, "'hashes' must be a list");
    for (const json &h : *it) {
      if (!h.is_string())
        indexError(indexPath, s, "'hashes' must be a list of names");
      hashNames.push_back(h);
    }
  }
  if (s == 0)
    hashes = hashNames;

  const json &raw = field(obj, "raw_data", indexPath, s);
  if (!raw.is_object())
    indexError(indexPath, s, "'raw_data' must be an object");
  auto basename = [&](const json &fileInfo, const char *key) {
    const json &b = field(fileInfo, "basename", indexPath, s);
    std::string name = b.is_string() ? b.get<std::string>() : "";
    // Merged indexes name files in subdirectories; never outside `dir`.
    if (name.empty() || name.front() == '/' || name == ".." ||
        name.rfind("../", 0) == 0 || name.find("/../") != std::string::npos ||
        (name.size() >= 3 && name.compare(name.size() - 3, 3, "/..") == 0))
      indexError(indexPath, s,
                 std::string("bad ") + key + ".basename " + b.dump());
    return name;
  };
  std::string rawPath = joinPath(dir, basename(raw, "raw_data"));
  info.rawBytes =
      nonNegative(field(raw, "bytes", indexPath, s), "bytes", indexPath, s);
  // Offsets are uint32: no raw shard is larger.
  if (info.rawBytes > int64_t(UINT32_MAX))
    indexError(indexPath, s,
               "raw_data.bytes " + std::to_string(info.rawBytes) +
                   " is past the 4 GiB that uint32 offsets reach");

  const json &comp = field(obj, "compression", indexPath, s);
  if (!comp.is_null() && !comp.is_string())
    indexError(indexPath, s, "'compression' must be a string or null");
  entry->compression = comp.is_null() ? "" : comp.get<std::string>();
  const json *zip = nullptr;
  if (!entry->compression.empty()) {
    const std::string &c = entry->compression;
    std::string family = c.substr(0, c.find(':'));
    int level = 3;
    if (family.size() != c.size()) {
      std::string lv = c.substr(family.size() + 1);
      auto [end, ec] = std::from_chars(lv.data(), lv.data() + lv.size(), level);
      if (ec != std::errc() || end != lv.data() + lv.size())
        level = -1;
    }
    if (family == "br" || family == "bz2" || family == "gz" ||
        family == "snappy")
      throw std::runtime_error(rawPath + ": compression '" + c +
                               "' is not read (only zstd); decompress the "
                               "shards or rewrite them with zstd");
    if (family != "zstd" || level < 1 || level > 22)
      throw std::runtime_error(rawPath + ": unknown compression '" + c + "'");
    auto it = obj.find("zip_data");
    if (it == obj.end() || !it->is_object())
      indexError(indexPath, s,
                 "compression '" + c + "' but no 'zip_data' object");
    zip = &*it;
  }
  if (s == 0)
    compression = entry->compression;

  // The raw file is read when it is there, as Streaming does; else the
  // compressed one.
  const json *used = &raw;
  std::string path = rawPath;
  entry->fileName = basename(raw, "raw_data");
  int64_t expectedBytes = info.rawBytes;
  if (zip && !isRegularFile(rawPath)) {
    used = zip;
    entry->fileName = basename(*zip, "zip_data");
    path = joinPath(dir, entry->fileName);
    expectedBytes =
        nonNegative(field(*zip, "bytes", indexPath, s), "bytes", indexPath, s);
    info.compressed = true;
  }
  info.path = path;
  entry->fileInfo = used;
  entry->rawInfo = &raw;
  entry->hashNames = std::move(hashNames);
  entry->fileBytes = expectedBytes;
  entry->indexPath = indexPath;

  size += info.samples;
  shardInfos.push_back(info);
  shards.push_back(std::move(entry));
}

void MdsReader::Impl::checkFile(ShardEntry &entry) const {
  if (!isRegularFile(entry.info.path))
    throw std::runtime_error(entry.info.path +
                             ": missing shard file (listed in " +
                             entry.indexPath + ")");
  entry.file = mapChecked(entry, entry.info.path);
  collectRawHashes(entry);
}

void MdsReader::Impl::collectRawHashes(ShardEntry &entry) const {
  if (options.verifyHashes && entry.info.compressed)
    if (auto it = entry.rawInfo->find("hashes");
        it != entry.rawInfo->end() && it->is_object())
      for (const std::string &name : entry.hashNames)
        if (it->contains(name) && (*it)[name].is_string())
          entry.rawHashes.emplace_back(name, (*it)[name]);
}

std::shared_ptr<const MappedFile>
MdsReader::Impl::mapChecked(const ShardEntry &entry,
                            const std::string &path) const {
  const MdsShard &info = entry.info;
  auto mapped = std::make_shared<MappedFile>(path);
  const MappedFile &file = *mapped;
  if (int64_t(file.size()) != entry.fileBytes)
    throw std::runtime_error(path + ": " + std::to_string(file.size()) +
                             " bytes, the index says " +
                             std::to_string(entry.fileBytes));
  if (options.verifyHashes)
    checkHashes(entry.hashNames, *entry.fileInfo, file.data(), file.size(),
                path);

  // The header: the sample count, and offsets from the header's end to the
  // raw shard's size.
  size_t headerBytes = 4 + 4 * (size_t(info.samples) + 1);
  if (!info.compressed) {
    checkHeader(file.data(), file.size(), info.samples, info.rawBytes, path);
  } else {
    // The sample count first, so that a wrong count in the index never
    // sizes the buffer.
    uint8_t count[4];
    size_t got = zstdDecompress(file.data(), file.size(), count, 4, path).first;
    checkCount(count, got, info.samples, path);
    std::vector<uint8_t> prefix(std::min<size_t>(headerBytes, info.rawBytes));
    got = zstdDecompress(file.data(), file.size(), prefix.data(), prefix.size(),
                         path)
              .first;
    checkHeader(prefix.data(), got, info.samples, info.rawBytes, path);
  }
  return mapped;
}

MdsReader::MdsReader(const std::string &dir, const MdsOptions &options)
    : impl_(std::make_unique<Impl>()) {
  impl_->dir = dir;
  impl_->options = options;
  if (impl_->options.cachedShards < 1)
    impl_->options.cachedShards = 1;
  std::string indexPath = joinPath(dir, "index.json");
  if (impl_->options.remote)
    impl_->options.remote->fetch("index.json", nullptr);
  // Shard entries point into the index: it lives as long as the reader.
  json &index = impl_->index;
  {
    MappedFile file(indexPath);
    index = json::parse(file.data(), file.data() + file.size(), nullptr,
                        /*allow_exceptions=*/false);
  }
  if (index.is_discarded() || !index.is_object())
    throw std::runtime_error(indexPath + ": not a JSON object");
  auto version = index.find("version");
  if (version == index.end() || *version != 2)
    throw std::runtime_error(
        indexPath + ": unsupported index version " +
        (version == index.end() ? std::string("(none)") : version->dump()) +
        ", expected 2");
  auto shards = index.find("shards");
  if (shards == index.end() || !shards->is_array())
    throw std::runtime_error(indexPath + ": missing 'shards' list");
  if (shards->empty())
    throw std::runtime_error(indexPath + ": no shards");
  for (size_t s = 0; s < shards->size(); ++s)
    impl_->openShard(s, (*shards)[s], indexPath);
  if (impl_->options.remote) {
    // Shards are downloaded, and checked, when first read.
    for (auto &shard : impl_->shards)
      impl_->collectRawHashes(*shard);
    if (impl_->size == 0)
      throw std::runtime_error(indexPath + ": no samples");
    return;
  }

  // Hashing reads every shard file: on several threads. The error reported
  // is the first shard's in index order, whatever the threads' timing.
  size_t n = impl_->shards.size();
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t s; !failed && (s = next++) < n;) {
      try {
        impl_->checkFile(*impl_->shards[s]);
      } catch (...) {
        errors[s] = std::current_exception();
        failed = true;
      }
    }
  };
  size_t numThreads = std::min<size_t>(
      {n, 8, std::max(1u, std::thread::hardware_concurrency())});
  std::vector<std::thread> threads;
  for (size_t t = 1; t < numThreads; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
  if (impl_->size == 0)
    throw std::runtime_error(indexPath + ": no samples");
}

MdsReader::~MdsReader() {
  // Queued downloads check their files with this reader's entries.
  if (impl_->options.remote)
    impl_->options.remote->cancelPrefetches();
}

void MdsReader::prefetch(const int64_t *indices, int64_t count) const {
  if (!impl_->options.remote)
    return;
  using Clock = std::chrono::steady_clock;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          Clock::now().time_since_epoch())
                          .count();
  for (int64_t i = 0; i < count; ++i) {
    int64_t s = shardOf(indices[i]);
    ShardEntry &entry = *impl_->shards[s];
    // Queued again only when it is missing a while after (evicted since).
    if (now - entry.prefetchedAt.load() < 10000 ||
        isRegularFile(entry.info.path))
      continue;
    entry.prefetchedAt = now;
    impl_->options.remote->prefetch(
        entry.fileName, [impl = impl_.get(), &entry](const std::string &file) {
          impl->mapChecked(entry, file);
        });
  }
}

const std::string &MdsReader::dir() const { return impl_->dir; }
int64_t MdsReader::size() const { return impl_->size; }
const std::vector<MdsColumn> &MdsReader::columns() const {
  return impl_->columns;
}
int64_t MdsReader::columnIndex(const std::string &name) const {
  for (size_t c = 0; c < impl_->columns.size(); ++c)
    if (impl_->columns[c].name == name)
      return int64_t(c);
  return -1;
}
const std::string &MdsReader::compression() const { return impl_->compression; }
const std::vector<std::string> &MdsReader::hashes() const {
  return impl_->hashes;
}
const std::vector<MdsShard> &MdsReader::shards() const {
  return impl_->shardInfos;
}

int64_t MdsReader::shardOf(int64_t index) const {
  if (index < 0 || index >= impl_->size)
    throw std::out_of_range("MDS sample " + std::to_string(index) +
                            " out of range [0, " + std::to_string(impl_->size) +
                            ")");
  const auto &infos = impl_->shardInfos;
  // The last shard whose first sample is <= index (empty shards skipped).
  auto it = std::upper_bound(
      infos.begin(), infos.end(), index,
      [](int64_t i, const MdsShard &s) { return i < s.firstSample; });
  // Empty shards share their first sample with the next shard, which
  // upper_bound passes: the shard found is never empty.
  return (it - infos.begin()) - 1;
}

std::string MdsReader::describe(int64_t index) const {
  int64_t s = shardOf(index);
  const MdsShard &info = impl_->shardInfos[s];
  return info.path + " row " + std::to_string(index - info.firstSample);
}

std::shared_ptr<const ShardBytes>
MdsReader::Impl::decompress(int64_t s, const MappedFile &file) const {
  const ShardEntry &entry = *shards[s];
  const MdsShard &info = entry.info;
  size_t rawBytes = size_t(info.rawBytes);
  // One byte past the raw size: a shard that decompresses to more fills it.
  std::shared_ptr<uint8_t[]> buffer(new uint8_t[rawBytes + 1]);
  auto [got, complete] = zstdDecompress(file.data(), file.size(), buffer.get(),
                                        rawBytes + 1, info.path);
  if (got != rawBytes || !complete)
    throw DataError(info.path + ": decompresses to " +
                    (got > rawBytes ? "more than " + std::to_string(rawBytes)
                                    : std::to_string(got)) +
                    " bytes" + (complete ? "" : " (truncated)") +
                    ", the index says " + std::to_string(rawBytes));
  if (!entry.rawHashesChecked.load()) {
    for (const auto &[name, expected] : entry.rawHashes) {
      std::string digest = mdsHexDigest(name, buffer.get(), rawBytes);
      if (digest != expected)
        throw DataError(info.path + ": decompressed " + name + " hash " +
                        digest + " differs from the index's \"" + expected +
                        "\"");
    }
    entry.rawHashesChecked = true;
  }
  auto bytes = std::make_shared<ShardBytes>();
  bytes->data = buffer.get();
  bytes->size = rawBytes;
  bytes->owner = buffer;
  return bytes;
}

std::shared_ptr<const ShardBytes>
MdsReader::Impl::fetchRemote(int64_t s) const {
  const ShardEntry &entry = *shards[s];
  struct Held {
    ShardCache::Lease lease;
    std::shared_ptr<const MappedFile> file;
    std::shared_ptr<const ShardBytes> decompressed;
  };
  auto held = std::make_shared<Held>();
  options.remote->fetch(
      entry.fileName,
      [&](const std::string &downloaded) { mapChecked(entry, downloaded); },
      &held->lease);
  held->file = mapChecked(entry, entry.info.path);
  auto bytes = std::make_shared<ShardBytes>();
  if (entry.info.compressed) {
    held->decompressed = decompress(s, *held->file);
    bytes->data = held->decompressed->data;
    bytes->size = held->decompressed->size;
  } else {
    bytes->data = held->file->data();
    bytes->size = held->file->size();
  }
  bytes->owner = std::move(held);
  return bytes;
}

ShardBytes MdsReader::Impl::bytes(int64_t s) const {
  const ShardEntry &entry = *shards[s];
  if (!entry.info.compressed && !options.remote)
    return {entry.file->data(), entry.file->size(), entry.file};

  Future future;
  std::promise<std::shared_ptr<const ShardBytes>> promise;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(s);
    if (it != cache.end()) {
      lru.splice(lru.begin(), lru, it->second.lru);
      future = it->second.future;
    } else {
      // Other threads wanting this shard wait for this one's result.
      future = promise.get_future().share();
      lru.push_front(s);
      cache.emplace(s, Cached{future, lru.begin()});
      mine = true;
      // Readers of an evicted shard keep its bytes until they are done.
      while (int64_t(cache.size()) > options.cachedShards) {
        cache.erase(lru.back());
        lru.pop_back();
      }
    }
  }
  if (mine) {
    try {
      promise.set_value(options.remote ? fetchRemote(s)
                                       : decompress(s, *entry.file));
    } catch (...) {
      // A shard that fails stays failed until evicted: each of its rows
      // fails fast instead of decompressing it again.
      promise.set_exception(std::current_exception());
    }
  }
  std::shared_ptr<const ShardBytes> bytes = future.get();
  return {bytes->data, bytes->size, bytes};
}

MdsRow MdsReader::row(int64_t index) const {
  int64_t s = shardOf(index);
  const ShardEntry &entry = *impl_->shards[s];
  int64_t r = index - entry.info.firstSample;
  ShardBytes shard = impl_->bytes(s);
  auto fail = [&](const std::string &what) -> DataError {
    return DataError(entry.info.path + " row " + std::to_string(r) + ": " +
                     what);
  };
  size_t headerEnd = 4 + 4 * (size_t(entry.info.samples) + 1);
  if (shard.size < headerEnd)
    throw fail("shard shorter than its offsets");
  uint32_t begin = readU32(shard.data + 4 + 4 * r);
  uint32_t end = readU32(shard.data + 8 + 4 * r);
  if (begin < headerEnd || begin > end || end > shard.size)
    throw fail("offsets [" + std::to_string(begin) + ", " +
               std::to_string(end) + ") outside the shard's rows [" +
               std::to_string(headerEnd) + ", " + std::to_string(shard.size) +
               ")");
  const uint8_t *p = shard.data + begin;
  size_t rowSize = end - begin;

  const std::vector<MdsColumn> &columns = impl_->columns;
  size_t numVariable = 0;
  for (const MdsColumn &c : columns)
    numVariable += c.fixedSize == 0;
  if (rowSize < 4 * numVariable)
    throw fail("row of " + std::to_string(rowSize) +
               " bytes is too short for its " + std::to_string(numVariable) +
               " cell sizes");
  MdsRow row;
  row.keepAlive_ = shard.owner;
  row.cells_.reserve(columns.size());
  size_t at = 4 * numVariable, variable = 0;
  for (const MdsColumn &c : columns) {
    size_t cellSize =
        c.fixedSize ? size_t(c.fixedSize) : size_t(readU32(p + 4 * variable++));
    if (cellSize > rowSize - at)
      throw fail("column '" + c.name + "' needs " + std::to_string(cellSize) +
                 " bytes at " + std::to_string(at) + ", past the row's " +
                 std::to_string(rowSize));
    row.cells_.emplace_back(reinterpret_cast<const char *>(p + at), cellSize);
    at += cellSize;
  }
  if (at != rowSize)
    throw fail("cells take " + std::to_string(at) + " bytes, the row has " +
               std::to_string(rowSize));
  return row;
}

std::string MdsReader::cell(int64_t index, size_t column) const {
  return std::string(row(index).cell(column));
}

torch::Tensor MdsReader::decodeTensor(const MdsColumn &column,
                                      std::string_view bytes,
                                      const std::string &where) {
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  std::string at = where + ": column '" + column.name + "'";
  switch (column.type) {
  case MdsType::Scalar: {
    const NumpyType *t = numpyTypeNamed(column.numpyType);
    if (int64_t(bytes.size()) != t->bytes)
      throw DataError(at + ": " + std::to_string(bytes.size()) +
                      " bytes for a " + column.numpyType);
    return numpyToTensor(*t, data, 1, {}, at);
  }
  case MdsType::StrNumber: {
    // Python's int()/float() also take surrounding whitespace.
    std::string_view text = bytes;
    while (!text.empty() && std::isspace((unsigned char)text.front()))
      text.remove_prefix(1);
    while (!text.empty() && std::isspace((unsigned char)text.back()))
      text.remove_suffix(1);
    if (!text.empty() && text.front() == '+')
      text.remove_prefix(1);
    const char *first = text.data(), *last = text.data() + text.size();
    if (column.dtype == torch::kLong) {
      int64_t value = 0;
      auto [end, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || end != last || text.empty())
        throw DataError(at + ": '" + std::string(bytes) + "' is not an int64");
      return torch::scalar_tensor(value, torch::kLong);
    }
    double value = 0;
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last || text.empty())
      throw DataError(at + ": '" + std::string(bytes) + "' is not a number");
    return torch::scalar_tensor(value, torch::kDouble);
  }
  case MdsType::NDArray: {
    size_t i = 0;
    const NumpyType *t = nullptr;
    if (!column.numpyType.empty()) {
      t = numpyTypeNamed(column.numpyType);
    } else {
      if (bytes.size() < 1)
        throw DataError(at + ": empty ndarray cell");
      t = numpyTypeCoded(data[i++]);
      if (!t)
        throw DataError(at + ": unknown ndarray dtype code " +
                        std::to_string(int(data[0])));
    }
    std::vector<int64_t> shape = column.shape;
    if (column.shape.empty()) {
      if (bytes.size() < i + 1)
        throw DataError(at + ": ndarray cell ends before its shape");
      int ndim = data[i] >> 2, dimBytes = 1 << (data[i] & 3);
      ++i;
      if (bytes.size() < i + size_t(ndim) * dimBytes)
        throw DataError(at + ": ndarray cell ends inside its shape");
      for (int d = 0; d < ndim; ++d, i += dimBytes) {
        uint64_t dim = 0;
        std::memcpy(&dim, data + i, dimBytes);
        if (dim > uint64_t(1) << 40)
          throw DataError(at + ": ndarray dimension " + std::to_string(dim) +
                          " is too large");
        shape.push_back(int64_t(dim));
      }
    }
    int64_t count = 1;
    for (int64_t d : shape) {
      count *= d;
      if (count > (int64_t(1) << 40))
        throw DataError(at + ": ndarray too large");
    }
    if (int64_t(bytes.size() - i) != count * t->bytes)
      throw DataError(at + ": ndarray of " + std::to_string(count) + " " +
                      t->name + " values needs " +
                      std::to_string(count * t->bytes) + " bytes, has " +
                      std::to_string(bytes.size() - i));
    return numpyToTensor(*t, data + i, count, shape, at);
  }
  default:
    throw std::invalid_argument(at + ": encoding '" + column.encoding +
                                "' is not a number or an array");
  }
}

torch::Tensor MdsReader::decodeImage(const MdsColumn &column,
                                     std::string_view bytes,
                                     const std::string &where) {
  std::string at = where + ": column '" + column.name + "'";
  if (column.type == MdsType::EncodedImage)
    return ::composer::runtime::decodeImage(bytes.data(), bytes.size(), at);
  if (column.type != MdsType::PilImage)
    throw std::invalid_argument(at + ": encoding '" + column.encoding +
                                "' is not an image");
  // [width u32][height u32][mode size u32][mode][pixels, row-major].
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  if (bytes.size() < 12)
    throw DataError(at + ": pil cell shorter than its header");
  int64_t width = readU32(data), height = readU32(data + 4);
  size_t modeSize = readU32(data + 8);
  if (bytes.size() < 12 + modeSize)
    throw DataError(at + ": pil cell ends inside its mode");
  std::string mode(bytes.substr(12, modeSize));
  int64_t channels = mode == "L"      ? 1
                     : mode == "RGB"  ? 3
                     : mode == "RGBA" ? 4
                                      : 0;
  if (!channels)
    throw DataError(at + ": PIL mode '" + mode +
                    "' is not read (only L, RGB and RGBA)");
  size_t pixels = bytes.size() - 12 - modeSize;
  if (width <= 0 || height <= 0 ||
      uint64_t(pixels) != uint64_t(width) * uint64_t(height) * channels)
    throw DataError(at + ": pil cell of " + std::to_string(width) + "x" +
                    std::to_string(height) + " " + mode + " has " +
                    std::to_string(pixels) + " pixel bytes");
  torch::Tensor hwc =
      torch::from_blob(const_cast<uint8_t *>(data) + 12 + modeSize,
                       {height, width, channels}, torch::kByte);
  // As PIL's convert('RGB'): gray repeats, alpha is dropped.
  torch::Tensor chw = hwc.permute({2, 0, 1});
  if (channels == 1)
    chw = chw.expand({3, height, width});
  else if (channels == 4)
    chw = chw.narrow(0, 0, 3);
  return chw.contiguous();
}

//===----------------------------------------------------------------------===//
// MdsDataset
//===----------------------------------------------------------------------===//

namespace {

bool isImage(const MdsColumn &c) {
  return c.type == MdsType::EncodedImage || c.type == MdsType::PilImage;
}
bool isTensor(const MdsColumn &c) {
  return c.type == MdsType::Scalar || c.type == MdsType::StrNumber ||
         c.type == MdsType::NDArray;
}
bool isIntegral(const MdsColumn &c) {
  return (c.type == MdsType::Scalar || c.type == MdsType::StrNumber) &&
         c.dtype && !torch::isFloatingType(*c.dtype);
}

} // namespace

MdsDataset::MdsDataset(std::shared_ptr<const MdsReader> reader,
                       const std::string &inputColumn,
                       const std::string &targetColumn,
                       const std::vector<std::string> &columns)
    : reader_(std::move(reader)) {
  const std::string &dir = reader_->dir();
  auto find = [&](const std::string &name, const char *role) {
    int64_t c = reader_->columnIndex(name);
    if (c < 0) {
      std::string have;
      for (const MdsColumn &column : reader_->columns())
        have += (have.empty() ? "" : ", ") + column.name;
      throw std::runtime_error(dir + ": no column '" + name + "' for the " +
                               role + "; columns: " + have);
    }
    const MdsColumn &column = reader_->columns()[c];
    if (!isImage(column) && !isTensor(column))
      throw std::runtime_error(
          dir + ": column '" + name + "' (" + column.encoding +
          ") cannot be the " + role +
          ": only numbers, ndarrays and jpeg/png/pil images are" +
          (column.encoding == "pkl" ? " (pickle is never loaded: it runs code)"
                                    : ""));
    return size_t(c);
  };
  input_ = find(inputColumn, "input");
  target_ = find(targetColumn, "target");
  const MdsColumn &in = reader_->columns()[input_];
  const MdsColumn &out = reader_->columns()[target_];
  if (isImage(out))
    throw std::runtime_error(dir + ": column '" + out.name + "' (" +
                             out.encoding +
                             ") is an image; targets are "
                             "numbers or ndarrays");

  // Shapes and dtypes the encodings leave open come from sample 0.
  std::optional<MdsRow> first;
  auto firstRow = [&]() -> const MdsRow & {
    if (!first)
      first = reader_->row(0);
    return *first;
  };
  auto describeTensor = [&](size_t index, std::vector<int64_t> &shape,
                            torch::ScalarType &type) {
    const MdsColumn &c = reader_->columns()[index];
    if (c.type != MdsType::NDArray) {
      shape = {};
      type = *c.dtype;
    } else if (c.dtype && !c.shape.empty()) {
      shape = c.shape;
      type = *c.dtype;
    } else {
      torch::Tensor t = MdsReader::decodeTensor(c, firstRow().cell(index),
                                                reader_->describe(0));
      shape = t.sizes().vec();
      type = t.scalar_type();
    }
  };
  if (isImage(in)) {
    if (!isIntegral(out))
      throw std::runtime_error(dir + ": column '" + out.name + "' (" +
                               out.encoding +
                               ") cannot be an image's target: class indices "
                               "are integers");
    spec_.kind = SampleKind::Image;
    spec_.inputShape = {3, 0, 0};
    spec_.inputType = torch::kByte;
  } else {
    spec_.kind = SampleKind::Tensor;
    describeTensor(input_, spec_.inputShape, spec_.inputType);
  }
  if (isIntegral(out)) {
    spec_.targetShape = {};
    spec_.targetType = torch::kLong;
  } else {
    describeTensor(target_, spec_.targetShape, spec_.targetType);
  }
  spec_.inputName = in.name;
  spec_.targetName = out.name;
  for (const std::string &name : columns) {
    size_t index = find(name, "column");
    const MdsColumn &column = reader_->columns()[index];
    if (isImage(column) || isImage(in))
      throw std::runtime_error(dir + ": column '" + name +
                               "': further columns are numbers or ndarrays, "
                               "beside an input that is not an image");
    ColumnSpec spec{name};
    describeTensor(index, spec.shape, spec.type);
    spec_.columns.push_back(std::move(spec));
    columns_.push_back(index);
  }
}

torch::Tensor MdsDataset::target(const MdsRow &row, int64_t index) const {
  const MdsColumn &c = reader_->columns()[target_];
  torch::Tensor t =
      MdsReader::decodeTensor(c, row.cell(target_), reader_->describe(index));
  return isIntegral(c) ? t.to(torch::kLong) : t;
}

Sample MdsDataset::get(int64_t index) const {
  MdsRow row = reader_->row(index);
  const MdsColumn &in = reader_->columns()[input_];
  Sample sample;
  sample.input =
      isImage(in)
          ? MdsReader::decodeImage(in, row.cell(input_), describe(index))
          : MdsReader::decodeTensor(in, row.cell(input_), describe(index));
  sample.target = target(row, index);
  for (size_t column : columns_)
    sample.columns.push_back(MdsReader::decodeTensor(
        reader_->columns()[column], row.cell(column), describe(index)));
  return sample;
}

Sample MdsDataset::getCut(int64_t index, const ImageCutPlanner &plan) const {
  const MdsColumn &in = reader_->columns()[input_];
  if (in.type != MdsType::EncodedImage)
    return Dataset::getCut(index, plan);
  MdsRow row = reader_->row(index);
  std::string_view bytes = row.cell(input_);
  Sample sample;
  sample.input =
      decodeImageCut(bytes.data(), bytes.size(),
                     describe(index) + ": column '" + in.name + "'", plan);
  sample.target = target(row, index);
  return sample;
}

std::string MdsDataset::describe(int64_t index) const {
  return reader_->describe(index);
}

std::vector<int64_t> MdsDataset::shardStarts() const {
  std::vector<int64_t> starts;
  bool compressed = false;
  for (const MdsShard &s : reader_->shards()) {
    compressed |= s.compressed;
    if (s.samples > 0)
      starts.push_back(s.firstSample);
  }
  return compressed ? starts : std::vector<int64_t>{};
}

std::shared_ptr<const Dataset>
openMds(const std::string &dir, const std::string &inputColumn,
        const std::string &targetColumn, const MdsOptions &options,
        const std::vector<std::string> &columns) {
  auto reader = std::make_shared<const MdsReader>(dir, options);
  return std::make_shared<MdsDataset>(std::move(reader), inputColumn,
                                      targetColumn, columns);
}

} // namespace composer::runtime
