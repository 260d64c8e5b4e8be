//===- ModelCall.cpp - A batch's call of the model's forward --------------===//

#include "composer/Runtime/ModelCall.h"
#include "composer/Runtime/Losses.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

std::string describe(const c10::IValue &output) {
  if (output.isTensor())
    return "a tensor";
  if (output.isGenericDict()) {
    std::string keys;
    for (const auto &entry : output.toGenericDict())
      keys += (keys.empty() ? "" : ", ") + (entry.key().isString()
                                                ? entry.key().toStringRef()
                                                : entry.key().tagKind());
    return "a dict with keys " + keys;
  }
  if (output.isTuple())
    return "a tuple of " +
           std::to_string(output.toTupleRef().elements().size());
  if (output.isList())
    return "a list of " + std::to_string(output.toListRef().size());
  return output.tagKind();
}

/// Element `index` of a tuple or list output, if it has one.
std::optional<c10::IValue> element(const c10::IValue &output, int64_t index) {
  if (output.isTuple()) {
    const auto &elements = output.toTupleRef().elements();
    if (index >= 0 && size_t(index) < elements.size())
      return elements[index];
  } else if (output.isList()) {
    auto list = output.toListRef();
    if (index >= 0 && size_t(index) < list.size())
      return list[index];
  }
  return std::nullopt;
}

std::optional<c10::IValue> entry(const c10::IValue &output,
                                 const std::string &key) {
  if (!output.isGenericDict())
    return std::nullopt;
  c10::Dict<c10::IValue, c10::IValue> dict = output.toGenericDict();
  auto found = dict.find(c10::IValue(key));
  if (found == dict.end())
    return std::nullopt;
  return found->value();
}

torch::Tensor tensorOf(const std::optional<c10::IValue> &value,
                       const c10::IValue &output, const std::string &what) {
  if (value && value->isTensor())
    return value->toTensor();
  throw std::invalid_argument("the model's forward returned " +
                              describe(output) + "; " + what);
}

} // namespace

void ModelCall::bind(const SampleSpec &spec) {
  inputName = spec.inputName;
  targetName = spec.targetName;
  std::vector<std::string> names = {"input", "target"};
  if (spec.inputName != "input")
    names.push_back(spec.inputName);
  if (spec.targetName != "target")
    names.push_back(spec.targetName);
  for (const ColumnSpec &column : spec.columns)
    names.push_back(column.name);
  auto check = [&](const std::string &column) {
    for (const std::string &name : names)
      if (name == column)
        return;
    throw std::invalid_argument("model_inputs: the training data has no "
                                "column '" +
                                column + "'; its columns: " + joinNames(names));
  };
  for (const std::string &column : positional)
    check(column);
  for (const auto &[argument, column] : keywords)
    check(column);
}

std::pair<std::vector<c10::IValue>, torch::jit::Kwargs>
ModelCall::arguments(const Batch &batch, const torch::Tensor &input) const {
  auto column = [&](const std::string &name) -> torch::Tensor {
    if (name == "input" || name == inputName)
      return input;
    if (name == "target" || name == targetName)
      return batch.target;
    auto found = batch.columns.find(name);
    if (found == batch.columns.end())
      throw std::invalid_argument("model_inputs: the batch has no column '" +
                                  name + "'");
    return found->second;
  };
  std::pair<std::vector<c10::IValue>, torch::jit::Kwargs> arguments;
  if (positional.empty() && keywords.empty())
    arguments.first.push_back(input);
  for (const std::string &name : positional)
    arguments.first.push_back(column(name));
  for (const auto &[argument, name] : keywords)
    arguments.second[argument] = column(name);
  return arguments;
}

torch::Tensor ModelCall::predictions(const c10::IValue &output) const {
  if (outputKey)
    return tensorOf(entry(output, *outputKey), output,
                    "output: '" + *outputKey + "' is not a tensor in it");
  if (outputIndex)
    return tensorOf(element(output, *outputIndex), output,
                    "output: " + std::to_string(*outputIndex) +
                        " is not a tensor in it");
  if (output.isTensor())
    return output.toTensor();
  if (output.isGenericDict())
    return tensorOf(entry(output, "logits"), output,
                    "set 'output' to the key of the predictions");
  std::optional<c10::IValue> first = element(output, 0);
  if (first && (first->isTuple() || first->isList()))
    return predictions(*first);
  return tensorOf(first, output,
                  "expected a tensor, or a tuple or list starting with one, "
                  "or a dict with 'logits'");
}

torch::Tensor ModelCall::loss(const c10::IValue &output) const {
  if (output.isTensor() && output.toTensor().numel() == 1)
    return output.toTensor().reshape({});
  std::optional<c10::IValue> value =
      output.isGenericDict() ? entry(output, "loss") : element(output, 0);
  torch::Tensor loss = tensorOf(value, output,
                                "loss: model takes the loss from a dict's "
                                "'loss', a tuple's first element, or a scalar "
                                "output");
  if (loss.numel() != 1)
    throw std::invalid_argument("loss: model: the model's loss has shape " +
                                describeShape(loss) + "; expected a scalar");
  return loss.reshape({});
}

} // namespace composer::runtime
