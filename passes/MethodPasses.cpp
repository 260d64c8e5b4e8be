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

/// The registered methods declared to keep accuracy; sorted likewise.
static std::vector<StringRef> &getAccuracyKeepers() {
  static std::vector<StringRef> keepers;
  return keepers;
}

static void insertSorted(std::vector<StringRef> &sorted, StringRef argument) {
  auto at = llvm::lower_bound(sorted, argument);
  if (at == sorted.end() || *at != argument)
    sorted.insert(at, argument);
}

MethodPassRegistration::MethodPassRegistration(
    ArrayRef<MethodPassDeclaration> declarations) {
  for (const MethodPassDeclaration &declaration : declarations) {
    insertSorted(getRegistry(), declaration.argument);
    if (declaration.keepsAccuracy)
      insertSorted(getAccuracyKeepers(), declaration.argument);
  }
}

bool composer::isMethodPass(StringRef argument) {
  return llvm::binary_search(getRegistry(), argument);
}

bool composer::methodKeepsAccuracy(StringRef argument) {
  return llvm::binary_search(getAccuracyKeepers(), argument);
}

ArrayRef<StringRef> composer::getMethodPassArguments() { return getRegistry(); }

static constexpr MethodPassDeclaration kComposerMethodPasses[] = {
#include "composer/Passes/MethodPasses.h.inc"
};
static MethodPassRegistration composerMethodPasses(kComposerMethodPasses);
