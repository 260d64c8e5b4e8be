//===- PythonLoader.cpp - A Python iterable as a BatchLoader --------------===//

#include "PythonLoader.h"

#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <stdexcept>

namespace py = pybind11;
using composer::runtime::Batch;
using composer::runtime::SampleKind;
using composer::runtime::SampleSpec;

namespace composer::python {

namespace {

torch::Tensor asTensor(const py::handle &value, const std::string &column) {
  if (!THPVariable_Check(value.ptr()))
    throw py::type_error(
        "batch column '" + column + "' is a " +
        std::string(py::str(value.get_type().attr("__name__"))) +
        ", not a tensor; a batch holds tensors (a tensor, a "
        "tuple or list, or a dict of them)");
  return THPVariable_Unpack(value.ptr());
}

/// The batch's columns in order, by name.
std::vector<std::pair<std::string, torch::Tensor>>
columnsOf(const py::handle &batch) {
  std::vector<std::pair<std::string, torch::Tensor>> columns;
  if (THPVariable_Check(batch.ptr())) {
    columns.emplace_back("input", THPVariable_Unpack(batch.ptr()));
  } else if (py::isinstance<py::dict>(batch) || py::hasattr(batch, "keys")) {
    for (const py::handle &key : batch.attr("keys")()) {
      std::string name = py::str(key);
      columns.emplace_back(name, asTensor(batch[key], name));
    }
  } else if (py::isinstance<py::tuple>(batch) ||
             py::isinstance<py::list>(batch)) {
    py::sequence items = py::reinterpret_borrow<py::sequence>(batch);
    for (size_t i = 0; i < items.size(); ++i) {
      std::string name = i == 0   ? "input"
                         : i == 1 ? "target"
                                  : std::to_string(i);
      columns.emplace_back(name, asTensor(items[i], name));
    }
  } else {
    throw py::type_error(
        "a batch is a tensor, a tuple or list of tensors (input, target, "
        "...), or a dict of named tensors; the loader gave a " +
        std::string(py::str(batch.get_type().attr("__name__"))));
  }
  if (columns.empty())
    throw py::value_error("the loader gave an empty batch");
  return columns;
}

std::string
inputColumn(const std::vector<std::pair<std::string, torch::Tensor>> &columns,
            const std::string &inputName) {
  if (inputName.empty())
    return columns.front().first;
  for (const auto &[name, tensor] : columns)
    if (name == inputName)
      return name;
  std::string names;
  for (const auto &[name, tensor] : columns)
    names += (names.empty() ? "" : ", ") + name;
  throw py::value_error("the batch has no column '" + inputName + "' (it has " +
                        names + ")");
}

std::vector<int64_t> sampleShape(const torch::Tensor &tensor) {
  if (tensor.dim() == 0)
    return {};
  return std::vector<int64_t>(tensor.sizes().begin() + 1, tensor.sizes().end());
}

} // namespace

Batch toBatch(const py::handle &batch, const std::string &inputName,
              const std::string &targetName) {
  auto columns = columnsOf(batch);
  std::string input = inputColumn(columns, inputName);
  Batch result;
  for (auto &[name, tensor] : columns) {
    if (name == input)
      result.input = std::move(tensor);
    else if (name == targetName)
      result.target = std::move(tensor);
    else
      result.columns.emplace(name, std::move(tensor));
  }
  return result;
}

SampleSpec specOf(const py::handle &batch, const std::string &inputName,
                  const std::string &targetName) {
  auto columns = columnsOf(batch);
  std::string input = inputColumn(columns, inputName);
  SampleSpec spec;
  for (const auto &[name, tensor] : columns) {
    if (tensor.dim() == 0)
      throw py::value_error("batch column '" + name +
                            "' is a scalar; every column holds one row per "
                            "sample");
    if (name == input) {
      spec.inputName = name;
      spec.inputShape = sampleShape(tensor);
      spec.inputType = tensor.scalar_type();
    } else if (name == targetName) {
      spec.targetName = name;
      spec.targetShape = sampleShape(tensor);
      spec.targetType = tensor.scalar_type();
    } else {
      spec.columns.push_back({name, sampleShape(tensor), tensor.scalar_type()});
    }
  }
  bool integral = !c10::isFloatingType(spec.inputType);
  if (spec.inputType == torch::kUInt8 && spec.inputShape.size() == 3)
    spec.kind = SampleKind::Image;
  else if (integral && spec.inputShape.size() == 1)
    spec.kind = SampleKind::Tokens;
  return spec;
}

PythonLoader::PythonLoader(py::object feed, const py::handle &firstBatch,
                           int64_t batchesPerEpoch, int64_t samplesPerEpoch,
                           int64_t datasetSize, std::string inputName,
                           std::string targetName, bool prefetch)
    : feed_(std::move(feed)), prefetch_(prefetch), batches_(batchesPerEpoch),
      samples_(samplesPerEpoch), datasetSize_(datasetSize),
      inputName_(std::move(inputName)), targetName_(std::move(targetName)) {
  spec_ = specOf(firstBatch, inputName_, targetName_);
  inputName_ = spec_.inputName;
}

PythonLoader::~PythonLoader() {
  waitForPrefetch();
  py::gil_scoped_acquire gil;
  feed_ = py::object();
}

void PythonLoader::waitForPrefetch() {
  if (!ahead_.valid())
    return;
  if (PyGILState_Check()) {
    py::gil_scoped_release released;
    ahead_.wait();
  } else {
    ahead_.wait();
  }
}

void PythonLoader::prefetchNext() {
  ahead_ = std::async(std::launch::async, [this] { return take("next"); });
}

void PythonLoader::startEpoch(int64_t epoch, int64_t firstBatch) {
  if (ahead_.valid()) {
    waitForPrefetch();
    ahead_ = {};
  }
  {
    py::gil_scoped_acquire gil;
    feed_.attr("start")(epoch, firstBatch);
  }
  if (prefetch_)
    prefetchNext();
}

std::optional<Batch> PythonLoader::take(const char *method) {
  py::gil_scoped_acquire gil;
  py::object batch = feed_.attr(method)();
  if (batch.is_none())
    return std::nullopt;
  return toBatch(batch, inputName_, targetName_);
}

std::optional<Batch> PythonLoader::next() {
  if (!ahead_.valid())
    return take("next");
  waitForPrefetch();
  // get() rethrows what the fetch threw (a Python error, a bad batch).
  std::optional<Batch> batch = ahead_.get();
  if (batch)
    prefetchNext();
  return batch;
}

bool PythonLoader::readAgain(int64_t epoch) {
  py::gil_scoped_acquire gil;
  return feed_.attr("read_again")(epoch).cast<bool>();
}

std::optional<Batch> PythonLoader::readAgainNext() {
  return take("read_again_next");
}

} // namespace composer::python
