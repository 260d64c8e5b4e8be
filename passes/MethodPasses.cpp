//===- MethodPasses.cpp - the registry of method passes -------------------===//
//
// Which passes are methods is declared where each method's pass is
// (MethodPass in its .td), and registered from the library holding it: the
// composer library registers Passes.td's here, a pass plugin its own.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;
using namespace composer;

/// Sorted and without repeats. Constructed on first use, so that
/// registrations from other files' static initializers find it whatever
/// their order.
static std::vector<StringRef> &getRegistry() {
  static std::vector<StringRef> registry;
  return registry;
}

MethodPassRegistration::MethodPassRegistration(
    ArrayRef<llvm::StringLiteral> arguments) {
  std::vector<StringRef> &registry = getRegistry();
  for (StringRef argument : arguments) {
    auto at = llvm::lower_bound(registry, argument);
    if (at == registry.end() || *at != argument)
      registry.insert(at, argument);
  }
}

bool composer::isMethodPass(StringRef argument) {
  return llvm::binary_search(getRegistry(), argument);
}

ArrayRef<StringRef> composer::getMethodPassArguments() { return getRegistry(); }

static constexpr llvm::StringLiteral kComposerMethodPasses[] = {
#include "composer/Passes/MethodPasses.h.inc"
};
static MethodPassRegistration composerMethodPasses(kComposerMethodPasses);
