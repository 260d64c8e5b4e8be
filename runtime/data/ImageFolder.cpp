//===- ImageFolder.cpp - Images in class folders or listed in a file ------===//

#include "composer/Runtime/ImageFolder.h"
#include "composer/Runtime/ImageCodec.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace composer::runtime {
namespace {

std::string lowerExtension(const std::string &name) {
  std::string ext = fs::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

/// torchvision's IMG_EXTENSIONS.
bool hasImageExtension(const std::string &name) {
  std::string ext = lowerExtension(name);
  for (const char *known : {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm",
                            ".tif", ".tiff", ".webp"})
    if (ext == known)
      return true;
  return false;
}

bool isDecodable(const std::string &name) {
  std::string ext = lowerExtension(name);
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

/// Files under `dir` in torchvision's order: os.walk(followlinks=True) with
/// sorted folder and file names, files of a folder before its subfolders'.
void walkSorted(const fs::path &dir, std::vector<std::string> &files) {
  std::vector<fs::path> subdirs, here;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir)) {
    std::error_code ec;
    if (entry.is_directory(ec))
      subdirs.push_back(entry.path());
    else if (entry.is_regular_file(ec))
      here.push_back(entry.path());
  }
  std::sort(here.begin(), here.end());
  std::sort(subdirs.begin(), subdirs.end());
  for (const fs::path &file : here)
    files.push_back(file.string());
  for (const fs::path &sub : subdirs)
    walkSorted(sub, files);
}

} // namespace

std::string readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw DataError(path + ": cannot open file");
  std::streamoff size = in.tellg();
  if (size < 0)
    throw DataError(path + ": cannot determine the file size");
  std::string bytes(size_t(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), std::streamsize(size)))
    throw DataError(path + ": read error");
  return bytes;
}

ImageFolderDataset::ImageFolderDataset(std::vector<Entry> entries,
                                       std::vector<std::string> classes,
                                       ImageFolderStats stats)
    : entries_(std::move(entries)), classes_(std::move(classes)),
      stats_(stats) {
  spec_.kind = SampleKind::Image;
  spec_.inputShape = {3, 0, 0};
  spec_.inputType = torch::kUInt8;
  spec_.targetType = torch::kLong;
  spec_.numClasses = int64_t(classes_.size());
}

Sample ImageFolderDataset::get(int64_t index) const {
  const Entry &entry = entries_.at(size_t(index));
  std::string bytes = readFileBytes(entry.path);
  return {decodeImage(bytes.data(), bytes.size(), entry.path),
          torch::tensor(entry.label, torch::kLong)};
}

Sample ImageFolderDataset::getCut(int64_t index,
                                  const ImageCutPlanner &plan) const {
  const Entry &entry = entries_.at(size_t(index));
  std::string bytes = readFileBytes(entry.path);
  return {decodeImageCut(bytes.data(), bytes.size(), entry.path, plan),
          torch::tensor(entry.label, torch::kLong)};
}

std::shared_ptr<const ImageFolderDataset>
openImageFolder(const std::string &root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw std::runtime_error(root + ": not a directory");
  std::vector<std::string> classNames;
  for (const fs::directory_entry &entry : fs::directory_iterator(root, ec))
    if (entry.is_directory(ec))
      classNames.push_back(entry.path().filename().string());
  if (ec)
    throw std::runtime_error(root + ": cannot list: " + ec.message());
  std::sort(classNames.begin(), classNames.end());
  if (classNames.empty())
    throw std::runtime_error(root + ": no class folders (expected "
                                    "ROOT/<class>/<image>)");
  std::vector<ImageFolderDataset::Entry> entries;
  std::vector<std::string> classes;
  ImageFolderStats stats;
  for (const std::string &name : classNames) {
    std::vector<std::string> files;
    try {
      walkSorted(fs::path(root) / name, files);
    } catch (const fs::filesystem_error &e) {
      throw std::runtime_error(root + "/" + name + ": " + e.what());
    }
    // Indices are positions among all class folders, empty ones included,
    // as torchvision's find_classes numbers them.
    int64_t label = int64_t(classes.size());
    classes.push_back(name);
    size_t before = entries.size();
    for (std::string &file : files) {
      if (!hasImageExtension(file))
        ++stats.notImages;
      else if (!isDecodable(file))
        ++stats.unsupportedImages;
      else
        entries.push_back({std::move(file), label});
    }
    if (entries.size() == before)
      ++stats.emptyClasses;
  }
  if (entries.empty())
    throw std::runtime_error(root + ": no JPEG or PNG images in its " +
                             std::to_string(classNames.size()) +
                             " class folders");
  return std::make_shared<ImageFolderDataset>(std::move(entries),
                                              std::move(classes), stats);
}

std::shared_ptr<const ImageFolderDataset>
openImageList(const std::string &indexFile, const std::string &root) {
  std::ifstream in(indexFile);
  if (!in)
    throw std::runtime_error(indexFile + ": cannot open file");
  fs::path base =
      root.empty() ? fs::path(indexFile).parent_path() : fs::path(root);
  std::vector<ImageFolderDataset::Entry> entries;
  int64_t maxLabel = -1;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    std::string where = indexFile + ":" + std::to_string(number) + ": ";
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    size_t end = line.find_last_not_of(" \t\r");
    if (end == std::string::npos)
      continue;
    line.resize(end + 1);
    size_t split = line.find_last_of(" \t");
    if (split == std::string::npos)
      throw std::runtime_error(where + "expected 'path label'");
    std::string path = line.substr(0, split);
    path.erase(path.find_last_not_of(" \t") + 1);
    path.erase(0, path.find_first_not_of(" \t"));
    std::string labelText = line.substr(split + 1);
    char *rest = nullptr;
    errno = 0;
    long long label = std::strtoll(labelText.c_str(), &rest, 10);
    if (path.empty() || labelText.empty() || *rest != '\0' || errno != 0 ||
        label < 0 || label > (1 << 24))
      throw std::runtime_error(where + "bad label '" + labelText +
                               "': expected 'path label' with a label in "
                               "[0, 2^24]");
    if (!isDecodable(path))
      throw std::runtime_error(where + "'" + path +
                               "' is not a .jpg, .jpeg or .png file");
    fs::path full = fs::path(path).is_absolute() ? fs::path(path) : base / path;
    entries.push_back({full.string(), int64_t(label)});
    maxLabel = std::max<int64_t>(maxLabel, label);
  }
  if (entries.empty())
    throw std::runtime_error(indexFile + ": no images listed");
  std::vector<std::string> classes;
  for (int64_t c = 0; c <= maxLabel; ++c)
    classes.push_back(std::to_string(c));
  return std::make_shared<ImageFolderDataset>(
      std::move(entries), std::move(classes), ImageFolderStats{});
}

} // namespace composer::runtime
