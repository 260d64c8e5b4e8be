//===- StateInitializer.cpp - the registry of state initializers ---------===//

#include "StateInitializer.h"

#include "Conversion.h"

#include "composer/Support/StatePaths.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace composer;
namespace jit = torch::jit;

namespace {

/// The registered initializers by kind. Filled while the library loads,
/// read-only afterwards.
llvm::StringMap<std::unique_ptr<StateInitializer>> &getRegistry() {
  static llvm::StringMap<std::unique_ptr<StateInitializer>> registry;
  return registry;
}

} // namespace

std::optional<at::Tensor>
InitializerContext::lookupTensor(llvm::StringRef key) const {
  auto [modulePath, name] = splitAttrPath(key);
  jit::Module owner = model;
  SmallVector<StringRef> parts;
  if (!modulePath.empty())
    modulePath.split(parts, '.');
  for (StringRef part : parts) {
    if (!owner.hasattr(part.str()) || !owner.attr(part.str()).isModule())
      return std::nullopt;
    owner = owner.attr(part.str()).toModule();
  }
  if (!owner.hasattr(name.str()) || !owner.attr(name.str()).isTensor())
    return std::nullopt;
  return owner.attr(name.str()).toTensor();
}

StateInitializer::~StateInitializer() = default;

std::string StateInitializer::getSyntax() const {
  std::string syntax = kind.str();
  if (argument == Argument::Optional)
    syntax += '[';
  if (argument != Argument::None)
    syntax +=
        (Twine(kInitializerArgumentSeparator) + "<" + argumentName + ">").str();
  if (argument == Argument::Optional)
    syntax += ']';
  return syntax;
}

FailureOr<at::Tensor>
StateInitializer::materialize(const StateRequest &request,
                              InitializerContext &) const {
  return emitError(request.loc, "'")
         << request.key << "': initializer \"" << kind
         << "\" describes state the model has, not new state";
}

LogicalResult StateInitializer::check(const StateRequest &, const at::Tensor &,
                                      InitializerContext &) const {
  return success();
}

void composer::registerStateInitializer(
    std::unique_ptr<StateInitializer> initializer) {
  StringRef kind = initializer->getKind();
  // Two methods claiming one kind would make export pick one of them by
  // static initialization order: a build error in any build type.
  if (!getRegistry().try_emplace(kind, std::move(initializer)).second)
    llvm::report_fatal_error(llvm::Twine("state initializer kind '") + kind +
                             "' registered twice");
}

const StateInitializer *
composer::lookupStateInitializer(llvm::StringRef initializer,
                                 llvm::StringRef &argument) {
  auto [kind, written] = splitInitializer(initializer);
  auto it = getRegistry().find(StringRef(kind));
  if (it == getRegistry().end())
    return nullptr;
  StateInitializer::Argument expected = it->second->getArgument();
  if (written ? written->empty() || expected == StateInitializer::Argument::None
              : expected == StateInitializer::Argument::Required)
    return nullptr;
  argument = written ? StringRef(*written) : StringRef();
  return it->second.get();
}

std::vector<const StateInitializer *> composer::getStateInitializers() {
  std::vector<const StateInitializer *> initializers;
  for (const auto &entry : getRegistry())
    initializers.push_back(entry.second.get());
  llvm::sort(initializers,
             [](const StateInitializer *a, const StateInitializer *b) {
               return a->getKind() < b->getKind();
             });
  return initializers;
}
