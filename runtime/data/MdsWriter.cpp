//===- MdsWriter.cpp - Writing MosaicML Streaming MDS shards --------------===//
//
// Writes what streaming.MDSWriter writes, byte for byte in the index and the
// shard headers: both hold JSON as Python's json.dumps(sort_keys=True) prints
// it (", " and ": " separators, non-ASCII escaped), so the JSON is printed
// here rather than by a JSON library.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Mds.h"

#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <numeric>

namespace composer::runtime {

namespace {

/// A string as Python's json.dumps (ensure_ascii) prints it.
std::string pyString(const std::string &s) {
  std::string out = "\"";
  auto escape = [&](uint32_t u) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", u);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20)
          escape(c);
        else
          out += char(c);
      }
      continue;
    }
    // UTF-8 to a code point; code points past the BMP as surrogate pairs.
    int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
    if (extra < 0 || i + extra >= s.size())
      throw std::invalid_argument("not UTF-8: " + s);
    uint32_t u = c & (0x3f >> extra);
    for (int k = 1; k <= extra; ++k) {
      unsigned char d = s[i + k];
      if ((d & 0xc0) != 0x80)
        throw std::invalid_argument("not UTF-8: " + s);
      u = (u << 6) | (d & 0x3f);
    }
    i += extra + 1;
    if (u >= 0x10000) {
      u -= 0x10000;
      escape(0xd800 + (u >> 10));
      escape(0xdc00 + (u & 0x3ff));
    } else {
      escape(u);
    }
  }
  return out + "\"";
}

std::string pyStringOrNull(const std::string &s) {
  return s.empty() ? "null" : pyString(s);
}

template <typename T, typename F>
std::string pyList(const std::vector<T> &items, F print) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + print(items[i]);
  return out + "]";
}

void appendU32(std::string &out, uint64_t v) {
  if (v > UINT32_MAX)
    throw std::invalid_argument("MDS shard offset " + std::to_string(v) +
                                " does not fit uint32");
  for (int k = 0; k < 4; ++k)
    out += char((v >> (8 * k)) & 0xff);
}

} // namespace

int64_t parseMdsSize(const std::string &text) {
  std::string s;
  for (char c : text)
    if (!std::isspace((unsigned char)c))
      s += char(std::tolower((unsigned char)c));
  static const std::pair<const char *, int64_t> units[] = {
      {"kb", int64_t(1) << 10},
      {"mb", int64_t(1) << 20},
      {"gb", int64_t(1) << 30},
      {"tb", int64_t(1) << 40}};
  auto bad = [&] {
    return std::invalid_argument("invalid size '" + text +
                                 "': expected bytes, or a number followed "
                                 "by b, kb, mb, gb or tb");
  };
  for (const auto &[suffix, scale] : units) {
    size_t n = std::string(suffix).size();
    if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0) {
      // As bytes_to_int: int(float(number) * unit).
      std::string number = s.substr(0, s.size() - n);
      double value = 0;
      auto [end, ec] =
          std::from_chars(number.data(), number.data() + number.size(), value);
      if (ec != std::errc() || end != number.data() + number.size() ||
          value < 0 || value * double(scale) > 9e18)
        throw bad();
      return int64_t(value * double(scale));
    }
  }
  if (!s.empty() && s.back() == 'b')
    s.pop_back();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    throw bad();
  return value;
}

struct MdsWriter::Impl {
  std::string dir;
  MdsWriterOptions options;
  /// Column order as given, and the sorted order columns are stored in.
  std::vector<size_t> order;
  std::vector<MdsColumn> columns; // sorted
  /// The JSON fields of MDSWriter.get_config(), sorted by key.
  std::string columnFields, formatFields, sizeLimitField;
  std::string config;
  int zstdLevel = 0; // 0: raw
  std::vector<std::string> rows;
  int64_t shardSize = 0;
  std::vector<std::string> shardJson;
  bool finished = false;

  void flush();
  std::string fileInfo(const std::string &basename,
                       const std::string &data) const;
};

MdsWriter::MdsWriter(const std::string &dir, MdsWriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl &w = *impl_;
  w.dir = dir;
  w.options = std::move(options);
  const auto &given = w.options.columns;
  if (given.empty())
    throw std::invalid_argument("MDS writer: no columns");
  w.order.resize(given.size());
  std::iota(w.order.begin(), w.order.end(), 0);
  std::sort(w.order.begin(), w.order.end(), [&](size_t a, size_t b) {
    return given[a].first < given[b].first;
  });
  for (size_t k = 0; k < w.order.size(); ++k) {
    const auto &[name, encoding] = given[w.order[k]];
    if (k > 0 && name == w.columns.back().name)
      throw std::invalid_argument("MDS writer: column '" + name + "' twice");
    std::optional<MdsColumn> column = parseMdsEncoding(name, encoding);
    if (!column)
      throw std::invalid_argument("MDS writer: column '" + name +
                                  "': unknown encoding '" + encoding + "'");
    w.columns.push_back(std::move(*column));
  }

  const std::string &c = w.options.compression;
  if (!c.empty()) {
    w.zstdLevel = 3; // Streaming's default level
    if (c != "zstd") {
      int level = 0;
      bool ok = c.rfind("zstd:", 0) == 0;
      if (ok) {
        auto [end, ec] =
            std::from_chars(c.data() + 5, c.data() + c.size(), level);
        ok = ec == std::errc() && end == c.data() + c.size() && level >= 1 &&
             level <= 22;
      }
      if (!ok)
        throw std::invalid_argument("compression '" + c +
                                    "' is not written: use zstd or zstd:N "
                                    "with N in 1..22");
      w.zstdLevel = level;
    }
  }
  if (!std::is_sorted(w.options.hashes.begin(), w.options.hashes.end()) ||
      std::adjacent_find(w.options.hashes.begin(), w.options.hashes.end()) !=
          w.options.hashes.end())
    throw std::invalid_argument("hashes must be unique and sorted");
  for (const std::string &h : w.options.hashes)
    if (!isMdsHash(h))
      throw std::invalid_argument("unsupported hash '" + h + "'");
  if (w.options.sizeLimit < 0 || w.options.sizeLimit >= (int64_t(1) << 32))
    throw std::invalid_argument("size limit must be in [0, 2^32): offsets "
                                "are uint32");

  // MDSWriter.get_config(), as json.dumps(sort_keys=True).
  w.columnFields =
      "\"column_encodings\": " +
      pyList(w.columns,
             [](const MdsColumn &c) { return pyString(c.encoding); }) +
      ", \"column_names\": " +
      pyList(w.columns, [](const MdsColumn &c) { return pyString(c.name); }) +
      ", \"column_sizes\": " +
      pyList(w.columns,
             [](const MdsColumn &c) {
               return c.fixedSize ? std::to_string(c.fixedSize)
                                  : std::string("null");
             }) +
      ", \"compression\": " + pyStringOrNull(c);
  w.formatFields = "\"format\": \"mds\", \"hashes\": " +
                   pyList(w.options.hashes,
                          [](const std::string &h) { return pyString(h); });
  w.sizeLimitField =
      "\"size_limit\": " +
      (w.options.sizeLimit ? std::to_string(w.options.sizeLimit) : "null");
  w.config = "{" + w.columnFields + ", " + w.formatFields + ", " +
             w.sizeLimitField + ", \"version\": 2}";
  w.shardSize = 8 + int64_t(w.config.size());
}

MdsWriter::~MdsWriter() = default;

void MdsWriter::write(const std::vector<std::string> &cells) {
  Impl &w = *impl_;
  if (w.finished)
    throw std::logic_error("MDS writer: write after finish");
  if (cells.size() != w.columns.size())
    throw std::invalid_argument("MDS writer: " + std::to_string(cells.size()) +
                                " cells for " +
                                std::to_string(w.columns.size()) + " columns");
  // [u32 size of each variable-size cell][cells], in sorted column order.
  std::string row;
  for (size_t k = 0; k < w.columns.size(); ++k) {
    const std::string &cell = cells[w.order[k]];
    const MdsColumn &c = w.columns[k];
    if (c.fixedSize && int64_t(cell.size()) != c.fixedSize)
      throw std::invalid_argument("MDS writer: column '" + c.name + "' (" +
                                  c.encoding + ") takes " +
                                  std::to_string(c.fixedSize) + " bytes, got " +
                                  std::to_string(cell.size()));
    if (!c.fixedSize)
      appendU32(row, cell.size());
  }
  for (size_t k = 0; k < w.columns.size(); ++k)
    row += cells[w.order[k]];
  // MDSWriter closes the shard before a sample that would take it past the
  // limit; each sample costs its bytes and its offset.
  int64_t cost = int64_t(row.size()) + 4;
  if (w.options.sizeLimit && w.options.sizeLimit < w.shardSize + cost &&
      !w.rows.empty())
    w.flush();
  w.rows.push_back(std::move(row));
  w.shardSize += cost;
}

std::string MdsWriter::Impl::fileInfo(const std::string &basename,
                                      const std::string &data) const {
  std::string hashes = "{";
  for (size_t i = 0; i < options.hashes.size(); ++i)
    hashes +=
        (i ? ", " : "") + pyString(options.hashes[i]) + ": " +
        pyString(mdsHexDigest(options.hashes[i], data.data(), data.size()));
  hashes += "}";
  return "{\"basename\": " + pyString(basename) +
         ", \"bytes\": " + std::to_string(data.size()) +
         ", \"hashes\": " + hashes + "}";
}

void MdsWriter::Impl::flush() {
  // [n][offsets: n + 1][config][rows], offsets from the file's start.
  std::string shard;
  appendU32(shard, rows.size());
  uint64_t offset = 4 + 4 * (rows.size() + 1) + config.size();
  appendU32(shard, offset);
  for (const std::string &row : rows)
    appendU32(shard, offset += row.size());
  shard += config;
  for (const std::string &row : rows)
    shard += row;

  char number[8];
  std::snprintf(number, sizeof(number), "%05zu", shardJson.size());
  std::string rawName = std::string("shard.") + number + ".mds";
  std::string zipInfo = "null", fileName = rawName;
  const std::string *fileData = &shard;
  std::string zip;
  if (zstdLevel) {
    zip.resize(ZSTD_compressBound(shard.size()));
    size_t n = ZSTD_compress(zip.data(), zip.size(), shard.data(), shard.size(),
                             zstdLevel);
    if (ZSTD_isError(n))
      throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
    zip.resize(n);
    fileName = rawName + ".zstd";
    zipInfo = fileInfo(fileName, zip);
    fileData = &zip;
  }
  std::string path = dir + "/" + fileName;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(fileData->data(), std::streamsize(fileData->size()));
    if (!out.flush())
      throw std::runtime_error(path + ": cannot write");
  }
  // JointWriter.flush_shard's object updated with get_config(), sorted.
  shardJson.push_back("{" + columnFields + ", " + formatFields +
                      ", \"raw_data\": " + fileInfo(rawName, shard) +
                      ", \"samples\": " + std::to_string(rows.size()) + ", " +
                      sizeLimitField +
                      ", \"version\": 2, \"zip_data\": " + zipInfo + "}");
  rows.clear();
  shardSize = 8 + int64_t(config.size());
}

void MdsWriter::finish() {
  Impl &w = *impl_;
  if (w.finished)
    return;
  if (!w.rows.empty())
    w.flush();
  w.finished = true;
  std::string index = "{\"shards\": [";
  for (size_t i = 0; i < w.shardJson.size(); ++i)
    index += (i ? ", " : "") + w.shardJson[i];
  index += "], \"version\": 2}";
  std::string path = w.dir + "/index.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << index;
  if (!out.flush())
    throw std::runtime_error(path + ": cannot write");
}

} // namespace composer::runtime
