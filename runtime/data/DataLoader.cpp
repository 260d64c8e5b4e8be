//===- DataLoader.cpp - Batches from a dataset ----------------------------===//
//
// Every random choice is a pure function of (seed, epoch) for the order and
// (seed, epoch, dataset index) for a sample's augmentation. A batch therefore
// depends on nothing but its epoch and index: the worker count, the thread
// that builds it, and whether the run resumed mid-epoch change no bits.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Data.h"

#include "EpochOrder.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace composer::runtime {
namespace {

/// A SplitMix64 stream: tiny to seed, so each sample can own one.
struct SampleRng {
  uint64_t state;
  uint64_t next() {
    uint64_t r = splitmix64(state);
    state += 0x9E3779B97F4A7C15ULL;
    return r;
  }
};

SampleRng sampleRng(uint64_t seed, int64_t epoch, int64_t index) {
  uint64_t s = splitmix64(splitmix64(seed ^ 0xA5A5A5A5A5A5A5A5ULL) ^
                          static_cast<uint64_t>(epoch));
  return SampleRng{splitmix64(s ^ static_cast<uint64_t>(index))};
}

/// Copies rows `index[0..count)` of a contiguous CPU tensor. Plain memcpy, so
/// worker threads never enter ATen's (OpenMP) parallel kernels.
torch::Tensor gatherRows(const torch::Tensor &src, const int64_t *index,
                         int64_t count) {
  std::vector<int64_t> shape = src.sizes().vec();
  shape[0] = count;
  torch::Tensor out = torch::empty(shape, src.options());
  if (count == 0 || out.numel() == 0)
    return out;
  size_t rowBytes = size_t(out.numel() / count) * src.element_size();
  const auto *from = static_cast<const char *>(src.data_ptr());
  auto *to = static_cast<char *>(out.data_ptr());
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(to + i * rowBytes, from + index[i] * rowBytes, rowBytes);
  return out;
}

/// Stacks same-shaped samples by raw copies (no ATen kernels: workers run
/// this). Throws if a sample's shape or type differs from the first's.
torch::Tensor stackSamples(const std::vector<torch::Tensor> &samples) {
  const torch::Tensor &first = samples.front();
  std::vector<int64_t> shape{int64_t(samples.size())};
  for (int64_t d : first.sizes())
    shape.push_back(d);
  torch::Tensor out = torch::empty(shape, first.options());
  size_t bytes = size_t(first.numel()) * first.element_size();
  auto *to = static_cast<char *>(out.data_ptr());
  for (size_t i = 0; i < samples.size(); ++i) {
    torch::Tensor sample = samples[i].contiguous();
    if (sample.sizes() != first.sizes() ||
        sample.scalar_type() != first.scalar_type())
      throw std::runtime_error("DataLoader: samples differ in shape or type");
    std::memcpy(to + i * bytes, sample.data_ptr(), bytes);
  }
  return out;
}

/// A transform's result, checked against what the loader expects of it.
torch::Tensor checkedSample(torch::Tensor result, const SampleTransform &by,
                            const std::vector<int64_t> &shape,
                            torch::ScalarType dtype) {
  if (!result.defined() || result.sizes() != at::IntArrayRef(shape) ||
      result.scalar_type() != dtype)
    throw std::runtime_error(by.name() +
                             ": the transform returned a sample of the "
                             "wrong shape or type");
  return result.contiguous();
}

/// uint8 [C,H,W] images `rows[b]` of dataset samples `index[b]` -> float
/// [B,C,H,W]: per-sample augmentations of the uint8 image, scale to [0,1],
/// random crop (zero padding before normalization) and flip, normalize,
/// per-sample augmentations of the normalized sample; one pass per pixel
/// without augmentations.
/// With normalizeOnDevice the batch stays uint8 and the table is the
/// identity: the same pass crops and flips.
template <typename Out>
torch::Tensor imageBatch(const std::vector<const uint8_t *> &rows, int64_t c,
                         int64_t h, int64_t w, const int64_t *index,
                         int64_t count, const DataLoaderOptions &o,
                         int64_t epoch, bool parallel) {
  const ImageTransforms &t = o.transforms;
  constexpr bool kNormalize = std::is_same_v<Out, float>;
  if (!t.mean.empty() || !t.std.empty()) {
    if (int64_t(t.mean.size()) != c || int64_t(t.std.size()) != c)
      throw std::invalid_argument(
          "DataLoader: normalization has " + std::to_string(t.mean.size()) +
          " means and " + std::to_string(t.std.size()) +
          " stds, expected one per channel (" + std::to_string(c) + ")");
    for (double s : t.std)
      if (!(s > 0))
        throw std::invalid_argument("DataLoader: normalization std must be "
                                    "positive");
  }
  // Every output pixel is a function of one uint8 value and its channel: a
  // table per channel does the scale and normalization at once.
  std::vector<Out> lut(size_t(c) * 256);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int v = 0; v < 256; ++v) {
      float x = float(v) / 255.0f;
      if constexpr (kNormalize)
        lut[ch * 256 + v] =
            t.mean.empty() ? x : (x - float(t.mean[ch])) / float(t.std[ch]);
      else
        lut[ch * 256 + v] = Out(v);
    }
  }
  const int64_t pad = t.randomCropPadding;
  const int64_t plane = h * w, sample = c * plane;
  std::vector<const SampleTransform *> onImage, onSample;
  std::vector<int64_t> outShape{c, h, w};
  for (const auto &transform : o.sampleTransforms) {
    if (transform->stage() == SampleStage::Image) {
      onImage.push_back(transform.get());
    } else {
      onSample.push_back(transform.get());
      outShape = transform->outputShape(outShape);
    }
  }
  const int64_t outSampleSize = outShape[0] * outShape[1] * outShape[2];
  torch::Tensor out =
      torch::empty({count, outShape[0], outShape[1], outShape[2]},
                   kNormalize ? torch::kFloat : torch::kUInt8);
  Out *dst = out.data_ptr<Out>();

  auto build = [&](int64_t begin, int64_t end) {
    // Normalized-stage transforms read the sample from here.
    torch::Tensor normalized;
    if (!onSample.empty())
      normalized = torch::empty({c, h, w}, torch::kFloat);
    for (int64_t b = begin; b < end; ++b) {
      // Draw all three numbers always, so enabling one transform leaves the
      // other's choices unchanged.
      SampleRng rng = sampleRng(o.seed, epoch, index[b]);
      uint64_t r0 = rng.next(), r1 = rng.next(), r2 = rng.next();
      // Crop window offset in the padded image is in [0, 2p]; as a shift of
      // the source relative to the output it is in [-p, p].
      int64_t sy = pad > 0 ? int64_t(r0 % uint64_t(2 * pad + 1)) - pad : 0;
      int64_t sx = pad > 0 ? int64_t(r1 % uint64_t(2 * pad + 1)) - pad : 0;
      bool flip = t.horizontalFlip && (r2 >> 63);
      // Output columns whose source column lies inside the image. Unflipped
      // source x+sx; flipped (flip after crop) source w-1-x+sx.
      int64_t x0 = flip ? std::max<int64_t>(0, sx) : std::max<int64_t>(0, -sx);
      int64_t x1 = flip ? std::min(w, w + sx) : std::min(w, w - sx);
      x1 = std::max(x0, x1);
      const uint8_t *in = rows[b];
      torch::Tensor augmented; // keeps the augmented image alive
      if (!onImage.empty()) {
        augmented = torch::from_blob(const_cast<uint8_t *>(in), {c, h, w},
                                     torch::kUInt8);
        for (const SampleTransform *transform : onImage) {
          SampleRandom random(o.seed, epoch, index[b], transform->name());
          augmented = checkedSample(transform->apply(augmented, random),
                                    *transform, {c, h, w}, torch::kUInt8);
        }
        in = augmented.data_ptr<uint8_t>();
      }
      Out *outSample = dst + b * sample;
      if constexpr (kNormalize)
        if (!onSample.empty())
          outSample = normalized.data_ptr<float>();
      for (int64_t ch = 0; ch < c; ++ch) {
        const Out *table = lut.data() + ch * 256;
        const Out fill = table[0]; // padding is 0 before normalization
        for (int64_t y = 0; y < h; ++y) {
          Out *row = outSample + ch * plane + y * w;
          int64_t srcY = y + sy;
          if (srcY < 0 || srcY >= h) {
            std::fill(row, row + w, fill);
            continue;
          }
          const uint8_t *srcRow = in + ch * plane + srcY * w;
          std::fill(row, row + x0, fill);
          if constexpr (!kNormalize) {
            // The identity table: copy the bytes.
            if (flip)
              std::reverse_copy(srcRow + (w - x1 + sx), srcRow + (w - x0 + sx),
                                row + x0);
            else
              std::memcpy(row + x0, srcRow + x0 + sx, size_t(x1 - x0));
          } else if (flip) {
            const uint8_t *s = srcRow + (w - 1 + sx);
            for (int64_t x = x0; x < x1; ++x)
              row[x] = table[s[-x]];
          } else {
            const uint8_t *s = srcRow + sx;
            for (int64_t x = x0; x < x1; ++x)
              row[x] = table[s[x]];
          }
          std::fill(row + x1, row + w, fill);
        }
      }
      if constexpr (kNormalize) {
        if (onSample.empty())
          continue;
        torch::Tensor x = normalized;
        std::vector<int64_t> shape{c, h, w};
        for (const SampleTransform *transform : onSample) {
          SampleRandom random(o.seed, epoch, index[b], transform->name());
          shape = transform->outputShape(shape);
          x = checkedSample(transform->apply(x, random), *transform, shape,
                            torch::kFloat);
        }
        std::memcpy(dst + b * outSampleSize, x.data_ptr<float>(),
                    size_t(outSampleSize) * sizeof(float));
      }
    }
  };
  if (parallel) {
    // Each sample is independent, so chunking cannot change any bit.
    int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, sample));
    at::parallel_for(0, count, grain, build);
  } else {
    build(0, count);
  }
  if (t.channelsLast)
    return out.contiguous(at::MemoryFormat::ChannelsLast);
  return out;
}

/// Runs `body(b)` for b in [0, count), over the intra-op threads when
/// `parallel` (samples are independent, so no bit depends on the split).
template <typename Body>
void forEachSample(int64_t count, bool parallel, Body body) {
  if (!parallel) {
    for (int64_t b = 0; b < count; ++b)
      body(b);
    return;
  }
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      body(b);
  });
}

/// The cut the transforms make of a height x width image, drawn for `sample`.
ImageCut planCut(int64_t height, int64_t width, const ImageTransforms &t,
                 uint64_t seed, int64_t epoch, int64_t sample) {
  if (t.randomResizedCrop) {
    SampleRandom random(seed, epoch, sample, "random_resized_crop");
    CropDraws draws{
        [&](double low, double high) { return random.uniform(low, high); },
        [&](int64_t n) { return random.below(n); }};
    return randomResizedCropCut(height, width, *t.randomResizedCrop, draws);
  }
  if (t.resizeShorter > 0) {
    // torchvision's Resize(N): the shorter side becomes N, the longer keeps
    // the aspect ratio, truncated. The centre crop follows on the result.
    int64_t n = t.resizeShorter;
    if (width <= height)
      return {0, 0, height, width, int64_t(double(n) * height / width), n};
    return {0, 0, height, width, n, int64_t(double(n) * width / height)};
  }
  return {0, 0, height, width, height, width};
}

/// torchvision's center_crop offset of `crop` in `size`; negative (padding)
/// when the crop is larger.
int64_t centerOffset(int64_t size, int64_t crop) {
  if (crop > size)
    return -((crop - size) / 2);
  return int64_t(std::nearbyint(double(size - crop) / 2.0));
}

/// Reads and cuts the images of samples `ids` into one uint8 [B, C, H, W]
/// batch. Images must agree in size once cut; the first that does not is
/// an error that names it.
torch::Tensor readImages(const Dataset &ds, const int64_t *ids, int64_t count,
                         const DataLoaderOptions &o, int64_t epoch,
                         bool parallel, torch::Tensor &targets) {
  const ImageTransforms &t = o.transforms;
  std::vector<torch::Tensor> images(static_cast<size_t>(count));
  std::vector<torch::Tensor> labels(static_cast<size_t>(count));
  forEachSample(count, parallel, [&](int64_t b) {
    Sample sample;
    if (t.randomResizedCrop || t.resizeShorter > 0) {
      sample = ds.getCut(ids[b], [&](int64_t height, int64_t width) {
        return planCut(height, width, t, o.seed, epoch, ids[b]);
      });
    } else {
      sample = ds.get(ids[b]);
    }
    torch::Tensor image = sample.input;
    if (t.centerCropHeight > 0) {
      int64_t h = image.size(1), w = image.size(2);
      ImageCut crop{centerOffset(h, t.centerCropHeight),
                    centerOffset(w, t.centerCropWidth),
                    t.centerCropHeight,
                    t.centerCropWidth,
                    t.centerCropHeight,
                    t.centerCropWidth};
      image = applyImageCut(image, crop);
    }
    images[b] = image.contiguous();
    labels[b] = sample.target;
  });
  const torch::Tensor &first = images.front();
  torch::Tensor batch = torch::empty(
      {count, first.size(0), first.size(1), first.size(2)}, torch::kUInt8);
  for (int64_t b = 0; b < count; ++b) {
    const torch::Tensor &image = images[b];
    if (image.sizes() != first.sizes())
      throw std::runtime_error(
          ds.describe(ids[b]) + ": image is " + std::to_string(image.size(1)) +
          "x" + std::to_string(image.size(2)) + " but the batch's first is " +
          std::to_string(first.size(1)) + "x" + std::to_string(first.size(2)) +
          "; images of mixed sizes need random_resized_crop, resize or "
          "center_crop to batch");
    std::memcpy(batch[b].data_ptr(), image.data_ptr(), size_t(image.numel()));
  }
  targets = stackSamples(labels);
  return batch;
}

/// Batch `index` of an epoch whose (this rank's) order is `order`.
Batch buildBatch(const Dataset &ds, const DataLoaderOptions &o,
                 const EpochOrder &order, int64_t epoch, int64_t index,
                 bool parallel) {
  int64_t begin = order.starts.at(size_t(index));
  int64_t count = order.starts.at(size_t(index) + 1) - begin;
  const int64_t *ids = order.samples.data_ptr<int64_t>() + begin;
  const auto *tensors = dynamic_cast<const TensorDataset *>(&ds);
  Batch batch;
  if (ds.spec().kind != SampleKind::Image) {
    const std::vector<ColumnSpec> &columns = ds.spec().columns;
    if (tensors) {
      batch.input = gatherRows(tensors->inputs(), ids, count);
      batch.target = gatherRows(tensors->targets(), ids, count);
      for (size_t c = 0; c < columns.size(); ++c)
        batch.columns[columns[c].name] =
            gatherRows(tensors->columns()[c], ids, count);
      return batch;
    }
    std::vector<torch::Tensor> inputs(static_cast<size_t>(count)),
        targets(static_cast<size_t>(count));
    std::vector<std::vector<torch::Tensor>> others(
        columns.size(), std::vector<torch::Tensor>(static_cast<size_t>(count)));
    forEachSample(count, parallel, [&](int64_t b) {
      Sample sample = ds.get(ids[b]);
      inputs[b] = sample.input;
      targets[b] = sample.target;
      for (size_t c = 0; c < columns.size(); ++c)
        others[c][b] = sample.columns.at(c);
    });
    batch.input = stackSamples(inputs);
    batch.target = stackSamples(targets);
    for (size_t c = 0; c < columns.size(); ++c)
      batch.columns[columns[c].name] = stackSamples(others[c]);
    return batch;
  }
  std::vector<const uint8_t *> rows(static_cast<size_t>(count));
  torch::Tensor images;
  if (tensors && !o.transforms.cutsImages()) {
    images = tensors->inputs();
    const auto *base = images.data_ptr<uint8_t>();
    int64_t sampleBytes = images[0].numel();
    for (int64_t b = 0; b < count; ++b)
      rows[b] = base + ids[b] * sampleBytes;
    batch.target = gatherRows(tensors->targets(), ids, count);
    images = images[0].unsqueeze(0); // only its shape is read below
  } else {
    images = readImages(ds, ids, count, o, epoch, parallel, batch.target);
    for (int64_t b = 0; b < count; ++b)
      rows[b] = images[b].data_ptr<uint8_t>();
  }
  auto build =
      o.transforms.normalizeOnDevice ? imageBatch<uint8_t> : imageBatch<float>;
  batch.input = build(rows, images.size(1), images.size(2), images.size(3), ids,
                      count, o, epoch, parallel);
  return batch;
}

} // namespace

/// Worker threads that build batches [first, end) of one epoch ahead of the
/// loop, at most `capacity` beyond the one the loop waits for, handed back in
/// order. Owns copies of everything it reads, so it never touches the loader.
struct DataLoader::Prefetcher {
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  Prefetcher(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options,
             std::shared_ptr<const EpochOrder> order, int64_t epoch,
             int64_t first, int64_t end)
      : dataset(std::move(dataset)), options(std::move(options)),
        order(std::move(order)), epoch(epoch), nextClaim(first),
        nextReturn(first), end(end),
        capacity(2 * int64_t(this->options.numWorkers)) {
    try {
      for (int i = 0; i < this->options.numWorkers; ++i)
        threads.emplace_back([this] { work(); });
    } catch (...) {
      shutdown();
      throw;
    }
  }
  ~Prefetcher() { shutdown(); }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    workCv.notify_all();
    for (std::thread &thread : threads)
      if (thread.joinable())
        thread.join();
  }

  void work() {
    for (;;) {
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mutex);
        workCv.wait(lock, [&] {
          return stop || nextClaim >= end || nextClaim < nextReturn + capacity;
        });
        if (stop || nextClaim >= end)
          return;
        index = nextClaim++;
      }
      Result result;
      try {
        result.batch =
            buildBatch(*dataset, options, *order, epoch, index, false);
      } catch (...) {
        result.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready.emplace(index, std::move(result));
      }
      readyCv.notify_all();
    }
  }

  /// The next batch in order; rethrows a worker's error (and keeps doing so:
  /// a failed batch is never skipped).
  std::optional<Batch> next() {
    std::unique_lock<std::mutex> lock(mutex);
    if (nextReturn >= end)
      return std::nullopt;
    readyCv.wait(lock, [&] { return ready.count(nextReturn) != 0; });
    auto it = ready.find(nextReturn);
    if (it->second.error)
      std::rethrow_exception(it->second.error);
    Batch batch = std::move(it->second.batch);
    ready.erase(it);
    ++nextReturn;
    lock.unlock();
    workCv.notify_all();
    return batch;
  }

  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  std::shared_ptr<const EpochOrder> order;
  int64_t epoch;
  std::mutex mutex;
  std::condition_variable workCv;  // workers: a slot opened or stop
  std::condition_variable readyCv; // loop: a batch arrived
  int64_t nextClaim, nextReturn, end, capacity;
  std::map<int64_t, Result> ready;
  bool stop = false;
  std::vector<std::thread> threads;
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset,
                       DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_)
    throw std::invalid_argument("DataLoader: no dataset");
  if (options_.batchSize <= 0)
    throw std::invalid_argument("DataLoader: batchSize must be positive");
  if (options_.worldSize <= 0 || options_.rank < 0 ||
      options_.rank >= options_.worldSize)
    throw std::invalid_argument(
        "DataLoader: rank " + std::to_string(options_.rank) +
        " is outside world size " + std::to_string(options_.worldSize));
  if (options_.numWorkers < 0)
    throw std::invalid_argument("DataLoader: numWorkers must be >= 0");
  if (options_.transforms.randomCropPadding < 0)
    throw std::invalid_argument("DataLoader: randomCropPadding must be >= 0");
  const ImageTransforms &t = options_.transforms;
  if (t.cutsImages() && dataset_->spec().kind != SampleKind::Image)
    throw std::invalid_argument("DataLoader: random_resized_crop, resize and "
                                "center_crop need images");
  if (t.randomResizedCrop && (t.resizeShorter > 0 || t.centerCropHeight > 0))
    throw std::invalid_argument("DataLoader: random_resized_crop does not "
                                "combine with resize or center_crop");
  if (const auto &crop = t.randomResizedCrop) {
    if (crop->height <= 0 || crop->width <= 0)
      throw std::invalid_argument(
          "DataLoader: random_resized_crop size must be positive");
    if (!(crop->scaleLow > 0 && crop->scaleLow <= crop->scaleHigh &&
          crop->scaleHigh <= 1))
      throw std::invalid_argument(
          "DataLoader: random_resized_crop scale must satisfy 0 < low <= "
          "high <= 1");
    if (!(crop->ratioLow > 0 && crop->ratioLow <= crop->ratioHigh))
      throw std::invalid_argument(
          "DataLoader: random_resized_crop ratio must satisfy 0 < low <= "
          "high");
  }
  if (t.resizeShorter < 0 || t.centerCropHeight < 0 || t.centerCropWidth < 0 ||
      (t.centerCropHeight > 0) != (t.centerCropWidth > 0))
    throw std::invalid_argument("DataLoader: resize and center_crop sizes "
                                "must be positive");
  if (t.normalizeOnDevice && dataset_->spec().kind != SampleKind::Image)
    throw std::invalid_argument("DataLoader: normalizeOnDevice needs images");
  if (options_.shuffleBlockSize <= 0)
    throw std::invalid_argument("DataLoader: shuffleBlockSize must be "
                                "positive");
  // Checked (and de-duplicated) as if added one by one.
  auto transforms = std::move(options_.sampleTransforms);
  options_.sampleTransforms.clear();
  for (auto &transform : transforms)
    setSampleTransform(std::move(transform));
  // Every epoch of a rank holds as many batches; Streaming's partition too
  // depends on the epoch's size alone.
  EpochOrder first = epochOrder(*dataset_, options_, 0);
  batchesPerEpoch_ = first.batches();
  samplesPerEpoch_ = first.starts.back();
}

DataLoader::~DataLoader() = default;

void DataLoader::setSampleTransform(
    std::shared_ptr<const SampleTransform> transform) {
  if (!transform)
    throw std::invalid_argument("DataLoader: null sample transform");
  const SampleSpec &spec = dataset_->spec();
  if (spec.kind != SampleKind::Image)
    throw std::invalid_argument(
        transform->name() +
        " needs images (uint8 [C, H, W]); the samples "
        "are " +
        std::string(c10::toString(spec.inputType)) + " of " +
        std::to_string(spec.inputShape.size()) + " dimensions");
  auto &transforms = options_.sampleTransforms;
  for (auto &existing : transforms)
    if (existing->name() == transform->name()) {
      existing = std::move(transform);
      return;
    }
  // The normalized sample is made here, so the batch must be too.
  if (transform->stage() == SampleStage::Normalized)
    options_.transforms.normalizeOnDevice = false;
  transforms.push_back(std::move(transform));
}

int64_t DataLoader::samplesPerEpoch() const { return samplesPerEpoch_; }

int64_t DataLoader::batchesPerEpoch() const { return batchesPerEpoch_; }

void DataLoader::startEpoch(int64_t epoch, int64_t firstBatch) {
  int64_t batches = batchesPerEpoch();
  if (firstBatch < 0 || firstBatch > batches)
    throw std::out_of_range("DataLoader: first batch " +
                            std::to_string(firstBatch) + " outside [0, " +
                            std::to_string(batches) + "]");
  begin(std::make_shared<const EpochOrder>(
            epochOrder(*dataset_, options_, epoch)),
        epoch, firstBatch);
}

int64_t DataLoader::resumeEpoch(int64_t epoch, int64_t firstBatch,
                                int64_t sampleInEpoch) {
  // Full batches of this world size: the run stopped in this world (or one
  // that reads the same batches), so the epoch goes on from its batch.
  if (!options_.streaming ||
      sampleInEpoch == firstBatch * options_.batchSize * options_.worldSize) {
    startEpoch(epoch, firstBatch);
  } else {
    // Streaming's order is one global order at every world size: drop the
    // samples all ranks have read, whatever the world that read them.
    begin(std::make_shared<const EpochOrder>(
              epochOrder(*dataset_, options_, epoch, sampleInEpoch)),
          epoch, 0);
  }
  return order_->batches() - nextBatch_;
}

void DataLoader::begin(std::shared_ptr<const EpochOrder> order, int64_t epoch,
                       int64_t firstBatch) {
  prefetcher_.reset(); // joins the previous epoch's workers first
  order_ = std::move(order);
  epoch_ = epoch;
  nextBatch_ = firstBatch;
  predownloaded_ = 0;
  predownload(firstBatch);
  const int64_t batches = order_->batches();
  if (options_.numWorkers > 0 && firstBatch < batches)
    prefetcher_ = std::make_unique<Prefetcher>(dataset_, options_, order_,
                                               epoch, firstBatch, batches);
}

void DataLoader::predownload(int64_t batch) {
  if (options_.predownload <= 0 || batch >= order_->batches())
    return;
  const int64_t from = std::max(predownloaded_, order_->starts[batch]);
  const int64_t to = std::min(order_->starts[batch] + options_.predownload,
                              order_->starts.back());
  if (to <= from)
    return;
  dataset_->prefetch(order_->samples.data_ptr<int64_t>() + from, to - from);
  predownloaded_ = to;
}

std::optional<Batch> DataLoader::next() {
  if (!order_)
    startEpoch(0);
  predownload(nextBatch_);
  if (prefetcher_) {
    std::optional<Batch> batch = prefetcher_->next();
    if (batch)
      ++nextBatch_;
    else
      prefetcher_.reset();
    return batch;
  }
  if (nextBatch_ >= order_->batches())
    return std::nullopt;
  Batch batch =
      buildBatch(*dataset_, options_, *order_, epoch_, nextBatch_, true);
  ++nextBatch_;
  return batch;
}

Batch DataLoader::makeBatch(int64_t epoch, int64_t index) const {
  int64_t batches = batchesPerEpoch();
  if (index < 0 || index >= batches)
    throw std::out_of_range("DataLoader: batch " + std::to_string(index) +
                            " outside [0, " + std::to_string(batches) + ")");
  if (!order_ || epoch != epoch_ || order_->batches() != batches)
    return buildBatch(*dataset_, options_,
                      epochOrder(*dataset_, options_, epoch), epoch, index,
                      true);
  return buildBatch(*dataset_, options_, *order_, epoch, index, true);
}

bool DataLoader::readAgain(int64_t epoch) {
  againEpoch_ = epoch;
  againBatch_ = 0;
  return true;
}

std::optional<Batch> DataLoader::readAgainNext() {
  if (againBatch_ >= batchesPerEpoch())
    return std::nullopt;
  return makeBatch(againEpoch_, againBatch_++);
}

Batch Batch::select(const torch::Tensor &indices) const {
  Batch selected;
  selected.input = input.index_select(0, indices.to(input.device()));
  selected.target = target.index_select(0, indices.to(target.device()));
  for (const auto &[name, values] : columns)
    selected.columns[name] =
        values.index_select(0, indices.to(values.device()));
  return selected;
}

std::vector<Batch> Batch::split(int64_t size) const {
  std::vector<torch::Tensor> inputs = input.split(size);
  std::vector<torch::Tensor> targets = target.split(size);
  std::vector<Batch> parts(inputs.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i].input = inputs[i];
    parts[i].target = targets[i];
  }
  for (const auto &[name, values] : columns) {
    std::vector<torch::Tensor> pieces = values.split(size);
    for (size_t i = 0; i < parts.size(); ++i)
      parts[i].columns[name] = pieces[i];
  }
  return parts;
}

Batch DataLoader::toDevice(Batch batch, torch::Device device) const {
  batch = BatchLoader::toDevice(std::move(batch), device);
  const ImageTransforms &t = options_.transforms;
  if (!t.normalizeOnDevice || batch.input.scalar_type() != torch::kUInt8)
    return batch;
  // The loader's table computes (float(v) / 255 - mean) / std in float,
  // each step rounded; these kernels round the same steps.
  torch::Tensor x = batch.input.to(torch::kFloat).div_(255.0f);
  if (!t.mean.empty()) {
    auto perChannel = [&](const std::vector<double> &values) {
      std::vector<float> f(values.begin(), values.end());
      return torch::tensor(f, torch::kFloat)
          .to(device)
          .view({1, int64_t(f.size()), 1, 1});
    };
    x.sub_(perChannel(t.mean)).div_(perChannel(t.std));
  }
  batch.input =
      t.channelsLast ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
  return batch;
}

ImageCut randomResizedCropCut(int64_t height, int64_t width,
                              const RandomResizedCrop &crop,
                              const CropDraws &draws) {
  // torchvision draws and computes the ratio in float32 and rounds half to
  // even (Python's round); nearbyint does the latter.
  const double area = double(height) * double(width);
  const float logLow = std::log(float(crop.ratioLow));
  const float logHigh = std::log(float(crop.ratioHigh));
  for (int attempt = 0; attempt < 10; ++attempt) {
    double targetArea = area * draws.uniform(crop.scaleLow, crop.scaleHigh);
    double ratio = std::exp(float(draws.uniform(logLow, logHigh)));
    auto w = int64_t(std::nearbyint(std::sqrt(targetArea * ratio)));
    auto h = int64_t(std::nearbyint(std::sqrt(targetArea / ratio)));
    if (0 < w && w <= width && 0 < h && h <= height) {
      int64_t top = draws.below(height - h + 1);
      int64_t left = draws.below(width - w + 1);
      return {top, left, h, w, crop.height, crop.width};
    }
  }
  // The central crop of the whole image at the nearest allowed ratio.
  double inRatio = double(width) / double(height);
  int64_t w = width, h = height;
  if (inRatio < crop.ratioLow)
    h = int64_t(std::nearbyint(double(w) / crop.ratioLow));
  else if (inRatio > crop.ratioHigh)
    w = int64_t(std::nearbyint(double(h) * crop.ratioHigh));
  return {(height - h) / 2, (width - w) / 2, h, w, crop.height, crop.width};
}

} // namespace composer::runtime
