//===- PythonLoader.h - A Python iterable as a BatchLoader ------*- C++ -*-===//
//
// The training engine reads the user's own torch DataLoader (or any iterable
// of batches) through this loader. A batch is a tensor (the input), a tuple
// or list (input, target, further columns named "2", "3", ...), or a mapping
// of named columns. Tensors cross without a copy. The GIL is taken only while
// Python runs (the feed's start and next), so the loader's worker processes
// and the engine's step overlap.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_PYTHON_PYTHONLOADER_H
#define COMPOSER_PYTHON_PYTHONLOADER_H

#include "composer/Runtime/BatchLoader.h"

#include <pybind11/pybind11.h>

#include <future>

namespace composer::python {

/// The columns of `batch` as the engine names them; the input is the column
/// called `inputName` of a mapping (its first key when empty).
runtime::Batch toBatch(const pybind11::handle &batch,
                       const std::string &inputName,
                       const std::string &targetName);

/// What every sample of the loader looks like, read off its first batch.
runtime::SampleSpec specOf(const pybind11::handle &batch,
                           const std::string &inputName,
                           const std::string &targetName);

class PythonLoader final : public runtime::BatchLoader {
public:
  /// `feed` has start(epoch, first_batch), next() (None at the epoch's end)
  /// and read_again(epoch) (composer_opt._feed.Feed). With `prefetch`, a
  /// thread fetches the next batch while the engine trains on this one:
  /// only for loaders whose fetching draws no random numbers in this
  /// process (a DataLoader with workers), so the order of draws stays
  /// fixed.
  PythonLoader(pybind11::object feed, const pybind11::handle &firstBatch,
               int64_t batchesPerEpoch, int64_t samplesPerEpoch,
               int64_t datasetSize, std::string inputName,
               std::string targetName, bool prefetch);
  ~PythonLoader() override;

  const runtime::SampleSpec &spec() const override { return spec_; }
  int64_t batchesPerEpoch() const override { return batches_; }
  int64_t samplesPerEpoch() const override { return samples_; }
  int64_t datasetSize() const override { return datasetSize_; }

  void startEpoch(int64_t epoch, int64_t firstBatch = 0) override;
  std::optional<runtime::Batch> next() override;
  bool readAgain(int64_t epoch) override;
  std::optional<runtime::Batch> readAgainNext() override;

private:
  std::optional<runtime::Batch> take(const char *method);
  /// Starts fetching the next batch on the side.
  void prefetchNext();
  /// Waits for the batch being fetched on the side, if any (without
  /// holding the GIL, which the fetch needs).
  void waitForPrefetch();

  pybind11::object feed_;
  bool prefetch_;
  std::future<std::optional<runtime::Batch>> ahead_;
  runtime::SampleSpec spec_;
  int64_t batches_, samples_, datasetSize_;
  std::string inputName_, targetName_;
};

} // namespace composer::python

#endif // COMPOSER_PYTHON_PYTHONLOADER_H
