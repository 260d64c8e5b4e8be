//===- composer-data.cpp - Make and inspect datasets ----------------------===//
//
//   composer-data mds-from-folder ROOT OUT [--shard-size 64mb]
//                 [--compression zstd|zstd:N|none] [--hashes sha1,xxh64]
//   composer-data inspect DIR
//   composer-data inspect DIR --remote URL  (DIR: the cache)
//   composer-data order LOCAL [options]   (Order.h)
//   composer-data merge-index ROOT        (MergeIndex.h)
//
// mds-from-folder writes a torchvision-style image folder (ROOT/CLASS/FILE)
// as MosaicML Streaming MDS shards with columns image (the files' bytes,
// jpeg or png) and label (int, the class's index in sorted class order).
// Output appears whole or not at all: shards are written into a temporary
// directory beside OUT, renamed to OUT when done.
//
// Exit status 0 on success, 1 on bad input ("composer-data: PATH: reason"),
// 2 on a bad command line.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/ImageCodec.h"
#include "composer/Runtime/ImageFolder.h"
#include "composer/Runtime/Mds.h"

#include "Measure.h"
#include "MergeIndex.h"
#include "Order.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

using namespace composer::runtime;
namespace fs = std::filesystem;

namespace {

/// An error in the input: printed as "composer-data: MESSAGE", exit 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A bad command line: printed with the usage, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char *usage =
    "usage: composer-data mds-from-folder ROOT OUT [--shard-size SIZE]\n"
    "                     [--compression zstd|zstd:N|none] "
    "[--hashes NAME,...]\n"
    "       composer-data inspect DIR [--remote URL]\n"
    "       composer-data merge-index ROOT\n"
    "       composer-data throughput ROOT [--size N] [--batch-size B] "
    "[--workers W] [--batches K]\n"
    "                     [--epochs E] [--remote URL]\n"
    "       composer-data decode FILE --out RAW\n"
    "       composer-data order LOCAL [--remote URL] [--shuffle-algo A] "
    "[--seed S] "
    "[--epoch E]\n"
    "                     [--num-canonical-nodes C] [--shuffle-block-size B]\n"
    "                     [--world-size W] [--nodes N] [--rank R] "
    "[--workers K]\n"
    "                     [--batch-size N] [--sample-in-epoch S]\n"
    "                     [--partition-algo orig|relaxed] [--no-shuffle]\n";

//===----------------------------------------------------------------------===//
// Image folders
//===----------------------------------------------------------------------===//

/// ROOT as torchvision's ImageFolder lists it (openImageFolder). Images in
/// formats an MDS image column cannot hold are an error, not left out.
std::shared_ptr<const ImageFolderDataset>
listImageFolder(const fs::path &root) {
  std::shared_ptr<const ImageFolderDataset> dataset;
  try {
    dataset = openImageFolder(root.string());
  } catch (const std::exception &e) {
    throw InputError(e.what());
  }
  if (int64_t n = dataset->stats().unsupportedImages)
    throw InputError(root.string() + ": " + std::to_string(n) + " image" +
                     (n == 1 ? " is" : "s are") +
                     " bmp, tif, webp or ppm; MDS image columns hold jpeg "
                     "or png: convert them");
  return dataset;
}

const char *formatName(ImageFormat f) {
  return f == ImageFormat::Jpeg ? "jpeg" : f == ImageFormat::Png ? "png" : "?";
}

//===----------------------------------------------------------------------===//
// mds-from-folder
//===----------------------------------------------------------------------===//

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma - at);
    if (!item.empty())
      out.push_back(item);
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return out;
}

/// Removes a directory this run made unless it was renamed into place.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    if (!path.empty() && !keep) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

int mdsFromFolder(const std::vector<std::string> &args) {
  std::vector<std::string> positional;
  std::string shardSize = "64mb", compression = "none", hashes;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool isOption = arg.rfind("--", 0) == 0;
    if (isOption) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw UsageError(arg + " needs a value");
      }
      if (arg == "--shard-size")
        shardSize = value;
      else if (arg == "--compression")
        compression = value;
      else if (arg == "--hashes")
        hashes = value;
      else
        throw UsageError("unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2)
    throw UsageError("mds-from-folder takes ROOT and OUT");
  fs::path root = positional[0], out = positional[1];

  MdsWriterOptions options;
  options.columns = {{"image", ""}, {"label", "int"}};
  try {
    options.sizeLimit = parseMdsSize(shardSize);
  } catch (const std::invalid_argument &e) {
    throw UsageError(std::string("--shard-size: ") + e.what());
  }
  options.compression = compression == "none" ? "" : compression;
  options.hashes = splitList(hashes);
  std::sort(options.hashes.begin(), options.hashes.end());
  options.hashes.erase(
      std::unique(options.hashes.begin(), options.hashes.end()),
      options.hashes.end());
  for (const std::string &h : options.hashes)
    if (!isMdsHash(h))
      throw UsageError("--hashes: unsupported hash '" + h +
                       "' (md5, sha1, sha224, sha256, sha384, sha512, "
                       "sha3_224, sha3_256, sha3_384, sha3_512, blake2b, "
                       "blake2s, xxh32, xxh64, xxh3_64, xxh128)");

  try {
    MdsWriterOptions check = options;
    check.columns[0].second = "jpeg";
    MdsWriter(out.string(), check); // checks the options, writes nothing
  } catch (const std::invalid_argument &e) {
    throw UsageError(e.what());
  }

  std::error_code ec;
  if (fs::exists(out, ec) &&
      (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    throw InputError(out.string() +
                     ": already exists and is not an empty directory");

  // One encoding per column: every image must be JPEG, or every one PNG.
  auto folder = listImageFolder(root);
  ImageFormat format = ImageFormat::Unknown;
  fs::path first;
  for (const ImageFolderDataset::Entry &image : folder->entries()) {
    char magic[16] = {};
    std::ifstream in(image.path, std::ios::binary);
    in.read(magic, sizeof(magic));
    ImageFormat f = sniffImageFormat(magic, size_t(in.gcount()));
    if (f == ImageFormat::Unknown)
      throw InputError(image.path +
                       ": not a JPEG or PNG file (MDS image columns hold "
                       "jpeg or png; convert it)");
    if (format == ImageFormat::Unknown) {
      format = f;
      first = image.path;
    } else if (f != format) {
      throw InputError(image.path + ": is " + formatName(f) + " but " +
                       first.string() + " is " + formatName(format) +
                       "; an MDS column has one encoding: convert the "
                       "images to one format");
    }
  }
  options.columns[0].second = formatName(format);

  // Write beside OUT (same file system, so the rename is atomic).
  fs::path parent = fs::absolute(out, ec).parent_path();
  // Missing parent folders are made, as MDSWriter's makedirs does.
  fs::create_directories(parent, ec);
  std::string pattern =
      (parent / ("." + out.filename().string() + ".tmp-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw InputError(pattern + ": cannot create: " + std::strerror(errno));
  TempDir tmp{pattern};
  {
    MdsWriter writer(tmp.path.string(), options);
    for (const ImageFolderDataset::Entry &image : folder->entries()) {
      std::string bytes = readFileBytes(image.path);
      // A file that does not parse would fail every epoch: stop here.
      try {
        readImageInfo(bytes.data(), bytes.size(), image.path);
      } catch (const std::exception &e) {
        throw InputError(e.what());
      }
      std::string label(8, '\0');
      for (int k = 0; k < 8; ++k)
        label[k] = char((uint64_t(image.label) >> (8 * k)) & 0xff);
      writer.write({std::move(bytes), std::move(label)});
    }
    writer.finish();
  }
  if (fs::exists(out, ec))
    fs::remove(out, ec); // empty, checked above
  fs::rename(tmp.path, out, ec);
  if (ec)
    throw InputError(out.string() + ": cannot create: " + ec.message());
  tmp.keep = true;

  MdsOptions quick; // just written: the hashes were computed from memory
  quick.verifyHashes = false;
  MdsReader written(out.string(), quick);
  std::cout << "wrote " << written.size() << " images of "
            << folder->classes().size() << " classes (" << formatName(format)
            << ") in " << written.shards().size() << " shard"
            << (written.shards().size() == 1 ? "" : "s") << " to "
            << out.string() << "\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// inspect
//===----------------------------------------------------------------------===//

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += char(c); // UTF-8 passes through
    }
  }
  return out + "\"";
}

std::string number(const torch::Tensor &t) {
  if (torch::isFloatingType(t.scalar_type())) {
    double v = t.item<double>();
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, end);
  }
  return std::to_string(t.item<int64_t>());
}

std::string imageSummary(std::string_view bytes, const std::string &where) {
  ImageFormat f = sniffImageFormat(bytes.data(), bytes.size());
  if (f == ImageFormat::Unknown)
    return "<" + std::to_string(bytes.size()) + " bytes, not JPEG or PNG>";
  ImageInfo info = readImageInfo(bytes.data(), bytes.size(), where);
  return std::string(formatName(f)) + " " + std::to_string(info.width) + "x" +
         std::to_string(info.height) + ", " + std::to_string(info.channels) +
         " channel" + (info.channels == 1 ? "" : "s") + ", " +
         std::to_string(bytes.size()) + " bytes";
}

std::string cellSummary(const MdsColumn &column, std::string_view bytes,
                        const std::string &where) {
  switch (column.type) {
  case MdsType::Scalar:
  case MdsType::StrNumber:
    return number(MdsReader::decodeTensor(column, bytes, where));
  case MdsType::NDArray: {
    torch::Tensor t = MdsReader::decodeTensor(column, bytes, where);
    std::string shape;
    for (int64_t d : t.sizes())
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    // The dtype as numpy names it (uint16 reads widened to int32).
    std::string dtype = column.numpyType;
    if (dtype.empty() && !bytes.empty()) {
      static const std::pair<int, const char *> codes[] = {
          {8, "uint8"},    {9, "int8"},    {16, "uint16"}, {17, "int16"},
          {18, "float16"}, {32, "uint32"}, {33, "int32"},  {34, "float32"},
          {64, "uint64"},  {65, "int64"},  {66, "float64"}};
      for (const auto &[code, name] : codes)
        if (code == (unsigned char)bytes[0])
          dtype = name;
    }
    std::string out = "ndarray " + dtype + " [" + shape + "]";
    if (t.numel() <= 8) {
      std::string values;
      torch::Tensor flat = t.flatten();
      for (int64_t i = 0; i < flat.numel(); ++i)
        values += (i ? ", " : "") + number(flat[i]);
      out += " {" + values + "}";
    }
    return out;
  }
  case MdsType::EncodedImage:
    return imageSummary(bytes, where);
  case MdsType::PilImage: {
    torch::Tensor image = MdsReader::decodeImage(column, bytes, where);
    return "pil " + std::to_string(image.size(2)) + "x" +
           std::to_string(image.size(1));
  }
  case MdsType::Bytes:
    if (column.encoding == "bytes")
      return std::to_string(bytes.size()) + " bytes";
    return quoted(bytes);
  case MdsType::Opaque:
    return "<" + column.encoding + ", " + std::to_string(bytes.size()) +
           " bytes, not decoded>";
  }
  return "?";
}

int inspectMds(const std::string &dir, const std::string &remote) {
  MdsOptions options;
  if (!remote.empty())
    options.remote = std::make_shared<ShardCache>(remote, dir, RemoteOptions{});
  MdsReader reader(dir, options);
  const auto &shards = reader.shards();
  std::cout << "MDS dataset: " << (remote.empty() ? dir : remote)
            << (remote.empty() ? "" : " (cached in " + dir + ")") << "\n";
  std::cout << "samples: " << reader.size() << "\n";
  std::cout << "compression: "
            << (reader.compression().empty() ? "none" : reader.compression())
            << "\n";
  std::string hashes;
  for (const std::string &h : reader.hashes())
    hashes += (hashes.empty() ? "" : ", ") + h;
  std::cout << "hashes: " << (hashes.empty() ? "none" : hashes) << "\n";
  std::cout << "shards: " << shards.size() << "\n";
  for (const MdsShard &s : shards)
    std::cout << "  " << fs::path(s.path).filename().string() << ": "
              << s.samples << " samples, " << s.rawBytes << " bytes"
              << (s.compressed ? " decompressed" : "") << "\n";
  std::cout << "columns:\n";
  for (const MdsColumn &c : reader.columns())
    std::cout << "  " << c.name << ": " << c.encoding << "\n";
  std::cout << "sample 0 (" << reader.describe(0) << "):\n";
  MdsRow row = reader.row(0);
  for (size_t c = 0; c < reader.columns().size(); ++c) {
    const MdsColumn &column = reader.columns()[c];
    std::cout << "  " << column.name << ": "
              << cellSummary(column, row.cell(c), reader.describe(0)) << "\n";
  }
  return 0;
}

int inspectFolder(const std::string &dir) {
  auto folder = listImageFolder(dir);
  std::cout << "image folder: " << dir << "\n";
  std::cout << "samples: " << folder->entries().size() << "\n";
  std::cout << "classes: " << folder->classes().size() << "\n";
  std::vector<int64_t> counts(folder->classes().size());
  for (const ImageFolderDataset::Entry &image : folder->entries())
    ++counts[image.label];
  for (size_t c = 0; c < folder->classes().size(); ++c)
    std::cout << "  " << c << ": " << quoted(folder->classes()[c]) << ", "
              << counts[c] << " images\n";
  if (folder->stats().notImages)
    std::cout << "skipped: " << folder->stats().notImages << " file"
              << (folder->stats().notImages == 1 ? "" : "s")
              << " not an image\n";
  const ImageFolderDataset::Entry &image = folder->entries().front();
  std::string bytes = readFileBytes(image.path);
  std::cout << "sample 0 (" << image.path << "):\n";
  std::cout << "  image: " << imageSummary(bytes, image.path) << "\n";
  std::cout << "  label: " << image.label << "\n";
  return 0;
}

int inspect(const std::vector<std::string> &args) {
  std::string dir, remote;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--remote" && i + 1 < args.size())
      remote = args[++i];
    else if (dir.empty() && args[i].rfind("--", 0) != 0)
      dir = args[i];
    else
      throw UsageError("inspect takes DIR [--remote URL]");
  }
  if (dir.empty())
    throw UsageError("inspect takes DIR [--remote URL]");
  if (!remote.empty())
    return inspectMds(dir, remote);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir + ": not a directory");
  if (fs::exists(fs::path(dir) / "index.json", ec))
    return inspectMds(dir, "");
  return inspectFolder(dir);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << usage;
      return args.empty() ? 2 : 0;
    }
    std::string command = args[0];
    args.erase(args.begin());
    if (command == "mds-from-folder")
      return mdsFromFolder(args);
    if (command == "inspect")
      return inspect(args);
    if (command == "throughput")
      return composer::data::throughput(args);
    if (command == "decode")
      return composer::data::decode(args);
    if (command == "order")
      return composer::data::printOrder(args);
    if (command == "merge-index")
      return composer::data::mergeIndex(args);
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError &e) {
    std::cerr << "composer-data: " << e.what() << "\n" << usage;
    return 2;
  } catch (const std::invalid_argument &e) {
    std::cerr << "composer-data: " << e.what() << "\n" << usage;
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "composer-data: " << e.what() << "\n";
    return 1;
  }
}
