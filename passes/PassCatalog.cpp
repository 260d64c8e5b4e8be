//===- PassCatalog.cpp - the passes as data -------------------------------===//

#include "composer/Passes/PassCatalog.h"

using namespace composer;

#include "composer/Passes/PassCatalog.h.inc"

llvm::ArrayRef<PassDescription> composer::getComposerPassCatalog() {
  return kPassCatalog;
}
