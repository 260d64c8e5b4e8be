//===- MdsTest.cpp - MosaicML Streaming MDS shards ------------------------===//
//
// The shards here are spelled out from the format (Streaming's
// format/mds/writer.py), not made by the code under test, so that reader and
// writer cannot agree on a mistake.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Mds.h"
#include "TestFiles.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

using namespace composer::runtime;
using namespace composer::runtime::testutils;
namespace fs = std::filesystem;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string u32(uint32_t v) {
  std::string out(4, '\0');
  std::memcpy(out.data(), &v, 4);
  return out;
}
template <typename T> std::string raw(T v) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

// A tiny JPEG: 5 wide, 3 high, one colour, made by PIL.
std::string tinyJpeg() {
  static std::string jpeg = [] {
    std::string dir = makeTempDir("composer-mds");
    std::string path = dir + "tiny.jpg";
    std::string command = std::string(COMPOSER_PYTHON) +
                          " -c \"from PIL import Image; "
                          "Image.new('RGB', (5, 3), (200, 40, 10))"
                          ".save('" +
                          path + "', quality=95)\"";
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("PIL failed: " + command);
    return readFile(path);
  }();
  return jpeg;
}

// Columns, sorted by name as MDSWriter sorts them.
//   arr   ndarray:float32:2,2  16 bytes
//   blob  bytes                variable
//   dyn   ndarray              variable: [dtype][ndim<<2|dim
//   type][dims][values] img   jpeg                 variable label int 8 bytes
//   (int64) name  str                  variable score float32              4
//   bytes
const char *columnsJson =
    "\"column_encodings\": [\"ndarray:float32:2,2\", \"bytes\", \"ndarray\", "
    "\"jpeg\", \"int\", \"str\", \"float32\"], "
    "\"column_names\": [\"arr\", \"blob\", \"dyn\", \"img\", \"label\", "
    "\"name\", \"score\"], "
    "\"column_sizes\": [16, null, null, null, 8, null, 4]";

std::string row(int64_t i) {
  std::string arr;
  for (int k = 0; k < 4; ++k)
    arr += raw<float>(float(i) + 0.25f * k);
  std::string blob = std::string("\x00\x01", 2) + char('a' + i);
  // int64 (dtype code 65), 1 dim stored as uint8 (code 0): [i + 1] values.
  std::string dyn = std::string(1, char(65)) + char(1 << 2 | 0) + char(i + 1);
  for (int64_t k = 0; k <= i; ++k)
    dyn += raw<int64_t>(100 * i + k);
  std::string img = tinyJpeg();
  std::string name = "sample-" + std::to_string(i) + "-\xc3\xa9";
  // [sizes of the variable cells: blob, dyn, img, name][cells in order].
  return u32(blob.size()) + u32(dyn.size()) + u32(img.size()) +
         u32(name.size()) + arr + blob + dyn + img + raw<int64_t>(-7 + i) +
         name + raw<float>(0.5f * float(i));
}

// [n u32][offsets (n + 1) x u32 from the file's start][config][rows].
std::string shard(int64_t first, int64_t count) {
  std::string config = std::string("{") + columnsJson +
                       ", \"compression\": null, \"format\": \"mds\", "
                       "\"hashes\": [], \"size_limit\": 67108864, "
                       "\"version\": 2}";
  std::string rows, offsets;
  uint32_t at = 4 + 4 * (count + 1) + config.size();
  offsets += u32(at);
  for (int64_t i = first; i < first + count; ++i) {
    std::string r = row(i);
    rows += r;
    offsets += u32(at += r.size());
  }
  return u32(count) + offsets + config + rows;
}

std::string zstdWhole(const std::string &data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// As a streaming compressor writes: no content size in the frame header,
// input given in pieces.
std::string zstdStreamed(const std::string &data) {
  ZSTD_CCtx *ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, 0);
  std::string out;
  std::vector<char> buffer(ZSTD_CStreamOutSize());
  size_t half = data.size() / 2;
  for (int part = 0; part < 2; ++part) {
    ZSTD_inBuffer in{data.data() + (part ? half : 0),
                     part ? data.size() - half : half, 0};
    ZSTD_EndDirective mode = part ? ZSTD_e_end : ZSTD_e_continue;
    size_t left = 1;
    while (left) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      left = ZSTD_compressStream2(ctx, &o, &in, mode);
      EXPECT_FALSE(ZSTD_isError(left));
      out.append(buffer.data(), o.pos);
      if (!part && in.pos == in.size)
        break;
    }
  }
  ZSTD_freeCCtx(ctx);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()),
            ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

struct ShardSpec {
  std::string raw;
  std::string zip;         // empty: not compressed
  std::string compression; // null when empty
  std::string rawHashes = "{}", zipHashes = "{}", hashes = "[]";
  int64_t samples = 0;
};

std::string fileInfo(const std::string &name, size_t bytes,
                     const std::string &hashes) {
  return "{\"basename\": \"" + name +
         "\", \"bytes\": " + std::to_string(bytes) + ", \"hashes\": " + hashes +
         "}";
}

std::string indexJson(const std::vector<ShardSpec> &shards) {
  std::string out = "{\"shards\": [";
  for (size_t s = 0; s < shards.size(); ++s) {
    const ShardSpec &sh = shards[s];
    char base[32];
    std::snprintf(base, sizeof(base), "shard.%05zu.mds", s);
    std::string comp =
        sh.compression.empty() ? "null" : "\"" + sh.compression + "\"";
    out += std::string(s ? ", " : "") + "{" + columnsJson +
           ", \"compression\": " + comp +
           ", \"format\": \"mds\", \"hashes\": " + sh.hashes +
           ", \"raw_data\": " + fileInfo(base, sh.raw.size(), sh.rawHashes) +
           ", \"samples\": " + std::to_string(sh.samples) +
           ", \"size_limit\": 67108864, \"version\": 2, \"zip_data\": " +
           (sh.zip.empty() ? std::string("null")
                           : fileInfo(std::string(base) + ".zstd",
                                      sh.zip.size(), sh.zipHashes)) +
           "}";
  }
  return out + "], \"version\": 2}";
}

/// Writes shards of 2 and 1 samples; `compress` picks how each is stored.
std::string writeDataset(int compress, bool keepRaw = false) {
  std::string dir = makeTempDir("composer-mds");
  std::vector<ShardSpec> shards(2);
  shards[0].raw = shard(0, 2);
  shards[0].samples = 2;
  shards[1].raw = shard(2, 1);
  shards[1].samples = 1;
  for (size_t s = 0; s < shards.size(); ++s) {
    char base[32];
    std::snprintf(base, sizeof(base), "shard.%05zu.mds", s);
    if (compress) {
      // 1: one frame with its size; 2: one without; 3: two frames.
      const std::string &r = shards[s].raw;
      shards[s].compression = compress == 1 ? "zstd" : "zstd:7";
      shards[s].zip = compress == 1   ? zstdWhole(r)
                      : compress == 2 ? zstdStreamed(r)
                                      : zstdWhole(r.substr(0, 50)) +
                                            zstdWhole(r.substr(50));
      writeFile(dir + base + ".zstd", shards[s].zip);
    }
    if (!compress || keepRaw)
      writeFile(dir + base, shards[s].raw);
  }
  writeFile(dir + "index.json", indexJson(shards));
  return dir;
}

void expectRows(const MdsReader &reader) {
  ASSERT_EQ(reader.size(), 3);
  ASSERT_EQ(reader.columns().size(), 7u);
  EXPECT_EQ(reader.columns()[0].type, MdsType::NDArray);
  EXPECT_EQ(reader.columns()[0].fixedSize, 16);
  EXPECT_EQ(reader.columns()[3].type, MdsType::EncodedImage);
  EXPECT_EQ(reader.columnIndex("label"), 4);
  EXPECT_EQ(reader.columnIndex("nope"), -1);
  for (int64_t i = 0; i < 3; ++i) {
    MdsRow r = reader.row(i);
    const auto &cols = reader.columns();
    EXPECT_EQ(r.cell(1), std::string("\x00\x01", 2) + char('a' + i));
    EXPECT_EQ(r.cell(5), "sample-" + std::to_string(i) + "-\xc3\xa9");
    EXPECT_EQ(reader.cell(i, 3), tinyJpeg());
    torch::Tensor arr = MdsReader::decodeTensor(cols[0], r.cell(0), "t");
    EXPECT_EQ(arr.sizes(), torch::IntArrayRef({2, 2}));
    EXPECT_EQ(arr.scalar_type(), torch::kFloat);
    EXPECT_EQ(arr[1][1].item<float>(), float(i) + 0.75f);
    torch::Tensor dyn = MdsReader::decodeTensor(cols[2], r.cell(2), "t");
    EXPECT_EQ(dyn.sizes(), torch::IntArrayRef({i + 1}));
    EXPECT_EQ(dyn.scalar_type(), torch::kLong);
    EXPECT_EQ(dyn[i].item<int64_t>(), 100 * i + i);
    torch::Tensor label = MdsReader::decodeTensor(cols[4], r.cell(4), "t");
    EXPECT_EQ(label.dim(), 0);
    EXPECT_EQ(label.item<int64_t>(), -7 + i);
    EXPECT_EQ(MdsReader::decodeTensor(cols[6], r.cell(6), "t").item<float>(),
              0.5f * float(i));
  }
  EXPECT_EQ(reader.shardOf(0), 0);
  EXPECT_EQ(reader.shardOf(1), 0);
  EXPECT_EQ(reader.shardOf(2), 1);
  EXPECT_NE(reader.describe(2).find("shard.00001.mds"), std::string::npos);
  EXPECT_NE(reader.describe(2).find("row 0"), std::string::npos);
}

template <typename F>
void expectOpenError(F open, const std::string &needle1,
                     const std::string &needle2) {
  try {
    open();
    ADD_FAILURE() << "no error; expected " << needle1 << " ... " << needle2;
  } catch (const DataError &e) {
    ADD_FAILURE() << "DataError at open: " << e.what();
  } catch (const std::runtime_error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find(needle1), std::string::npos) << what;
    EXPECT_NE(what.find(needle2), std::string::npos) << what;
  }
}

} // namespace

TEST(MdsTest, ReadsRawShards) {
  std::string dir = writeDataset(0);
  MdsReader reader(dir);
  EXPECT_EQ(reader.compression(), "");
  EXPECT_FALSE(reader.shards()[0].compressed);
  expectRows(reader);
  fs::remove_all(dir);
}

TEST(MdsTest, ReadsZstdShards) {
  std::string dir = writeDataset(1);
  MdsReader reader(dir);
  EXPECT_EQ(reader.compression(), "zstd");
  EXPECT_TRUE(reader.shards()[0].compressed);
  expectRows(reader);
  fs::remove_all(dir);
}

TEST(MdsTest, ReadsZstdFramesWithoutContentSize) {
  std::string dir = writeDataset(2);
  MdsReader reader(dir);
  EXPECT_EQ(reader.compression(), "zstd:7");
  expectRows(reader);
  fs::remove_all(dir);
}

TEST(MdsTest, ReadsConcatenatedZstdFrames) {
  std::string dir = writeDataset(3);
  expectRows(MdsReader(dir));
  fs::remove_all(dir);
}

TEST(MdsTest, DecodesPilImages) {
  // [width u32][height u32][mode size u32][mode][pixels, row-major].
  MdsColumn pil = *parseMdsEncoding("pil", "pil");
  std::string gray = u32(2) + u32(1) + u32(1) + "L" + "\x10\x20";
  torch::Tensor g = MdsReader::decodeImage(pil, gray, "t");
  EXPECT_EQ(g.sizes(), torch::IntArrayRef({3, 1, 2}));
  EXPECT_EQ(g[2][0][1].item<int>(), 0x20);
  std::string rgba = u32(1) + u32(1) + u32(4) + "RGBA" + "\x01\x02\x03\x04";
  torch::Tensor c = MdsReader::decodeImage(pil, rgba, "t");
  EXPECT_EQ(c.sizes(), torch::IntArrayRef({3, 1, 1}));
  EXPECT_EQ(c[2][0][0].item<int>(), 3);
  EXPECT_THROW(MdsReader::decodeImage(pil, rgba.substr(0, 19), "t"), DataError);
  std::string palette = u32(1) + u32(1) + u32(1) + "P" + "\x01";
  EXPECT_THROW(MdsReader::decodeImage(pil, palette, "t"), DataError);
}

TEST(MdsTest, PrefersTheRawShardWhenPresent) {
  // As Streaming: a decompressed copy beside the compressed one is read.
  std::string dir = writeDataset(1, /*keepRaw=*/true);
  MdsReader reader(dir);
  EXPECT_FALSE(reader.shards()[0].compressed);
  EXPECT_NE(reader.shards()[0].path.find("shard.00000.mds"), std::string::npos);
  expectRows(reader);
  fs::remove_all(dir);
}

TEST(MdsTest, Dataset) {
  std::string dir = writeDataset(1);
  auto images = openMds(dir, "img", "label");
  EXPECT_EQ(images->size(), 3);
  EXPECT_EQ(images->spec().kind, SampleKind::Image);
  EXPECT_EQ(images->spec().targetType, torch::kLong);
  Sample s = images->get(2);
  EXPECT_EQ(s.input.sizes(), torch::IntArrayRef({3, 3, 5}));
  EXPECT_EQ(s.input.scalar_type(), torch::kByte);
  EXPECT_NEAR(s.input[0][1][2].item<int>(), 200, 8);
  EXPECT_NEAR(s.input[2][1][2].item<int>(), 10, 8);
  EXPECT_EQ(s.target.item<int64_t>(), -5);
  EXPECT_EQ(s.target.scalar_type(), torch::kLong);
  Sample cut = images->getCut(0, [](int64_t h, int64_t w) {
    EXPECT_EQ(h, 3);
    EXPECT_EQ(w, 5);
    return ImageCut{0, 0, 2, 2, 2, 2};
  });
  EXPECT_EQ(cut.input.sizes(), torch::IntArrayRef({3, 2, 2}));
  EXPECT_EQ(images->shardStarts(), (std::vector<int64_t>{0, 2}));
  EXPECT_NE(images->describe(1).find("shard.00000.mds.zstd row 1"),
            std::string::npos);

  auto tensors = openMds(dir, "arr", "score");
  EXPECT_EQ(tensors->spec().kind, SampleKind::Tensor);
  EXPECT_EQ(tensors->spec().inputShape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(tensors->spec().inputType, torch::kFloat);
  EXPECT_EQ(tensors->spec().targetType, torch::kFloat);
  EXPECT_EQ(tensors->get(1).target.item<float>(), 0.5f);

  // Further columns are batched by name beside the input and target.
  auto named = openMds(dir, "arr", "label", {}, {"score", "dyn"});
  ASSERT_EQ(named->spec().columns.size(), 2u);
  EXPECT_EQ(named->spec().inputName, "arr");
  EXPECT_EQ(named->spec().targetName, "label");
  EXPECT_EQ(named->spec().columns[0].name, "score");
  EXPECT_EQ(named->spec().columns[0].type, torch::kFloat);
  EXPECT_EQ(named->spec().columns[1].shape, (std::vector<int64_t>{1}));
  Sample withColumns = named->get(1);
  ASSERT_EQ(withColumns.columns.size(), 2u);
  EXPECT_EQ(withColumns.columns[0].item<float>(), 0.5f);
  expectOpenError([&] { openMds(dir, "img", "label", {}, {"score"}); },
                  "column 'score'", "beside an input that is not an image");

  // A shape the encoding leaves open comes from sample 0.
  auto dynamic = openMds(dir, "dyn", "label");
  EXPECT_EQ(dynamic->spec().inputShape, (std::vector<int64_t>{1}));
  EXPECT_EQ(dynamic->spec().inputType, torch::kLong);

  expectOpenError([&] { openMds(dir, "name", "label"); }, "column 'name'",
                  "cannot be the input");
  expectOpenError([&] { openMds(dir, "img", "blob"); }, "column 'blob'",
                  "cannot be the target");
  expectOpenError([&] { openMds(dir, "img", "score"); }, "column 'score'",
                  "class indices");
  expectOpenError([&] { openMds(dir, "pixels", "label"); }, "no column",
                  "'pixels'");
  fs::remove_all(dir);
}

TEST(MdsTest, DecompressionCacheIsBoundedAndThreadSafe) {
  // Eight one-sample shards, one kept decompressed, read from four threads.
  std::string dir = makeTempDir("composer-mds");
  std::vector<ShardSpec> shards(8);
  for (size_t s = 0; s < shards.size(); ++s) {
    shards[s].raw = shard(int64_t(s), 1);
    shards[s].samples = 1;
    shards[s].compression = "zstd";
    shards[s].zip = zstdWhole(shards[s].raw);
    char base[32];
    std::snprintf(base, sizeof(base), "shard.%05zu.mds.zstd", s);
    writeFile(dir + base, shards[s].zip);
  }
  writeFile(dir + "index.json", indexJson(shards));
  MdsOptions options;
  options.cachedShards = 1;
  MdsReader reader(dir, options);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int k = 0; k < 200; ++k) {
        int64_t i = rng() % 8;
        if (reader.cell(i, 1) != std::string("\x00\x01", 2) + char('a' + i))
          ++bad;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(bad.load(), 0);
  fs::remove_all(dir);
}

TEST(MdsTest, Hashes) {
  // Python's hashlib / xxhash hexdigest() of "abc" and of "".
  EXPECT_EQ(mdsHexDigest("md5", "abc", 3), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(mdsHexDigest("sha1", "abc", 3),
            "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(mdsHexDigest("sha256", "abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(mdsHexDigest("sha3_256", "abc", 3),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
  EXPECT_EQ(mdsHexDigest("blake2s", "abc", 3),
            "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982");
  EXPECT_EQ(mdsHexDigest("xxh32", "", 0), "02cc5d05");
  EXPECT_EQ(mdsHexDigest("xxh64", "", 0), "ef46db3751d8e999");
  EXPECT_EQ(mdsHexDigest("xxh3_64", "", 0), "2d06800538d394c2");
  EXPECT_EQ(mdsHexDigest("xxh128", "", 0), "99aa06d3014798d86001c324468d497f");
  EXPECT_THROW(mdsHexDigest("crc32", "", 0), std::invalid_argument);

  // Hashes that match open; one that differs names the file.
  for (bool compressed : {false, true}) {
    std::string dir = makeTempDir("composer-mds");
    ShardSpec sh;
    sh.raw = shard(0, 2);
    sh.samples = 2;
    sh.hashes = "[\"sha1\", \"xxh64\"]";
    auto digests = [](const std::string &d) {
      return "{\"sha1\": \"" + mdsHexDigest("sha1", d.data(), d.size()) +
             "\", \"xxh64\": \"" + mdsHexDigest("xxh64", d.data(), d.size()) +
             "\"}";
    };
    sh.rawHashes = digests(sh.raw);
    std::string file = dir + "shard.00000.mds";
    if (compressed) {
      sh.compression = "zstd";
      sh.zip = zstdWhole(sh.raw);
      sh.zipHashes = digests(sh.zip);
      file += ".zstd";
    }
    writeFile(file, compressed ? sh.zip : sh.raw);
    writeFile(dir + "index.json", indexJson({sh}));
    EXPECT_EQ(MdsReader(dir).cell(1, 5), "sample-1-\xc3\xa9");

    std::string &h = compressed ? sh.zipHashes : sh.rawHashes;
    h.replace(h.find("xxh64\": \"") + 9, 4, "0000");
    writeFile(dir + "index.json", indexJson({sh}));
    expectOpenError([&] { MdsReader reader(dir); }, file, "xxh64 hash");
    MdsOptions trusting;
    trusting.verifyHashes = false;
    EXPECT_NO_THROW(MdsReader(dir, trusting));

    sh.hashes = "[\"crc32\"]";
    writeFile(dir + "index.json", indexJson({sh}));
    expectOpenError([&] { MdsReader reader(dir); }, file,
                    "unsupported hash 'crc32'");
    fs::remove_all(dir);
  }
}

TEST(MdsTest, OpenErrors) {
  std::string dir = makeTempDir("composer-mds");
  ShardSpec sh;
  sh.raw = shard(0, 2);
  sh.samples = 2;
  std::string file = dir + "shard.00000.mds";
  writeFile(dir + "index.json", indexJson({sh}));
  expectOpenError([&] { MdsReader reader(dir); }, file, "missing shard file");

  writeFile(file, sh.raw + "x");
  expectOpenError([&] { MdsReader reader(dir); }, file,
                  std::to_string(sh.raw.size() + 1) +
                      " bytes, the index says " +
                      std::to_string(sh.raw.size()));

  // The header's sample count must be the index's.
  writeFile(file, sh.raw);
  ShardSpec three = sh;
  three.samples = 3;
  writeFile(dir + "index.json", indexJson({three}));
  expectOpenError([&] { MdsReader reader(dir); }, file,
                  "header has 2 samples, the index 3");

  ShardSpec gz = sh;
  gz.compression = "gz";
  gz.zip = "whatever";
  writeFile(dir + "index.json", indexJson({gz}));
  fs::remove(file);
  expectOpenError([&] { MdsReader reader(dir); }, file,
                  "compression 'gz' is not read");

  writeFile(file, sh.raw);
  std::string index = indexJson({sh});
  index.replace(index.find("\"bytes\", "), 9, "\"bf16\", ");
  writeFile(dir + "index.json", index);
  expectOpenError([&] { MdsReader reader(dir); }, "index.json",
                  "column 'blob' has unsupported encoding 'bf16'");

  // A pickle column opens (its bytes can be read) but is never decoded.
  index = indexJson({sh});
  index.replace(index.find("\"bytes\", "), 9, "\"pkl\", ");
  writeFile(dir + "index.json", index);
  EXPECT_EQ(MdsReader(dir).columns()[1].type, MdsType::Opaque);
  expectOpenError([&] { openMds(dir, "blob", "label"); }, "column 'blob'",
                  "pickle is never loaded");

  index = indexJson({sh});
  index.replace(index.find("8, null, 4]"), 11, "4, null, 4]");
  writeFile(dir + "index.json", index);
  expectOpenError([&] { MdsReader reader(dir); }, "column 'label' (int)",
                  "expected 8");

  writeFile(dir + "index.json", "{\"version\": 1, \"shards\": []}");
  expectOpenError([&] { MdsReader reader(dir); }, "index.json",
                  "unsupported index version 1");
  fs::remove_all(dir);
}

TEST(MdsTest, CorruptRowsAreDataErrors) {
  std::string dir = makeTempDir("composer-mds");
  ShardSpec sh;
  sh.raw = shard(0, 2);
  sh.samples = 2;
  std::string file = dir + "shard.00000.mds";
  // Row 0 ends (and row 1 starts) past the shard's end.
  std::string bad = sh.raw;
  bad.replace(8, 4, u32(uint32_t(bad.size()) + 100));
  writeFile(file, bad);
  writeFile(dir + "index.json", indexJson({sh}));
  MdsReader reader(dir);
  try {
    reader.row(0);
    ADD_FAILURE() << "row 0 read";
  } catch (const DataError &e) {
    EXPECT_NE(std::string(e.what()).find(file + " row 0: offsets"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(reader.row(1), DataError);

  // Row 1's blob size says more than the row holds.
  bad = sh.raw;
  uint32_t row1;
  std::memcpy(&row1, bad.data() + 8, 4);
  bad.replace(row1, 4, u32(1000000));
  writeFile(file, bad);
  MdsReader reader2(dir);
  EXPECT_NO_THROW(reader2.row(0));
  try {
    reader2.row(1);
    ADD_FAILURE() << "row 1 read";
  } catch (const DataError &e) {
    EXPECT_NE(std::string(e.what()).find(file + " row 1: column 'blob'"),
              std::string::npos)
        << e.what();
  }

  // A JPEG that is not one: a DataError from the codec, naming the row.
  bad = sh.raw;
  size_t jpeg = bad.find(tinyJpeg());
  bad[jpeg + 2] = 'x';
  bad[jpeg + 3] = 'x';
  writeFile(file, bad);
  auto images = openMds(dir, "img", "label");
  EXPECT_THROW(images->get(0), DataError);

  // A compressed shard that decompresses short.
  fs::remove(file);
  sh.compression = "zstd";
  sh.zip = zstdWhole(sh.raw.substr(0, sh.raw.size() - 1));
  writeFile(file + ".zstd", sh.zip);
  writeFile(dir + "index.json", indexJson({sh}));
  MdsReader short_(dir);
  try {
    short_.row(0);
    ADD_FAILURE() << "row 0 read";
  } catch (const DataError &e) {
    EXPECT_NE(std::string(e.what()).find("decompresses to"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(MdsTest, WriterLaysOutFilesAsStreaming) {
  std::string dir = makeTempDir("composer-mds");
  MdsWriterOptions options;
  options.columns = {{"label", "int"}, {"image", "jpeg"}};
  options.hashes = {"sha1", "xxh64"};
  options.compression = "zstd";
  // The header is 4 + 4 + the config's bytes; each row 4 + 4 + 8 + 4 bytes
  // of offset: two rows per shard.
  std::string config =
      "{\"column_encodings\": [\"jpeg\", \"int\"], \"column_names\": "
      "[\"image\", \"label\"], \"column_sizes\": [null, 8], \"compression\": "
      "\"zstd\", \"format\": \"mds\", \"hashes\": [\"sha1\", \"xxh64\"], "
      "\"size_limit\": SIZE, \"version\": 2}";
  int64_t base = 8 + int64_t(config.size()) - 4 + 2 * 20;
  options.sizeLimit = base + int64_t(std::to_string(base + 3).size());
  config.replace(config.find("SIZE"), 4, std::to_string(options.sizeLimit));
  {
    MdsWriter writer(dir, options);
    for (int64_t i = 0; i < 5; ++i)
      writer.write({raw<int64_t>(i), std::string("abcd")});
    writer.finish();
  }
  EXPECT_FALSE(fs::exists(dir + "shard.00000.mds"));
  EXPECT_TRUE(fs::exists(dir + "shard.00002.mds.zstd"));
  MdsReader reader(dir);
  EXPECT_EQ(reader.size(), 5);
  EXPECT_EQ(reader.shards().size(), 3u);
  EXPECT_EQ(reader.shards()[2].samples, 1);
  EXPECT_EQ(reader.cell(3, 0), "abcd");
  EXPECT_EQ(reader.cell(3, 1), raw<int64_t>(3));

  // The raw shard, byte for byte, and the index's first entry.
  std::string zip = readFile(dir + "shard.00000.mds.zstd");
  std::string rawShard(ZSTD_getFrameContentSize(zip.data(), zip.size()), '\0');
  ZSTD_decompress(rawShard.data(), rawShard.size(), zip.data(), zip.size());
  std::string row0 = u32(4) + "abcd" + raw<int64_t>(0);
  std::string row1 = u32(4) + "abcd" + raw<int64_t>(1);
  uint32_t start = 4 + 12 + config.size();
  EXPECT_EQ(rawShard, u32(2) + u32(start) + u32(start + 16) + u32(start + 32) +
                          config + row0 + row1);
  std::string index = readFile(dir + "index.json");
  std::string expected =
      "{\"shards\": [{" + config.substr(1, config.find(", \"format\"") - 1) +
      ", \"format\": \"mds\", \"hashes\": [\"sha1\", \"xxh64\"], "
      "\"raw_data\": {\"basename\": \"shard.00000.mds\", \"bytes\": " +
      std::to_string(rawShard.size()) + ", \"hashes\": {\"sha1\": \"" +
      mdsHexDigest("sha1", rawShard.data(), rawShard.size()) +
      "\", \"xxh64\": \"" +
      mdsHexDigest("xxh64", rawShard.data(), rawShard.size()) +
      "\"}}, \"samples\": 2, \"size_limit\": " +
      std::to_string(options.sizeLimit) +
      ", \"version\": 2, \"zip_data\": {\"basename\": "
      "\"shard.00000.mds.zstd\", \"bytes\": " +
      std::to_string(zip.size()) + ", \"hashes\": {\"sha1\": \"" +
      mdsHexDigest("sha1", zip.data(), zip.size()) + "\", \"xxh64\": \"" +
      mdsHexDigest("xxh64", zip.data(), zip.size()) + "\"}}}, {";
  EXPECT_EQ(index.substr(0, expected.size()), expected);
  EXPECT_EQ(index.substr(index.size() - 17), "}], \"version\": 2}");

  EXPECT_THROW(MdsWriter(dir, {{{"x", "int"}}, "gz", {}, 0}),
               std::invalid_argument);
  EXPECT_THROW(MdsWriter(dir, {{{"x", "int"}}, "", {"xxh64", "sha1"}, 0}),
               std::invalid_argument);
  MdsWriter w(dir, {{{"x", "int"}}, "", {}, 0});
  EXPECT_THROW(w.write({"abc"}), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(MdsTest, ParsesSizesAsStreaming) {
  EXPECT_EQ(parseMdsSize("64MB"), int64_t(64) << 20);
  EXPECT_EQ(parseMdsSize("100kb"), 102400);
  EXPECT_EQ(parseMdsSize("1.5kb"), 1536);
  EXPECT_EQ(parseMdsSize("4096b"), 4096);
  EXPECT_EQ(parseMdsSize("4096"), 4096);
  EXPECT_THROW(parseMdsSize("lots"), std::invalid_argument);
  EXPECT_THROW(parseMdsSize("12 parsecs"), std::invalid_argument);
}
