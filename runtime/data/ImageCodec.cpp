//===- ImageCodec.cpp - JPEG (libjpeg-turbo) and PNG (libpng) decoding ----===//
//
// Both libraries report errors through a callback that must not return.
// They are C: a C++ exception thrown through their frames is undefined, so
// the callbacks longjmp back to `guarded`, which calls one libjpeg/libpng
// step (a lambda that holds no object with a destructor) and reports whether
// it failed; the error then becomes a DataError in ordinary C++ frames. Every
// object with a destructor lives in the callers, outside the jumped-over
// frames.
//
// Pixels are decoded as PIL decodes them (ISLOW DCT, fancy upsampling, Adobe
// CMYK inverted) and converted as PIL's convert('RGB') converts, so a full
// decode equals what torchvision's default loader sees.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/ImageCodec.h"

#include "ImageResample.h"
#include "ScratchBuffer.h"

// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <vector>

namespace composer::runtime {
namespace {

/// Larger images are refused before any pixel buffer is allocated, so a
/// corrupt header cannot ask for gigabytes: 2^28 pixels (16384 x 16384).
constexpr int64_t kMaxPixels = int64_t(1) << 28;

/// Where a failed libjpeg/libpng call jumps to, and what it said.
struct ErrorJump {
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX > 200 ? JMSG_LENGTH_MAX : 200] = {};
};

/// Runs `step` with `error.jump` as the landing point of the codec's error
/// callbacks; false when the codec failed. `step` must create no object with
/// a destructor: the longjmp skips its frame. Kept out of line so that the
/// setjmp frame is this small one.
template <typename Step>
[[gnu::noinline]] bool guarded(ErrorJump &error, Step &step) {
  if (setjmp(error.jump))
    return false;
  step();
  return true;
}

[[noreturn]] void throwDataError(const std::string &name, const char *message) {
  throw DataError(name + ": " + message);
}

void checkSize(const std::string &name, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0 || height * width > kMaxPixels)
    throw DataError(name + ": image size " + std::to_string(height) + "x" +
                    std::to_string(width) + " is empty or too large");
}

//===----------------------------------------------------------------------===//
// JPEG
//===----------------------------------------------------------------------===//

struct JpegError {
  jpeg_error_mgr mgr; // first: libjpeg hands back a pointer to it
  ErrorJump *jump;
};

extern "C" void jpegErrorExit(j_common_ptr cinfo) {
  auto *error = reinterpret_cast<JpegError *>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->jump->message);
  std::longjmp(error->jump->jump, 1);
}

/// Level -1 is a warning: corrupt data libjpeg would decode around (a
/// truncated file becomes grey rows). Such an image is an error here.
extern "C" void jpegEmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0)
    jpegErrorExit(cinfo);
}

extern "C" void jpegOutputMessage(j_common_ptr) {}

/// A decompressor reading `data`, destroyed with its owner.
class JpegReader {
public:
  JpegReader(const void *data, size_t size, std::string name)
      : name_(std::move(name)) {
    cinfo_.err = jpeg_std_error(&error_.mgr);
    error_.mgr.error_exit = jpegErrorExit;
    error_.mgr.emit_message = jpegEmitMessage;
    error_.mgr.output_message = jpegOutputMessage;
    error_.jump = &jump_;
    auto create = [&] {
      jpeg_create_decompress(&cinfo_);
      jpeg_mem_src(&cinfo_, static_cast<const unsigned char *>(data),
                   static_cast<unsigned long>(size));
      jpeg_read_header(&cinfo_, TRUE);
    };
    created_ = true;
    // The destructor does not run when a constructor throws.
    try {
      run(create);
      checkSize(name_, cinfo_.image_height, cinfo_.image_width);
    } catch (...) {
      jpeg_destroy_decompress(&cinfo_);
      throw;
    }
  }
  ~JpegReader() {
    if (created_)
      jpeg_destroy_decompress(&cinfo_);
  }
  JpegReader(const JpegReader &) = delete;
  JpegReader &operator=(const JpegReader &) = delete;

  /// Runs one libjpeg step; its error becomes a DataError naming the file.
  template <typename Step> void run(Step &step) {
    if (!guarded(jump_, step))
      throwDataError(name_, jump_.message);
  }

  jpeg_decompress_struct &cinfo() { return cinfo_; }
  /// 4 for CMYK and YCCK files (decoded as CMYK), else 3 (decoded as RGB).
  int decodedChannels() const {
    return cinfo_.jpeg_color_space == JCS_CMYK ||
                   cinfo_.jpeg_color_space == JCS_YCCK
               ? 4
               : 3;
  }

private:
  std::string name_;
  jpeg_decompress_struct cinfo_{};
  JpegError error_{};
  ErrorJump jump_;
  bool created_ = false;
};

/// Interleaved rows as libjpeg wrote them: `rows` rows of `width` pixels of
/// `channels` bytes, the first at scaled row `firstRow`, column `firstCol`.
/// The pixels are the decoding thread's scratch, valid until its next decode.
struct DecodedRows {
  const uint8_t *pixels = nullptr;
  int64_t firstRow = 0, rows = 0, firstCol = 0, width = 0;
  int channels = 3;
};

/// PIL reads every 4-component JPEG as Adobe's inverted CMYK ("CMYK;I",
/// JpegImagePlugin) and converts CMYK to RGB as Convert.c's cmyk2rgb:
/// with C, M, Y, K the inverted bytes, R = (255 - K) - (C * (255 - K)) / 255
/// rounded by MULDIV255. Converts in place, 4 bytes a pixel to 3.
void invertedCmykToRgb(uint8_t *p, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t *in = p + 4 * i;
    int nk = in[3]; // 255 - (255 - k)
    uint8_t rgb[3];
    for (int c = 0; c < 3; ++c) {
      int tmp = (255 - in[c]) * nk + 128;
      int muldiv = ((tmp >> 8) + tmp) >> 8;
      rgb[c] = uint8_t(std::clamp(nk - muldiv, 0, 255));
    }
    std::memcpy(p + 3 * i, rgb, 3);
  }
}

/// Decodes scaled rows [row0, row1) and at least scaled columns
/// [col0, col1) at scale `scale`/8 to interleaved RGB.
DecodedRows decodeJpegRegion(JpegReader &reader, const std::string &name,
                             int scale, int64_t row0, int64_t row1,
                             int64_t col0, int64_t col1) {
  jpeg_decompress_struct &cinfo = reader.cinfo();
  DecodedRows out;
  out.channels = reader.decodedChannels();
  cinfo.out_color_space = out.channels == 4 ? JCS_CMYK : JCS_RGB;
  cinfo.scale_num = static_cast<unsigned>(scale);
  cinfo.scale_denom = 8;
  // PIL's defaults, so that full-scale pixels equal PIL's.
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.do_fancy_upsampling = TRUE;
  auto start = [&] { jpeg_start_decompress(&cinfo); };
  reader.run(start);
  const int64_t fullWidth = cinfo.output_width;
  // One column more on each side than needed: fancy upsampling treats the
  // edges of a cropped row as the image's edges (libjpeg.txt, "Decompressing
  // partial scanlines"), so the columns used must not be edge columns.
  JDIMENSION xoffset = JDIMENSION(std::max<int64_t>(col0 - 1, 0));
  JDIMENSION width =
      JDIMENSION(std::min<int64_t>(col1 + 1, fullWidth) - xoffset);
  if (xoffset > 0 || int64_t(width) < fullWidth) {
    auto crop = [&] { jpeg_crop_scanline(&cinfo, &xoffset, &width); };
    reader.run(crop);
  }
  out.firstCol = xoffset;
  out.width = cinfo.output_width;
  out.firstRow = row0;
  out.rows = row1 - row0;
  const int64_t rowBytes = out.width * cinfo.output_components;
  thread_local detail::ScratchBuffer<uint8_t> storage;
  uint8_t *pixels = storage.reserve(size_t(rowBytes * out.rows));
  out.pixels = pixels;
  const int64_t rows = out.rows;
  int64_t rowsRead = 0;
  auto read = [&] {
    if (row0 > 0)
      jpeg_skip_scanlines(&cinfo, JDIMENSION(row0));
    while (rowsRead < rows) {
      JSAMPROW row = pixels + rowsRead * rowBytes;
      JDIMENSION got = jpeg_read_scanlines(&cinfo, &row, 1);
      if (got == 0)
        return; // only a suspending source returns none; never loop on it
      rowsRead += got;
    }
    // The whole image read: the end must be intact too.
    if (cinfo.output_scanline == cinfo.output_height)
      jpeg_finish_decompress(&cinfo);
  };
  reader.run(read);
  if (rowsRead < rows)
    throw DataError(name + ": the decoder stopped before the last row");
  if (out.channels == 4) {
    invertedCmykToRgb(pixels, out.rows * out.width);
    out.channels = 3;
  }
  return out;
}

/// The DCT scale n/8 for a cut: the smallest n whose scaled region has at
/// least the output's pixels both ways, among 1, 2, 4 and 8. libjpeg-turbo
/// has SIMD inverse DCTs only for those; the others (3/8, 5/8, 6/8, 7/8, and
/// the 12x12 or 14x14 ones their subsampled chroma needs) run in plain C,
/// slower than a full-scale decode.
int scaleFor(const ImageCut &cut) {
  for (int n = 1; n < 8; n *= 2)
    if (cut.height * n >= cut.outHeight * 8 &&
        cut.width * n >= cut.outWidth * 8)
      return n;
  return 8;
}

/// Planar [3, H, W] from interleaved RGB rows.
torch::Tensor toPlanar(const uint8_t *pixels, int64_t height, int64_t width) {
  torch::Tensor out = torch::empty({3, height, width}, torch::kUInt8);
  uint8_t *dst = out.data_ptr<uint8_t>();
  const int64_t plane = height * width;
  for (int64_t i = 0; i < plane; ++i) {
    dst[i] = pixels[3 * i];
    dst[plane + i] = pixels[3 * i + 1];
    dst[2 * plane + i] = pixels[3 * i + 2];
  }
  return out;
}

torch::Tensor decodeJpeg(const void *data, size_t size,
                         const std::string &name) {
  JpegReader reader(data, size, name);
  int64_t height = reader.cinfo().image_height;
  int64_t width = reader.cinfo().image_width;
  DecodedRows rows = decodeJpegRegion(reader, name, 8, 0, height, 0, width);
  return toPlanar(rows.pixels, rows.rows, rows.width);
}

torch::Tensor decodeJpegCut(const void *data, size_t size,
                            const std::string &name,
                            const ImageCutPlanner &plan) {
  JpegReader reader(data, size, name);
  jpeg_decompress_struct &cinfo = reader.cinfo();
  ImageCut cut = plan(cinfo.image_height, cinfo.image_width);
  if (cut.height <= 0 || cut.width <= 0 || cut.outHeight <= 0 ||
      cut.outWidth <= 0)
    throw std::invalid_argument(name + ": the image cut needs a positive "
                                       "size and output size");
  const int scale = scaleFor(cut);
  cinfo.scale_num = static_cast<unsigned>(scale);
  cinfo.scale_denom = 8;
  auto dimensions = [&] { jpeg_calc_output_dimensions(&cinfo); };
  reader.run(dimensions);
  const int64_t scaledHeight = cinfo.output_height;
  const int64_t scaledWidth = cinfo.output_width;

  // The region in scaled pixels: full-scale pixel x covers scaled
  // [x * n / 8, (x + 1) * n / 8), as each 8x8 block becomes n x n.
  const double factor = scale / 8.0;
  const double sy0 = cut.top * factor, sy1 = (cut.top + cut.height) * factor;
  const double sx0 = cut.left * factor, sx1 = (cut.left + cut.width) * factor;
  // The pixels the resampler may read: those the region touches.
  const int64_t vy0 = int64_t(std::floor(sy0)), vy1 = int64_t(std::ceil(sy1));
  const int64_t vx0 = int64_t(std::floor(sx0)), vx1 = int64_t(std::ceil(sx1));
  const int64_t dy0 = std::max<int64_t>(vy0, 0);
  const int64_t dy1 = std::min(vy1, scaledHeight);
  const int64_t dx0 = std::max<int64_t>(vx0, 0);
  const int64_t dx1 = std::min(vx1, scaledWidth);

  detail::PixelView view;
  view.height = vy1 - vy0;
  view.width = vx1 - vx0;
  view.channels = 3;
  view.pixelStride = 3;
  view.channelStride = 1;
  DecodedRows rows;
  thread_local detail::ScratchBuffer<uint8_t> padded;
  if (dy0 < dy1 && dx0 < dx1)
    rows = decodeJpegRegion(reader, name, scale, dy0, dy1, dx0, dx1);
  if (vy0 == dy0 && vy1 == dy1 && vx0 == dx0 && vx1 == dx1) {
    view.data = rows.pixels + (vx0 - rows.firstCol) * 3;
    view.rowStride = rows.width * 3;
  } else {
    // The region reaches outside the image: black there, as PIL's crop.
    uint8_t *black = padded.reserve(size_t(view.height * view.width * 3));
    std::memset(black, 0, size_t(view.height * view.width * 3));
    for (int64_t y = dy0; y < dy1; ++y)
      std::memcpy(
          black + ((y - vy0) * view.width + (dx0 - vx0)) * 3,
          &rows.pixels[((y - dy0) * rows.width + (dx0 - rows.firstCol)) * 3],
          size_t((dx1 - dx0) * 3));
    view.data = black;
    view.rowStride = view.width * 3;
  }

  torch::Tensor out =
      torch::empty({3, cut.outHeight, cut.outWidth}, torch::kUInt8);
  detail::resampleBilinear(view, sx0 - double(vx0), sy0 - double(vy0),
                           sx1 - double(vx0), sy1 - double(vy0), cut.outHeight,
                           cut.outWidth, out.data_ptr<uint8_t>());
  return out;
}

//===----------------------------------------------------------------------===//
// PNG
//===----------------------------------------------------------------------===//

struct PngSource {
  const uint8_t *data;
  size_t size, offset;
  ErrorJump *jump;
};

extern "C" void pngError(png_structp png, png_const_charp message) {
  auto *source = static_cast<PngSource *>(png_get_error_ptr(png));
  std::snprintf(source->jump->message, sizeof(source->jump->message), "%s",
                message);
  std::longjmp(source->jump->jump, 1);
}

/// libpng's warnings are left out: they are about ancillary chunks (an
/// incorrect sRGB profile in iCCP is common in real files) that neither PIL
/// nor this decoder uses; damaged image data is an error (png_error).
extern "C" void pngWarning(png_structp, png_const_charp) {}

extern "C" void pngRead(png_structp png, png_bytep out, png_size_t length) {
  auto *source = static_cast<PngSource *>(png_get_io_ptr(png));
  if (source->size - source->offset < length)
    png_error(png, "file is truncated");
  std::memcpy(out, source->data + source->offset, length);
  source->offset += length;
}

class PngReader {
public:
  PngReader(const void *data, size_t size, std::string name)
      : name_(std::move(name)), source_{static_cast<const uint8_t *>(data),
                                        size, 0, &jump_} {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source_, pngError,
                                  pngWarning);
    if (!png_)
      throw std::bad_alloc();
    auto header = [&] {
      info_ = png_create_info_struct(png_);
      if (!info_)
        png_error(png_, "out of memory");
      png_set_read_fn(png_, &source_, pngRead);
      png_read_info(png_, info_);
    };
    // The destructor does not run when a constructor throws.
    try {
      run(header);
      height_ = png_get_image_height(png_, info_);
      width_ = png_get_image_width(png_, info_);
      checkSize(name_, height_, width_);
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~PngReader() { destroy(); }
  PngReader(const PngReader &) = delete;
  PngReader &operator=(const PngReader &) = delete;

  template <typename Step> void run(Step &step) {
    if (!guarded(jump_, step))
      throwDataError(name_, jump_.message);
  }

  ImageInfo info() {
    ImageInfo info;
    info.height = height_;
    info.width = width_;
    png_byte type = png_get_color_type(png_, info_);
    info.channels =
        type == PNG_COLOR_TYPE_PALETTE ? 3 : int(png_get_channels(png_, info_));
    return info;
  }

  /// The whole image as PIL's convert('RGB'): palette looked up, gray
  /// replicated, alpha (and tRNS transparency) dropped, 16-bit samples cut
  /// to their high byte, interlacing undone.
  torch::Tensor decode() {
    std::vector<uint8_t> pixels(size_t(height_ * width_ * 3));
    std::vector<png_bytep> rows(static_cast<size_t>(height_));
    for (int64_t y = 0; y < height_; ++y)
      rows[y] = pixels.data() + y * width_ * 3;
    png_bytepp rowPointers = rows.data();
    const int64_t rowBytes = width_ * 3;
    auto read = [&] {
      png_byte type = png_get_color_type(png_, info_);
      png_byte depth = png_get_bit_depth(png_, info_);
      if (type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png_);
      if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png_);
      if (depth == 16)
        png_set_strip_16(png_);
      if (type & PNG_COLOR_MASK_ALPHA)
        png_set_strip_alpha(png_);
      if (!(type & PNG_COLOR_MASK_COLOR))
        png_set_gray_to_rgb(png_);
      png_set_interlace_handling(png_);
      png_read_update_info(png_, info_);
      if (png_get_rowbytes(png_, info_) != png_size_t(rowBytes))
        png_error(png_, "unexpected row size after conversion to RGB");
      png_read_image(png_, rowPointers);
      png_read_end(png_, nullptr);
    };
    run(read);
    return toPlanar(pixels.data(), height_, width_);
  }

private:
  void destroy() {
    png_destroy_read_struct(&png_, info_ ? &info_ : nullptr, nullptr);
  }

  std::string name_;
  ErrorJump jump_;
  PngSource source_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  int64_t height_ = 0, width_ = 0;
};

[[noreturn]] void throwUnknownFormat(const std::string &name) {
  throw DataError(name + ": not a JPEG or PNG file");
}

} // namespace

ImageFormat sniffImageFormat(const void *data, size_t size) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
    return ImageFormat::Jpeg;
  if (size >= 8 && std::memcmp(bytes, kPng, 8) == 0)
    return ImageFormat::Png;
  return ImageFormat::Unknown;
}

ImageInfo readImageInfo(const void *data, size_t size,
                        const std::string &name) {
  switch (sniffImageFormat(data, size)) {
  case ImageFormat::Jpeg: {
    JpegReader reader(data, size, name);
    ImageInfo info;
    info.height = reader.cinfo().image_height;
    info.width = reader.cinfo().image_width;
    info.channels = reader.cinfo().num_components;
    return info;
  }
  case ImageFormat::Png:
    return PngReader(data, size, name).info();
  case ImageFormat::Unknown:
    break;
  }
  throwUnknownFormat(name);
}

torch::Tensor decodeImage(const void *data, size_t size,
                          const std::string &name) {
  switch (sniffImageFormat(data, size)) {
  case ImageFormat::Jpeg:
    return decodeJpeg(data, size, name);
  case ImageFormat::Png:
    return PngReader(data, size, name).decode();
  case ImageFormat::Unknown:
    break;
  }
  throwUnknownFormat(name);
}

torch::Tensor decodeImageCut(const void *data, size_t size,
                             const std::string &name,
                             const ImageCutPlanner &plan) {
  switch (sniffImageFormat(data, size)) {
  case ImageFormat::Jpeg:
    return decodeJpegCut(data, size, name, plan);
  case ImageFormat::Png: {
    torch::Tensor image = PngReader(data, size, name).decode();
    return applyImageCut(image, plan(image.size(1), image.size(2)));
  }
  case ImageFormat::Unknown:
    break;
  }
  throwUnknownFormat(name);
}

int jpegScaleForCut(const ImageCut &cut) { return scaleFor(cut); }

} // namespace composer::runtime
