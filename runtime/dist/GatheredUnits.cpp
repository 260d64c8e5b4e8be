//===- GatheredUnits.cpp - the units a model's gathers name ---------------===//
//
// composer-shard-params exports each unit's gather as
//   composer::gather_unit("<unit>", "<next>", prim::ListConstruct(params))
// whose parameters are prim::GetAttr chains from the method's `self`
// (through a prim::unchecked_cast where the attribute is Optional[Tensor],
// as a scripted Conv2d's bias is). The trainer shards what these calls
// gather.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Sharding.h"

#include <torch/script.h>

#include <stdexcept>

namespace composer::runtime {

namespace {

/// The module attribute `value` reads through a chain of prim::GetAttr from
/// the graph's first input (`self`), or an undefined IValue.
c10::IValue resolveAttribute(const torch::jit::Module &model,
                             torch::jit::Value *value, std::string &path) {
  // An Optional[Tensor] attribute is read, then cast to Tensor.
  while (value->node()->kind() == torch::jit::prim::unchecked_cast)
    value = value->node()->input();
  std::vector<std::string> fields;
  while (value->node()->kind() == torch::jit::prim::GetAttr) {
    fields.push_back(value->node()->s(torch::jit::attr::name));
    value = value->node()->input();
  }
  if (value != value->owningGraph()->inputs().at(0) || fields.empty())
    return {};
  c10::IValue current = model._ivalue();
  for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
    path += (path.empty() ? "" : ".") + *it;
    current = current.toObjectRef().getAttr(*it);
  }
  return current;
}

void collect(const torch::jit::Module &model, torch::jit::Block *block,
             const std::string &method, std::vector<GatheredUnit> &units) {
  static const auto gatherUnit =
      c10::Symbol::fromQualString("composer::gather_unit");
  for (torch::jit::Node *node : block->nodes()) {
    for (torch::jit::Block *nested : node->blocks())
      collect(model, nested, method, units);
    if (node->kind() != gatherUnit)
      continue;
    std::string where = "method '" + method + "': composer::gather_unit";
    c10::optional<c10::IValue> name = torch::jit::toIValue(node->input(0));
    torch::jit::Node *list = node->input(2)->node();
    if (!name || !name->isString() ||
        list->kind() != torch::jit::prim::ListConstruct)
      throw std::invalid_argument(where +
                                  " must take a constant unit name "
                                  "and a list of the module's parameters, "
                                  "as composer-shard-params writes it");
    GatheredUnit unit{name->toStringRef(), {}};
    for (torch::jit::Value *input : list->inputs()) {
      std::string path;
      c10::IValue parameter = resolveAttribute(model, input, path);
      if (!parameter.isTensor())
        throw std::invalid_argument(where + " of unit '" + unit.name +
                                    "' gathers a value that is no module "
                                    "tensor" +
                                    (path.empty() ? "" : " ('" + path + "')"));
      unit.parameters.push_back(parameter.toTensor());
    }
    auto known = std::find_if(units.begin(), units.end(), [&](auto &other) {
      return other.name == unit.name;
    });
    if (known == units.end()) {
      units.push_back(std::move(unit));
      continue;
    }
    bool same = known->parameters.size() == unit.parameters.size();
    for (size_t i = 0; same && i < unit.parameters.size(); ++i)
      same = known->parameters[i].is_same(unit.parameters[i]);
    if (!same)
      throw std::invalid_argument(where + " gathers unit '" + unit.name +
                                  "' with other parameters than another "
                                  "gather of it");
  }
}

} // namespace

std::vector<GatheredUnit> findGatheredUnits(const torch::jit::Module &model) {
  std::vector<GatheredUnit> units;
  for (const torch::jit::Method &method : model.get_methods())
    collect(model, method.graph()->block(), method.name(), units);
  return units;
}

} // namespace composer::runtime
