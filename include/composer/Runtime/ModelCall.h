//===- ModelCall.h - A batch's call of the model's forward ------*- C++ -*-===//
//
// A batch is a set of named columns: the dataset's input and target (under
// their dataset names, or "input" and "target") and its other columns
// (Batch::columns). A recipe's `model_inputs` maps them to forward's
// arguments, by position or by argument name; `output` picks the
// predictions out of a tuple or dict; `loss: model` takes the loss the model
// computes itself.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_MODELCALL_H
#define COMPOSER_RUNTIME_MODELCALL_H

#include "composer/Runtime/Data.h"

#include <ATen/core/function.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace composer::runtime {

struct ModelCall {
  /// forward's positional arguments, as column names; with no keywords
  /// either, the batch's input alone.
  std::vector<std::string> positional;
  /// forward's keyword arguments: (argument name, column name).
  std::vector<std::pair<std::string, std::string>> keywords;
  /// The predictions in forward's output: a dict's key, or a tuple's or
  /// list's index. Neither: a tensor output itself, a tuple's or list's
  /// first element, or a dict's "logits".
  std::optional<std::string> outputKey;
  std::optional<int64_t> outputIndex;
  /// `loss: model`: the loss is the model's own, its dict's "loss", its
  /// tuple's first element, or its output when that is a scalar.
  bool lossFromModel = false;
  /// The dataset's names of its input and target columns (bind).
  std::string inputName = "input", targetName = "target";

  /// Checks every column named against `spec` and takes its input and
  /// target names. Throws std::invalid_argument naming a column it lacks
  /// and listing those it has.
  void bind(const SampleSpec &spec);
  /// forward's arguments for `batch`, with `input` in place of its input
  /// column (as algorithms left it).
  std::pair<std::vector<c10::IValue>, torch::jit::Kwargs>
  arguments(const Batch &batch, const torch::Tensor &input) const;
  /// The predictions in `output`. Throws std::invalid_argument describing
  /// the output when they are not there.
  torch::Tensor predictions(const c10::IValue &output) const;
  /// The model's own loss in `output` (lossFromModel).
  torch::Tensor loss(const c10::IValue &output) const;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_MODELCALL_H
