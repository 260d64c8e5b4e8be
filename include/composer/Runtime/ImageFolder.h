//===- ImageFolder.h - Images in class folders or listed in a file -*- C++
//-*-===//
//
// torchvision's ImageFolder: ROOT/<class>/<...>/<image>, classes sorted by
// name and numbered in that order, the images of a class sorted by path, so
// class indices and sample order equal torchvision's. The list form reads
// `path label` lines instead. JPEG and PNG decode (ImageCodec.h); other
// files are skipped and counted.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_IMAGEFOLDER_H
#define COMPOSER_RUNTIME_IMAGEFOLDER_H

#include "composer/Runtime/Dataset.h"

#include <memory>
#include <string>
#include <vector>

namespace composer::runtime {

/// What listing a folder left out.
struct ImageFolderStats {
  /// Class folders with no image in them. They keep their class index, as
  /// torchvision's ImageFolder(allow_empty=True) numbers them.
  int64_t emptyClasses = 0;
  /// Files whose extension is not an image's.
  int64_t notImages = 0;
  /// Images in formats this loader does not decode (bmp, tif, webp, ppm).
  int64_t unsupportedImages = 0;
};

class ImageFolderDataset final : public Dataset {
public:
  struct Entry {
    std::string path;
    int64_t label;
  };
  ImageFolderDataset(std::vector<Entry> entries,
                     std::vector<std::string> classes, ImageFolderStats stats);

  int64_t size() const override { return int64_t(entries_.size()); }
  const SampleSpec &spec() const override { return spec_; }
  Sample get(int64_t index) const override;
  Sample getCut(int64_t index, const ImageCutPlanner &plan) const override;
  std::string describe(int64_t index) const override {
    return entries_.at(size_t(index)).path;
  }

  const std::vector<Entry> &entries() const { return entries_; }
  /// Class names by index (the folder names; labels as text for a list).
  const std::vector<std::string> &classes() const { return classes_; }
  const ImageFolderStats &stats() const { return stats_; }

private:
  std::vector<Entry> entries_;
  std::vector<std::string> classes_;
  ImageFolderStats stats_;
  SampleSpec spec_;
};

/// ROOT/<class>/... as torchvision's ImageFolder lists it (symbolic links
/// followed). Throws std::runtime_error naming ROOT when it holds no class
/// folder or no image.
std::shared_ptr<const ImageFolderDataset>
openImageFolder(const std::string &root);

/// Lines `path label` (label a non-negative integer; '#' starts a comment),
/// paths relative to `root`, or to the index file's folder when `root` is
/// empty. A bad line is an error naming FILE:LINE.
std::shared_ptr<const ImageFolderDataset>
openImageList(const std::string &indexFile, const std::string &root = "");

/// Reads a whole file; throws DataError naming it when it cannot.
std::string readFileBytes(const std::string &path);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_IMAGEFOLDER_H
